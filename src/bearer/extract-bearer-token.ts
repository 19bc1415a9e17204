/**
 * @module extract-bearer-token
 * Reads the token from `Authorization: Bearer <token>` only (RFC 6750 §2.1). Framework-free.
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

/**
 * Whether a request presents a bearer token: one of its `Authorization` headers (raw header list,
 * name/value pairs) uses the `Bearer` scheme, well-formed or not. `requireActor()` sends such a
 * request down the bearer path, where a malformed header gets the bearer check's own answer.
 * @example
 * ```ts
 * presentsBearer(['Authorization', 'bearer eyJ...']) // true (RFC 7235 §2.1: the scheme is case-insensitive)
 * presentsBearer(['Authorization', 'Basic dTpw', 'Cookie', 'sid=1']) // false
 * ```
 */
export function presentsBearer(rawHeaders: readonly string[]): boolean {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length !== 13 || name.toLowerCase() !== 'authorization') continue;
    const value = rawHeaders[i + 1]!.trimStart();
    if (/^bearer(?:\s|$)/i.test(value)) return true;
  }
  return false;
}
