/**
 * @module token-standing
 * Whether a verified access token still stands: its account exists and is enabled, the credential it
 * was issued against (its `secret_id` claim names a secret or a public key) is known and live, and the
 * token itself is not on the deny-list. One rule, shared by `requireBearer()` and the introspection endpoint, so both always agree.
 * Framework-free; no allocation on the path that admits (the bearer check's hot path).
 */
import type { InvalidTokenReason } from '../errors.js';
import type { AccessTokenClaims } from './access-token.js';
import { findCredential } from '../store/account-credentials.js';
import type { AccountRecord, FederatedCredentialRecord, KeyRecord, SecretRecord } from '../store/account-store.js';

/**
 * The credential (secret, public key or federated credential) a standing token was issued against, or why the token no longer stands.
 *
 * @example
 * ```ts
 * declare const claims: AccessTokenClaims
 * const standing = tokenStanding(claims, account, runtime.revokedTokens.check(claims.jti) === true)
 * if (typeof standing === 'string') throw new InvalidTokenError(standing)
 * ```
 */
export function tokenStanding(
  claims: AccessTokenClaims,
  account: AccountRecord | undefined,
  tokenRevoked: boolean,
): SecretRecord | KeyRecord | FederatedCredentialRecord | InvalidTokenReason {
  // A deleted account or an unknown credential: the token no longer maps to anything.
  const credential = findCredential(account, claims.secret_id);
  if (account === undefined || credential === undefined) return 'invalid';
  if (tokenRevoked || credential.revokedAt !== null) return 'revoked';
  if (!account.enabled) return 'disabled';
  return credential;
}
