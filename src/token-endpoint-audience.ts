/**
 * @module token-endpoint-audience
 * The `acceptTokenEndpointAudience` option, resolved once: whether the token endpoint URL is also
 * accepted as the sole audience of a key-pair client assertion that is not explicitly typed
 * `client-authentication+jwt`, as the update to RFC 7523 on client authentication audiences allows
 * while clients move over (docs/private-key-jwt.md). The rule itself is client-auth/assertion-rules.ts's.
 */
import { fail } from './config-checks.js';

/**
 * The resolved `acceptTokenEndpointAudience`: off (`false`), the URL derived per request (`true`:
 * the issuer's origin, the path the token router is mounted on, and `/token`), or that URL as given.
 */
export type TokenEndpointAudienceSetting = boolean | string;

/**
 * Validates `acceptTokenEndpointAudience`: a boolean, or an absolute http(s) URL without query or fragment.
 *
 * @example
 * ```ts
 * resolveTokenEndpointAudience(undefined, 'https://api.example.com') // false
 * resolveTokenEndpointAudience('https://api.example.com/oauth/token', 'https://api.example.com') // the same string
 * ```
 */
export function resolveTokenEndpointAudience(value: unknown, issuer: string): TokenEndpointAudienceSetting {
  if (value === undefined) return false;
  if (value === true && parseUrl(issuer)?.pathname !== '/') {
    // Derived from the issuer's origin, the URL would be the same for every deployment under that
    // origin: one of them could then replay the others' assertions. Such a server names its URL.
    return fail('acceptTokenEndpointAudience', 'must be the token endpoint URL itself (not true) when the issuer has a path, as it cannot be derived from the origin alone');
  }
  if (typeof value === 'boolean') return value;
  const url = typeof value === 'string' ? parseUrl(value) : undefined;
  if (url && (url.protocol === 'https:' || url.protocol === 'http:') && !/[?#]/.test(value as string)) return value as string;
  return fail('acceptTokenEndpointAudience', 'must be a boolean or the absolute http(s) URL of the token endpoint, without query or fragment');
}

function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}
