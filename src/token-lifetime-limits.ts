/**
 * @module token-lifetime-limits
 * The bounds of the options that decide how long a token may be admitted (`tokenLifetime`,
 * `maxAccessTokenLifetime` and `clockTolerance`): what the configuration accepts, and the lifetime of a
 * token issued to one account (its `accessTokenLifetime` within the server's maximum).
 */

/** Longest token lifetime `tokenLifetime` accepts, in seconds (a day). */
export const MAX_TOKEN_LIFETIME = 86_400;

/** Largest `clockTolerance` accepted, in seconds. */
export const MAX_CLOCK_TOLERANCE = 300;

/**
 * The lifetime, in seconds, of a token issued to `account`: its own `accessTokenLifetime`, else the
 * server's `tokenLifetime`, never above the server's `maxAccessTokenLifetime` (a value stored by an
 * admin API with a higher maximum is cut to it, so the deny-list retention, which is derived from
 * that maximum, always outlives the token).
 *
 * @example
 * ```ts
 * const limits = { tokenLifetime: 3600, maxAccessTokenLifetime: 7200 }
 * accessTokenLifetimeOf({ accessTokenLifetime: 900 }, limits)   // 900
 * accessTokenLifetimeOf({ accessTokenLifetime: null }, limits)  // 3600
 * accessTokenLifetimeOf({ accessTokenLifetime: 86400 }, limits) // 7200
 * ```
 */
export function accessTokenLifetimeOf(
  account: { readonly accessTokenLifetime?: number | null },
  limits: { readonly tokenLifetime: number; readonly maxAccessTokenLifetime: number },
): number {
  const own = account.accessTokenLifetime;
  if (own === undefined || own === null) return limits.tokenLifetime;
  return Math.min(own, limits.maxAccessTokenLifetime);
}
