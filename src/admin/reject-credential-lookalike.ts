/**
 * @module reject-credential-lookalike
 * Keeps credentials out of the text fields every listing shows. An account's name and client account
 * ID are stored as given and then shown by `list`, in audit events, in `req.serviceAccount` and in
 * activity history: a secret pasted into one would be shown to everyone who reads those, and a name
 * that is exactly a client ID would pass for another account there.
 */
import { isClientIdShape } from '../credentials/generate-credentials.js';
import { looksLikeSecret } from '../credentials/redact-secrets.js';
import { AdminError } from './admin-errors.js';

/**
 * Returns `value` unchanged, or throws `invalid_input` when it contains anything like a client secret
 * or is exactly a client ID. Like a secret is a secret's start (`esas_`, its 16-character ID, `_`) in
 * any case, or 32 or more letters and digits in a row: a secret cut short, without its prefix or
 * upper-cased still gives most of it away. The
 * message names the field and the format, never the value.
 * @example
 * ```ts
 * const name = rejectCredentialLookalike('name', 'procurement-portal') // 'procurement-portal'
 * rejectCredentialLookalike('name', clientSecret) // throws AdminError invalid_input, without the value
 * ```
 */
export function rejectCredentialLookalike(field: string, value: string): string {
  if (looksLikeSecret(value)) {
    throw new AdminError(
      'invalid_input',
      `${field} must not contain a client secret (esas_...), whole or in part, in any case or without its prefix (nor 32 or more letters and digits in a row): ` +
        'it would be stored and shown in listings and audit logs. ' +
        'If a live secret was pasted, treat it as exposed and rotate it.',
    );
  }
  if (isClientIdShape(value)) {
    throw new AdminError(
      'invalid_input',
      `${field} must not be a client ID (esa_ and 24 letters or digits): audit logs show it next to client IDs, where it would pass for another account`,
    );
  }
  return value;
}
