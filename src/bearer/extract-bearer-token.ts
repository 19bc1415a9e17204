/**
 * @module extract-bearer-token
 * Reads the token from `Authorization: Bearer <token>` only (RFC 6750 §2.1). Framework-free.
 */
import { InvalidRequestError, MissingTokenError } from '../errors.js';

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
  const value = header.trim();
  const space = value.search(/\s/);
  const scheme = space < 0 ? value : value.slice(0, space);
  // RFC 7235 §2.1: the scheme is case-insensitive.
  if (scheme.toLowerCase() !== 'bearer') throw new MissingTokenError();
  const rest = space < 0 ? '' : value.slice(space).trim();
  if (rest === '') throw new InvalidRequestError('The Authorization header has no bearer token');
  if (/\s/.test(rest) || rest.includes(',')) throw new InvalidRequestError('The Authorization header must carry exactly one bearer token');
  return rest;
}
