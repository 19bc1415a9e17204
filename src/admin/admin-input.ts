/**
 * @module admin-input
 * Checks what callers give the admin API before anything reaches the store: account names, client
 * account IDs and scopes. Refused input throws an `invalid_input` {@link AdminError}.
 */
import { AdminError } from './admin-errors.js';
import { rejectCredentialLookalike } from './reject-credential-lookalike.js';
import { parseScopeList } from '../scopes.js';

/**
 * Input of {@link AdminApi.createAccount}.
 *
 * @example
 * ```ts
 * import type { CreateAccountInput } from 'express-service-accounts'
 *
 * const input: CreateAccountInput = {
 *   name: 'procurement-portal',
 *   clientAccountId: 'acme-corp',
 *   scopes: 'jobs:read jobs:write', // or ['jobs:read', 'jobs:write']
 * }
 * const account = await sa.admin.createAccount(input)
 * ```
 */
export interface CreateAccountInput {
  /**
   * Shown in audit logs and activity history; 1–200 printable characters. Refused (`invalid_input`)
   * when it contains a client secret anywhere or is exactly a client ID.
   */
  name: string;
  /**
   * The client account (your customer or tenant) the service account acts for;
   * `req.serviceAccount.clientAccountId`. Refused like `name` when it holds a credential.
   */
  clientAccountId?: string | null;
  /** Allowed scopes (an array, or one space-separated string); none means unrestricted. */
  scopes?: readonly string[] | string;
}

/** {@link CreateAccountInput}, checked and normalised. */
export interface CheckedAccountInput {
  readonly name: string;
  readonly clientAccountId: string | null;
  readonly scopes: string[];
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

function checkText(field: string, value: unknown, max: number): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > max || CONTROL.test(value)) {
    throw new AdminError('invalid_input', `${field} must be 1 to ${max} printable characters`);
  }
  return value.trim();
}

function checkScopes(value: CreateAccountInput['scopes']): string[] {
  if (value === undefined) return [];
  if (typeof value !== 'string' && !Array.isArray(value)) {
    throw new AdminError('invalid_input', 'scopes must be an array of strings or a space-separated string');
  }
  const scopes = parseScopeList(
    value,
    (s) => new AdminError('invalid_input', `invalid scope ${JSON.stringify(s)}: use printable ASCII without spaces, quotes or backslashes (RFC 6749 §3.3)`),
  );
  return [...new Set(scopes)];
}

/**
 * Checks a {@link CreateAccountInput}: trimmed text fields free of credentials, scopes as RFC 6749
 * §3.3 scope tokens without duplicates. Throws `invalid_input` naming the field, never echoing a secret.
 *
 * @example
 * ```ts
 * const { name, clientAccountId, scopes } = checkAccountInput({ name: 'procurement-portal', scopes: 'jobs:write' })
 * ```
 */
export function checkAccountInput(input: CreateAccountInput): CheckedAccountInput {
  if (typeof input !== 'object' || input === null) throw new AdminError('invalid_input', 'createAccount needs { name }');
  const name = rejectCredentialLookalike('name', checkText('name', input.name, 200));
  const clientAccountId =
    input.clientAccountId === undefined || input.clientAccountId === null
      ? null
      : rejectCredentialLookalike('clientAccountId', checkText('clientAccountId', input.clientAccountId, 200));
  return { name, clientAccountId, scopes: checkScopes(input.scopes) };
}
