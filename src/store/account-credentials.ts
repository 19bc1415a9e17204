/**
 * @module account-credentials
 * Finding one credential of an account by its ID: a secret, a public key or a federated credential. A token carries the ID of
 * the credential it was issued against (the `secret_id` claim, for either kind), so revoking that
 * credential revokes the token. Plain loops: these run on every protected request.
 */
import type { AccountRecord, FederatedCredentialRecord, KeyRecord, SecretRecord } from './account-store.js';

/**
 * The account's secret with this ID.
 *
 * @example
 * ```ts
 * const secret = findSecret(account, 'a1B2c3D4e5F6g7H8')
 * if (secret?.revokedAt === null) console.log('live')
 * ```
 */
export function findSecret(account: AccountRecord | undefined, id: string): SecretRecord | undefined {
  if (account) for (const secret of account.secrets) if (secret.id === id) return secret;
  return undefined;
}

/**
 * The account's public key with this ID (an account from a store without keys has none).
 *
 * @example
 * ```ts
 * const key = findKey(account, 'esak_a1B2c3D4e5F6g7H8')
 * if (key?.revokedAt === null) console.log('live')
 * ```
 */
export function findKey(account: AccountRecord | undefined, id: string): KeyRecord | undefined {
  const keys = account?.keys;
  if (keys) for (const key of keys) if (key.id === id) return key;
  return undefined;
}

/**
 * The account's federated credential with this ID (an account from a store without them has none).
 *
 * @example
 * ```ts
 * const credential = findFederated(account, 'esaf_a1B2c3D4e5F6g7H8')
 * if (credential?.revokedAt === null) console.log('live')
 * ```
 */
export function findFederated(account: AccountRecord | undefined, id: string): FederatedCredentialRecord | undefined {
  const federated = account?.federated;
  if (federated) for (const credential of federated) if (credential.id === id) return credential;
  return undefined;
}

/**
 * The account's secret, public key or federated credential with this ID: what a token's `secret_id` claim names.
 *
 * @example
 * ```ts
 * declare const claims: AccessTokenClaims // of a verified access token
 * const credential = findCredential(await store.findAccount(claims.sub), claims.secret_id)
 * const revoked = credential === undefined || credential.revokedAt !== null
 * ```
 */
export function findCredential(account: AccountRecord | undefined, id: string): SecretRecord | KeyRecord | FederatedCredentialRecord | undefined {
  return findSecret(account, id) ?? findKey(account, id) ?? findFederated(account, id);
}
