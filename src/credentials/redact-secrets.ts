/**
 * @module redact-secrets
 * What a log, an event or an error message may show of a value a caller presented. Audit events and
 * admin error messages name the client ID or secret ID a caller typed; a caller who pasted a secret
 * there, whole or not (cut short, without its prefix, upper-cased, with a space around it), must not
 * find it written to a log, where the missing characters could be filled in. So a presented ID is
 * shown only when it has the form of an ID, and otherwise as "malformed" with a short fingerprint.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { isClientIdShape, SECRET_PREFIX } from './generate-credentials.js';

/** A secret's start: its prefix, 16-character ID and `_`, in any case. */
const SECRET_START = new RegExp(`${SECRET_PREFIX}[0-9a-z]{16}_`, 'i');

/**
 * Anything that could be a secret or part of one: a secret's start, or a run of 32 or more letters
 * and digits (a secret's random part has 50; a client ID's has 24, a secret ID's 16), with the
 * letters, digits and `_` after it. (Nothing unbounded before it, so the search stays linear.) A
 * secret ID alone is not secret: `list` shows it.
 */
const SECRET_LIKE = new RegExp(`(?:${SECRET_START.source}|[0-9a-z]{32})[0-9a-z_]*`, 'gi');

/**
 * Whether text holds a client secret's start (`esas_`, its 16-character ID, `_`, in any case): the
 * check for fields where long runs of letters and digits are legitimate (an outside token's subject
 * or audience), so {@link looksLikeSecret} would refuse real values.
 * @example
 * ```ts
 * containsSecretStart('repo:acme/billing:ref:refs/heads/main') // false
 * containsSecretStart(`repo:${clientSecret}`) // true
 * ```
 */
export function containsSecretStart(text: string): boolean {
  return SECRET_START.test(text);
}

/**
 * Whether text holds anything that could be a client secret or part of one (see {@link redactSecrets}).
 * @example
 * ```ts
 * looksLikeSecret('ESAS_0123456789ABCDEF_...') // true
 * looksLikeSecret('procurement-portal') // false
 * ```
 */
export function looksLikeSecret(text: string): boolean {
  SECRET_LIKE.lastIndex = 0;
  return SECRET_LIKE.test(text);
}

/** What a redacted secret becomes. */
export const REDACTED_SECRET = `${SECRET_PREFIX}[REDACTED]`;

/**
 * Keys the fingerprints: a random key per process, never stored or shown. A short unkeyed hash of a
 * secret could not be reversed either (a 32-bit fingerprint of a 262-bit secret has about 2^230
 * preimages), but anyone holding the log could test a guess against it, and a low-entropy value
 * typed into the wrong field (a password, a short ID) could be found by trying candidates. Keyed, a
 * fingerprint only tells whether two attempts seen by the same process presented the same value.
 */
const FINGERPRINT_KEY = randomBytes(32);

/**
 * Replaces anything that could be a client secret or part of one with `esas_[REDACTED]`: a secret's
 * start (`esas_`, its ID, `_`) in any case, or a run of 32 or more letters and digits. Client IDs and
 * secret IDs stay.
 * @example
 * ```ts
 * redactSecrets('esas_0123456789abcdef_...') // 'esas_[REDACTED]'
 * ```
 */
export function redactSecrets(text: string): string {
  return text.replace(SECRET_LIKE, REDACTED_SECRET);
}

/**
 * A short fingerprint of a presented value (8 hex digits of an HMAC-SHA-256 under a per-process key):
 * the same value gives the same fingerprint within one process, and nothing can be learned from it.
 * @example
 * ```ts
 * fingerprint('whatever was typed') // e.g. '3f9a0c12'
 * ```
 */
export function fingerprint(value: string): string {
  return createHmac('sha256', FINGERPRINT_KEY).update(value, 'utf8').digest('hex').slice(0, 8);
}

/**
 * How an event shows a presented client ID: itself when it has the form of a client ID (or named an
 * existing account), else only a fingerprint.
 * @example
 * ```ts
 * presentedClientId('esa_V1StGXR8Z5jdHi6BmyT0aQ2k') // { clientId: 'esa_V1StGXR8Z5jdHi6BmyT0aQ2k' }
 * presentedClientId('ESAS_...') // { malformedClientId: '3f9a0c12' }
 * ```
 */
export function presentedClientId(value: string, known = false): { clientId: string } | { malformedClientId: string } {
  return known || isClientIdShape(value) ? { clientId: value } : { malformedClientId: fingerprint(value) };
}

/**
 * How a message quotes a presented identifier: JSON-quoted when `wellFormed`, else a description with
 * only a fingerprint.
 * @example
 * ```ts
 * import { isClientIdShape } from './generate-credentials.js'
 *
 * quotePresented(clientId, isClientIdShape(clientId)) // '"esa_..."' or 'a malformed value (fingerprint 3f9a0c12)'
 * ```
 */
export function quotePresented(value: unknown, wellFormed: boolean): string {
  if (wellFormed && typeof value === 'string') return JSON.stringify(value);
  if (typeof value !== 'string') return `a ${value === null ? 'null' : typeof value} value`;
  return `a malformed value (fingerprint ${fingerprint(value)})`;
}
