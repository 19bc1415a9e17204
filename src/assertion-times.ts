/**
 * @module assertion-times
 * The time rules every client assertion shares, key-pair and outside issuer alike, beyond what `jose`
 * checks (`exp` passed, `nbf` reached): it may not live longer than allowed, so a stolen one is of use
 * for minutes at most, and it may not claim to be issued in the future.
 */

/** What the rules need: now, the clock tolerance and the longest lifetime left accepted, in seconds. */
export interface AssertionTimeRules {
  readonly now: Date;
  readonly clockTolerance: number;
  readonly maxLifetime: number;
}

/**
 * Whether an assertion's `exp` lies at most `maxLifetime` seconds ahead and its `iat`, when present,
 * not in the future (each with the clock tolerance: `maxLifetime + clockTolerance` in all, for a
 * signer whose clock runs ahead; the documented bound). `exp` is required and checked by `jose` first.
 *
 * @example
 * ```ts
 * const now = new Date()
 * const seconds = Math.floor(now.getTime() / 1000)
 * withinAssertionTimes({ exp: seconds + 600, iat: seconds }, { now, clockTolerance: 5, maxLifetime: 3600 }) // true
 * withinAssertionTimes({ exp: seconds + 7200 }, { now, clockTolerance: 5, maxLifetime: 3600 }) // false
 * ```
 */
export function withinAssertionTimes(claims: { readonly exp?: number; readonly iat?: number }, rules: AssertionTimeRules): boolean {
  const now = rules.now.getTime() / 1000;
  if (typeof claims.exp !== 'number' || claims.exp > now + rules.maxLifetime + rules.clockTolerance) return false;
  return claims.iat === undefined || claims.iat <= now + rules.clockTolerance;
}
