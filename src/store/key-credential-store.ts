/**
 * @module key-credential-store
 * How the core reads key-pair credentials from any {@link AccountStore}, including one written before
 * stores held keys: a missing `keys` is no keys, and a store holds keys only with all four key methods.
 */
import type { AccountRecord, AccountStore, KeyRecord } from './account-store.js';

/**
 * An {@link AccountStore} that holds key-pair credentials: it has `addKey`, `revokeKey`,
 * `recordKeyUse` and `consumeAssertionId`.
 *
 * @example
 * ```ts
 * declare const jti: string // the ID of a verified client assertion
 * declare const expiresAt: Date // its `exp`
 * const first = supportsKeyCredentials(store) && (await store.consumeAssertionId(clientId, jti, expiresAt, new Date()))
 * ```
 */
export type KeyCredentialStore = AccountStore &
  Required<Pick<AccountStore, 'addKey' | 'revokeKey' | 'recordKeyUse' | 'consumeAssertionId'>>;

/**
 * Whether a store holds key-pair credentials (all four key methods present). A store written for an
 * earlier version has none of them: its accounts have secrets only.
 *
 * @example
 * ```ts
 * if (!supportsKeyCredentials(store)) throw new Error('this store cannot hold public keys')
 * ```
 */
export function supportsKeyCredentials(store: AccountStore): store is KeyCredentialStore {
  return (
    typeof store.addKey === 'function' &&
    typeof store.revokeKey === 'function' &&
    typeof store.recordKeyUse === 'function' &&
    typeof store.consumeAssertionId === 'function'
  );
}

/**
 * The keys of an account, live and revoked, oldest first; none when the store did not return `keys`.
 *
 * @example
 * ```ts
 * const liveKeys = keysOf(account).filter((key) => key.revokedAt === null)
 * ```
 */
export function keysOf(account: AccountRecord): readonly KeyRecord[] {
  return account.keys ?? [];
}

/**
 * The number of live (unrevoked) credentials of an account, secrets, keys and federated credentials together: what the
 * `maxSecretsPerAccount` cap counts.
 *
 * @example
 * ```ts
 * import { credentialLimitReached } from '../admin/admin-errors.js'
 *
 * const limit = config.maxSecretsPerAccount
 * if (countLiveCredentials(account) >= limit) throw credentialLimitReached('credential_limit_reached', account.clientId, limit) // adding a key
 * ```
 */
export function countLiveCredentials(account: AccountRecord): number {
  const live = (credentials: readonly { revokedAt: Date | null }[]): number =>
    credentials.filter((credential) => credential.revokedAt === null).length;
  return live(account.secrets) + live(keysOf(account)) + live(account.federated ?? []);
}
