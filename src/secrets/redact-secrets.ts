/**
 * @module redact-secrets
 * Removes anything shaped like a client secret from text bound for logs: audit events and admin
 * error messages echo identifiers a caller typed, and a caller who pasted a secret into the client ID
 * field (or a secret ID argument) must not see it written to a log.
 */
import { SECRET_PREFIX } from './generate-credentials.js';

/** Every secret-shaped run (same shape as SECRET_PATTERN, global). */
const SECRET_SHAPES = /esas_[0-9A-Za-z]{16}_[0-9A-Za-z]{50}/g;

/** What a redacted secret becomes. */
export const REDACTED_SECRET = `${SECRET_PREFIX}[REDACTED]`;

/**
 * Replaces every secret-shaped substring with `esas_[REDACTED]`.
 * @example
 * ```ts
 * redactSecrets('esas_0123456789abcdef_...') // 'esas_[REDACTED]'
 * ```
 */
export function redactSecrets(text: string): string {
  return text.replace(SECRET_SHAPES, REDACTED_SECRET);
}
