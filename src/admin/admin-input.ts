/**
 * @module admin-input
 * Checks what callers give the admin API before anything reaches the store: account names, client
 * account IDs, scopes, resources and token policies. Refused input throws an `invalid_input` {@link AdminError}.
 */
import { AdminError } from './admin-errors.js';
import { rejectCredentialLookalike } from './reject-credential-lookalike.js';
import { isResourceIndicator, isScopeToken, MAX_RESOURCES, MAX_RESOURCE_LENGTH } from '../token-grant.js';
import { unsafeCharacter } from './printable-text.js';
import type { AccountPolicyChange } from '../store/account-store.js';
import type { CredentialExpiryInput } from './credential-expiry.js';

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
 *   resources: ['https://jobs.example.com'], // its tokens are for this API only (RFC 8707)
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
  /**
   * The resources (APIs) its tokens may be for (RFC 8707, docs/resources.md): absolute URIs without
   * fragment, or plain names; at most 20. None (the default): its tokens are for the server's
   * `audience`, as before resources existed.
   */
  resources?: readonly string[];
  /**
   * Its tokens' lifetime in seconds (`expires_in`), from 1 to the server's `maxAccessTokenLifetime`
   * (docs/account-policy.md). None or `null` (the default): the server's `tokenLifetime`.
   */
  accessTokenLifetime?: number | null;
  /**
   * Require DPoP-bound tokens (RFC 9449 §5.2 `dpop_bound_access_tokens`): a token request without a
   * DPoP proof is refused. @default false
   */
  dpopBoundAccessTokens?: boolean;
  /**
   * When its first secret expires (docs/rotation.md): `{ expiresIn: '90d' }` or `{ expiresAt }`.
   * Left out: never, unless the server's `maxCredentialLifetime` requires an expiry.
   */
  secret?: CredentialExpiryInput;
}

/** {@link CreateAccountInput}, checked and normalised. */
export interface CheckedAccountInput {
  readonly name: string;
  readonly clientAccountId: string | null;
  readonly scopes: string[];
  readonly resources: string[];
  readonly accessTokenLifetime: number | null;
  readonly dpopBoundAccessTokens: boolean;
}

/**
 * The most characters of a name or client account ID.
 * @example
 * ```ts
 * declare const name: string
 * if (name.length > MAX_TEXT_LENGTH) throw new AdminError('invalid_input', `name must be 1 to ${MAX_TEXT_LENGTH} printable characters`)
 * ```
 */
export const MAX_TEXT_LENGTH = 200;
/**
 * The most scopes an account may hold: every token carries them all, in the `scope` claim.
 * @example
 * ```ts
 * const scopes = ['jobs:write', 'candidates:read']
 * const fits = scopes.length <= MAX_SCOPES && scopes.join(' ').length <= MAX_SCOPES_LENGTH
 * ```
 */
export const MAX_SCOPES = 100;
/**
 * The most characters of an account's scopes written as one space-separated string (the `scope` claim).
 * @example
 * ```ts
 * const scopes = ['jobs:write', 'candidates:read']
 * const fits = scopes.join(' ').length <= MAX_SCOPES_LENGTH
 * ```
 */
export const MAX_SCOPES_LENGTH = 2000;

function checkText(field: string, value: unknown): string {
  const rule = `${field} must be 1 to ${MAX_TEXT_LENGTH} printable characters`;
  if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_TEXT_LENGTH) throw new AdminError('invalid_input', rule);
  const unsafe = unsafeCharacter(value);
  if (unsafe !== undefined) {
    throw new AdminError(
      'invalid_input',
      `${rule}: no control characters, bidirectional formatting characters, line or paragraph separators or unpaired surrogates (found ${unsafe})`,
    );
  }
  return value.trim();
}

const tooManyScopes = (): AdminError =>
  new AdminError('invalid_input', `scopes must be at most ${MAX_SCOPES} scopes of at most ${MAX_SCOPES_LENGTH} characters in all (separated by spaces): every token carries them`);

function checkScopes(value: CreateAccountInput['scopes']): string[] {
  if (value === undefined) return [];
  if (typeof value !== 'string' && !Array.isArray(value)) {
    throw new AdminError('invalid_input', 'scopes must be an array of strings or a space-separated string');
  }
  // Bounded before any work on it: a string or an array of any size may be passed in.
  if (value.length > (typeof value === 'string' ? MAX_SCOPES_LENGTH * 2 : MAX_SCOPES * 2)) throw tooManyScopes();
  // Scopes given but empty ('', ' ', [''] — an unset variable in a script, a blank form field) are
  // refused: read as none, they would make the account unrestricted. Leave `scopes` out for that.
  const scopes = typeof value === 'string' ? value.split(' ').filter((item) => item !== '') : [...value];
  if (typeof value === 'string' && scopes.length === 0) {
    throw new AdminError('invalid_input', 'scopes is empty: give at least one scope, or leave scopes out for an unrestricted account');
  }
  scopes.forEach((scope, i) => {
    // The scope itself is not repeated: it may be a secret pasted in the wrong place.
    if (!isScopeToken(scope)) {
      throw new AdminError('invalid_input', `scope ${i + 1} is not a scope: use printable ASCII without spaces, quotes or backslashes (RFC 6749 §3.3)`);
    }
    rejectCredentialLookalike('scopes', scope);
  });
  const unique = [...new Set(scopes as string[])];
  if (unique.length > MAX_SCOPES || unique.join(' ').length > MAX_SCOPES_LENGTH) throw tooManyScopes();
  return unique;
}

/**
 * Checks a {@link CreateAccountInput}: trimmed text fields free of credentials, scopes as RFC 6749
 * §3.3 scope tokens without duplicates, a token policy within `maxAccessTokenLifetime` (the server's
 * maximum). Throws `invalid_input` naming the field, never echoing a secret.
 *
 * @example
 * ```ts
 * const { name, clientAccountId, scopes } = checkAccountInput({ name: 'procurement-portal', scopes: 'jobs:write' }, 3600)
 * ```
 */
export function checkAccountInput(input: CreateAccountInput, maxAccessTokenLifetime: number): CheckedAccountInput {
  if (typeof input !== 'object' || input === null) throw new AdminError('invalid_input', 'createAccount needs { name }');
  const name = rejectCredentialLookalike('name', checkText('name', input.name));
  const clientAccountId =
    input.clientAccountId === undefined || input.clientAccountId === null
      ? null
      : rejectCredentialLookalike('clientAccountId', checkText('clientAccountId', input.clientAccountId));
  const policy = checkPolicy({ accessTokenLifetime: input.accessTokenLifetime ?? null, dpopBoundAccessTokens: input.dpopBoundAccessTokens ?? false }, maxAccessTokenLifetime);
  return {
    name,
    clientAccountId,
    scopes: checkScopes(input.scopes),
    resources: checkResources(input.resources ?? []),
    accessTokenLifetime: policy.accessTokenLifetime ?? null,
    dpopBoundAccessTokens: policy.dpopBoundAccessTokens ?? false,
  };
}

/**
 * Checks a list of resources (RFC 8707): an array of at most {@link MAX_RESOURCES} absolute URIs
 * without fragment or plain names, each at most {@link MAX_RESOURCE_LENGTH} characters; duplicates
 * are dropped, the order kept. An empty array means none. Throws `invalid_input` naming the item.
 *
 * @example
 * ```ts
 * checkResources(['https://billing.example.com', 'reports']) // the same list
 * checkResources(['https://a.example/#x'])                   // throws invalid_input: a fragment
 * ```
 */
export function checkResources(value: unknown): string[] {
  if (!Array.isArray(value)) throw new AdminError('invalid_input', 'resources must be an array of strings');
  const unique = [...new Set(value as unknown[])];
  if (unique.length > MAX_RESOURCES) throw new AdminError('invalid_input', `resources must be at most ${MAX_RESOURCES} resources`);
  unique.forEach((resource, i) => {
    if (!isResourceIndicator(resource)) {
      throw new AdminError(
        'invalid_input',
        `resources[${i}] must be an absolute URI without fragment (RFC 8707) or user information, or a plain name (letters, digits, '.', '_', '~', '-'), at most ${MAX_RESOURCE_LENGTH} characters`,
      );
    }
    rejectCredentialLookalike('resources', resource);
  });
  return unique as string[];
}

/**
 * Checks a change of token policy: `accessTokenLifetime` a whole number of seconds from 1 to
 * `maxAccessTokenLifetime` (the server's maximum), or `null` for the server's lifetime;
 * `dpopBoundAccessTokens` a boolean; at least one of them; nothing else. Throws `invalid_input`
 * naming the field.
 *
 * @example
 * ```ts
 * checkPolicy({ accessTokenLifetime: 900 }, 3600)  // { accessTokenLifetime: 900 }
 * checkPolicy({ accessTokenLifetime: 7200 }, 3600) // throws invalid_input: above the server's maximum
 * ```
 */
export function checkPolicy(value: unknown, maxAccessTokenLifetime: number): AccountPolicyChange {
  if (typeof value !== 'object' || value === null) throw new AdminError('invalid_input', 'the policy must be an object');
  const { accessTokenLifetime, dpopBoundAccessTokens, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) throw new AdminError('invalid_input', 'the policy has accessTokenLifetime and dpopBoundAccessTokens only');
  if (accessTokenLifetime === undefined && dpopBoundAccessTokens === undefined) {
    throw new AdminError('invalid_input', 'the policy must set accessTokenLifetime or dpopBoundAccessTokens');
  }
  if (
    accessTokenLifetime !== undefined &&
    accessTokenLifetime !== null &&
    (typeof accessTokenLifetime !== 'number' || !Number.isInteger(accessTokenLifetime) || accessTokenLifetime < 1 || accessTokenLifetime > maxAccessTokenLifetime)
  ) {
    throw new AdminError(
      'invalid_input',
      `accessTokenLifetime must be a whole number of seconds from 1 to ${maxAccessTokenLifetime} (the server's maxAccessTokenLifetime), or null for the server's tokenLifetime`,
    );
  }
  if (dpopBoundAccessTokens !== undefined && typeof dpopBoundAccessTokens !== 'boolean') {
    throw new AdminError('invalid_input', 'dpopBoundAccessTokens must be true or false');
  }
  return {
    ...(accessTokenLifetime !== undefined && { accessTokenLifetime: accessTokenLifetime as number | null }),
    ...(dpopBoundAccessTokens !== undefined && { dpopBoundAccessTokens: dpopBoundAccessTokens as boolean }),
  };
}
