/**
 * @module extract-bearer-token
 * Reads the token from `Authorization: Bearer <token>` (RFC 6750 §2.1) or `Authorization: DPoP
 * <token>` (RFC 9449 §7.1), and is the one place
 * that looks for `Authorization` in a request's raw header list (Node's `headers.authorization`
 * keeps only the first of several). Framework-free.
 */
import { InvalidRequestError, MissingTokenError } from '../errors.js';

/** Whitespace or a comma: never part of a single token. */
const NOT_TOKEN_CHAR = /[\s,]/;

/**
 * Returns the bearer token of an `Authorization` header value.
 * @throws {MissingTokenError} no header, or another scheme (401 without an `error` attribute, RFC 6750 §3.1)
 * @throws {InvalidRequestError} `Bearer` with no token, or more than one (400)
 * @example
 * ```ts
 * extractBearerToken('Bearer eyJ...') // 'eyJ...'
 * ```
 */
export function extractBearerToken(header: string | undefined): string {
  if (header === undefined) throw new MissingTokenError();
  // The usual form, "Bearer <token>" with nothing else: no copies beyond the token itself.
  if (header.length > 7 && header.startsWith('Bearer ')) {
    const token = header.slice(7);
    if (!NOT_TOKEN_CHAR.test(token)) return token;
  }
  const value = header.trim();
  const space = value.search(/\s/);
  const scheme = space < 0 ? value : value.slice(0, space);
  // RFC 7235 §2.1: the scheme is case-insensitive.
  if (scheme.toLowerCase() !== 'bearer') throw new MissingTokenError();
  const rest = space < 0 ? '' : value.slice(space).trim();
  if (rest === '') throw new InvalidRequestError('The Authorization header has no bearer token', { challenge: 'Bearer' });
  if (NOT_TOKEN_CHAR.test(rest)) throw new InvalidRequestError('The Authorization header must carry exactly one bearer token', { challenge: 'Bearer' });
  return rest;
}

/** `DPoP`, alone or followed by whitespace, in any case (RFC 7235 §2.1). Alone, it is a DPoP header without its token. */
const DPOP_SCHEME = /^dpop(?:\s|$)/i;

/**
 * Whether an `Authorization` value uses the `DPoP` scheme (RFC 9449 §7.1). Cheap: the Bearer path
 * pays one character comparison.
 * @example
 * ```ts
 * usesDpopScheme('DPoP eyJ...') // true
 * usesDpopScheme('DPoP') // true (no token: extractDpopToken refuses it, 400)
 * usesDpopScheme('Bearer eyJ...') // false
 * ```
 */
export function usesDpopScheme(header: string): boolean {
  const first = header.charCodeAt(0);
  return (first === 68 || first === 100) && DPOP_SCHEME.test(header);
}

/**
 * Returns the access token of an `Authorization: DPoP <token>` value (see {@link usesDpopScheme}).
 * @throws {InvalidRequestError} no token, or more than one (400)
 * @example
 * ```ts
 * extractDpopToken('DPoP eyJ...') // 'eyJ...'
 * ```
 */
export function extractDpopToken(header: string): string {
  const rest = header.slice(4).trim();
  if (rest === '') throw new InvalidRequestError('The Authorization header has no DPoP access token', { challenge: 'Bearer' });
  if (NOT_TOKEN_CHAR.test(rest)) throw new InvalidRequestError('The Authorization header must carry exactly one access token', { challenge: 'Bearer' });
  return rest;
}

/**
 * Index, in a raw header list (name/value pairs, as Node's `rawHeaders`), of the first `Authorization`
 * header name at or after the pair starting at `from`; -1 when there is none.
 */
function nextAuthorization(rawHeaders: readonly string[], from: number): number {
  for (let i = from; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') return i;
  }
  return -1;
}

/**
 * Whether the raw header list holds more than one `Authorization` header. `requireBearer()` refuses
 * such a request (RFC 6750 §2: one method, one token).
 * @example
 * ```ts
 * hasRepeatedAuthorization(['Authorization', 'Bearer a', 'authorization', 'Bearer b']) // true
 * hasRepeatedAuthorization(['Authorization', 'Bearer a']) // false
 * ```
 */
export function hasRepeatedAuthorization(rawHeaders: readonly string[]): boolean {
  const first = nextAuthorization(rawHeaders, 0);
  return first >= 0 && nextAuthorization(rawHeaders, first + 2) >= 0;
}

/**
 * Whether a request presents a bearer token: one of its `Authorization` headers (raw header list,
 * name/value pairs) uses the `Bearer` or `DPoP` scheme, well-formed or not. `requireActor()` sends such a
 * request down the bearer path, where a malformed header gets the bearer check's own answer.
 * @example
 * ```ts
 * presentsBearer(['Authorization', 'bearer eyJ...']) // true (RFC 7235 §2.1: the scheme is case-insensitive)
 * presentsBearer(['Authorization', 'Basic dTpw', 'Cookie', 'sid=1']) // false
 * ```
 */
export function presentsBearer(rawHeaders: readonly string[]): boolean {
  for (let i = nextAuthorization(rawHeaders, 0); i >= 0; i = nextAuthorization(rawHeaders, i + 2)) {
    if (/^(?:bearer|dpop)(?:\s|$)/i.test(rawHeaders[i + 1]!.trimStart())) return true;
  }
  return false;
}
