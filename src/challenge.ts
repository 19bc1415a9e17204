/**
 * @module challenge
 * The one builder of `WWW-Authenticate` values (RFC 7235 §4.1, RFC 6750 §3).
 */

/** Quotes a value as an RFC 7230 quoted-string: backslash and double quote are escaped. */
function quote(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * Builds a challenge such as `Bearer realm="api", error="invalid_token"`. Parameters whose value is
 * `undefined` are left out; every value is quoted and escaped.
 *
 * @example
 * ```ts
 * formatChallenge('Basic', { realm: 'service-accounts' }) // 'Basic realm="service-accounts"'
 * ```
 */
export function formatChallenge(scheme: 'Basic' | 'Bearer' | 'DPoP', params: Record<string, string | undefined>): string {
  const parts = Object.entries(params)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `${name}=${quote(value)}`);
  return parts.length > 0 ? `${scheme} ${parts.join(', ')}` : scheme;
}
