/**
 * @module basic-credentials
 * HTTP Basic client credentials decoded the way RFC 6749 §2.3.1 and Appendix B require: the client ID
 * and secret are each form-urlencoded before base64, so a `:` `%` `+` or non-ASCII character survives.
 * The one decoder of Basic client credentials (passport-http splits at every `:` and decodes nothing, so it never
 * decodes ours: see client-strategies.ts). Framework-free.
 */

/** The result of reading an `Authorization` header for Basic credentials. */
export type BasicCredentials =
  | { readonly kind: 'absent' }
  | { readonly kind: 'malformed' }
  | { readonly kind: 'present'; readonly clientId: string; readonly secret: string };

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** application/x-www-form-urlencoded decoding of one value ('+' is a space). */
function formDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/**
 * Reads Basic credentials from an `Authorization` header value. The scheme is case-insensitive (RFC 7235).
 * @example
 * ```ts
 * parseBasicAuthorization('Basic ' + btoa('esa_abc:esas_...')) // { kind: 'present', clientId: 'esa_abc', secret: 'esas_...' }
 * ```
 */
export function parseBasicAuthorization(header: string | undefined): BasicCredentials {
  if (header === undefined) return { kind: 'absent' };
  const match = /^([A-Za-z]+)(?: +(.*))?$/.exec(header.trim());
  if (!match || match[1]!.toLowerCase() !== 'basic') return { kind: 'absent' };
  const token = match[2]?.trim() ?? '';
  if (!BASE64.test(token) || token.length % 4 === 1) return { kind: 'malformed' };
  const decoded = Buffer.from(token, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return { kind: 'malformed' };
  const clientId = formDecode(decoded.slice(0, colon));
  const secret = formDecode(decoded.slice(colon + 1));
  if (!clientId || !secret) return { kind: 'malformed' };
  return { kind: 'present', clientId, secret };
}
