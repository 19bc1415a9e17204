/**
 * @module token-endpoint-audience
 * The audience a key-pair client assertion (`private_key_jwt`) must carry: this server's issuer
 * identifier as its sole value (the update to RFC 7523 on client authentication audiences, which
 * closes the audience-injection attack). With the `acceptTokenEndpointAudience` option, the token
 * endpoint URL is also accepted as the sole value, for assertions that are not explicitly typed
 * `client-authentication+jwt`, as that update allows while clients move over (docs/private-key-jwt.md).
 * Framework-free.
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
 * resolveTokenEndpointAudience(undefined) // false
 * resolveTokenEndpointAudience('https://api.example.com/oauth/token') // the same string
 * ```
 */
export function resolveTokenEndpointAudience(value: unknown): TokenEndpointAudienceSetting {
  if (value === undefined) return false;
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

/**
 * The token endpoint URL accepted as an audience on a request to the router mounted at `mountPath`
 * (Express's `req.baseUrl`, such as `/oauth`), or `undefined` when the setting is off.
 *
 * @example
 * ```ts
 * tokenEndpointAudienceOf(true, 'https://api.example.com', '/oauth') // 'https://api.example.com/oauth/token'
 * tokenEndpointAudienceOf('https://example.com/auth/oauth/token', 'https://api.example.com', '/oauth') // 'https://example.com/auth/oauth/token'
 * ```
 */
export function tokenEndpointAudienceOf(setting: TokenEndpointAudienceSetting, issuer: string, mountPath: string | undefined): string | undefined {
  if (setting === false) return undefined;
  if (typeof setting === 'string') return setting;
  return `${new URL(issuer).origin}${mountPath ?? ''}/token`;
}

/**
 * Whether a JWT's `typ` header types it explicitly as a client authentication assertion:
 * `client-authentication+jwt`, with or without the `application/` prefix, in any case (RFC 7515 §4.1.9).
 *
 * @example
 * ```ts
 * isExplicitlyTyped('client-authentication+jwt') // true
 * isExplicitlyTyped('JWT') // false
 * ```
 */
export function isExplicitlyTyped(typ: unknown): boolean {
  if (typeof typ !== 'string') return false;
  const type = typ.toLowerCase();
  return type === 'client-authentication+jwt' || type === 'application/client-authentication+jwt';
}

/**
 * Whether `aud` (a string or a one-element list) is an audience a key-pair assertion may carry: the
 * issuer identifier; or `tokenEndpoint`, when given, for an assertion not explicitly typed (a typed
 * one was made by a client that knows the issuer is the audience).
 *
 * @example
 * ```ts
 * const rules = { issuer: 'https://api.example.com', tokenEndpoint: 'https://api.example.com/oauth/token' }
 * isAcceptedAudience(['https://api.example.com'], 'JWT', rules) // true
 * isAcceptedAudience('https://api.example.com/oauth/token', undefined, rules) // true
 * isAcceptedAudience('https://api.example.com/oauth/token', 'client-authentication+jwt', rules) // false
 * ```
 */
export function isAcceptedAudience(aud: unknown, typ: unknown, rules: { readonly issuer: string; readonly tokenEndpoint?: string | undefined }): boolean {
  const audience = Array.isArray(aud) && aud.length === 1 ? aud[0] : aud;
  if (audience === rules.issuer) return true;
  return rules.tokenEndpoint !== undefined && audience === rules.tokenEndpoint && !isExplicitlyTyped(typ);
}
