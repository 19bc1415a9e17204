/**
 * @module revoke-token-by-id
 * The admin API's token revocation by ID: an operator revokes one access token named in an audit line,
 * without the token itself. Issued tokens are not stored, so the entry is kept for the longest a token
 * of the server can be admitted (its token lifetime plus clock tolerance), whatever its real expiry.
 * Operators are not held to a client's cap on revocations (`maxRevokedTokensPerClient`).
 */
import type { AuditEventInput } from '../audit/audit-events.js';
import { revokedTokenChangeKey } from '../store/revoked-token-change.js';
import { looksLikeSecret } from '../credentials/redact-secrets.js';
import { AdminError } from './admin-errors.js';
import type { ResolvedAdminConfig } from '../admin-options.js';
import type { RevokedToken } from './admin-summaries.js';

// eslint-disable-next-line no-control-regex
const TOKEN_ID = /^[^\u0000-\u0020\u007f]{1,256}$/;

/** What the admin API lends the call. */
export interface RevokeTokenParts {
  readonly config: ResolvedAdminConfig;
  /** Told the change key at once, so this instance refuses the token before the store's announcement. */
  readonly changed: (key: string) => void;
  readonly audit: (event: AuditEventInput) => void;
  readonly call: <T>(what: string, fn: () => Promise<T>) => Promise<T>;
}

/**
 * Adds the token ID to the store's deny-list.
 * @throws {AdminError} `invalid_input` for an ID that is not 1–256 printable characters without spaces
 *
 * @example
 * ```ts
 * const parts: RevokeTokenParts = {
 *   config,
 *   changed: (key) => runtime.accounts.invalidate(key),
 *   audit: runtime.audit,
 *   call: (_what, fn) => fn(),
 * }
 * const { revokedAt } = await revokeTokenById('0f6a1c2e-58b4-4f59-9a57-2c1d6a1c9e3b', parts)
 * ```
 */
export async function revokeTokenById(tokenId: string, parts: RevokeTokenParts): Promise<RevokedToken> {
  const { config, changed, audit, call } = parts;
  if (typeof tokenId !== 'string' || !TOKEN_ID.test(tokenId)) {
    throw new AdminError('invalid_input', 'a token ID must be 1 to 256 printable characters without spaces');
  }
  // A token ID is the jti of a token (a UUID): a client secret or a piece of an access token pasted here
  // would be stored in the deny-list and named by the audit event, so it is refused without being repeated.
  if (looksLikeSecret(tokenId)) {
    throw new AdminError(
      'invalid_input',
      'a token ID is the jti claim of a token (the tokenId of an audit line), such as 0f6a1c2e-58b4-4f59-9a57-2c1d6a1c9e3b: ' +
        'this looks like a client secret or an access token instead. If a live secret was pasted, treat it as exposed and rotate it.',
    );
  }
  const { store } = config;
  if (!store.revokeToken || !store.listRevokedTokens) throw new AdminError('not_supported', 'This account store cannot revoke single tokens: it lacks revokeToken or listRevokedTokens (see docs/writing-a-store.md)');
  const revokedAt = config.now();
  // A token issued before now expires within the lifetime, and is admitted a clock tolerance longer.
  const record = { tokenId, clientId: null, revokedAt, expiresAt: new Date(revokedAt.getTime() + config.revokedTokenRetention * 1000) };
  // No client is named, so no cap applies (and 'limit_reached' cannot come back).
  const stored = await call('revokeToken', () => store.revokeToken!(record));
  if (stored === 'limit_reached') throw new Error('The account store refused a token revocation that names no client');
  changed(revokedTokenChangeKey(stored));
  audit({ type: 'token.revoked', tokenId, by: 'operator', ...(stored.clientId !== null ? { clientId: stored.clientId } : {}) });
  return { tokenId, revokedAt: stored.revokedAt };
}
