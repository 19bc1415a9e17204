/**
 * @module federated-credential-store
 * How the core reads federated credentials from any {@link AccountStore}, including one written before
 * stores held them: a missing `federated` is none, and a store holds them only with all five methods.
 */
import type { AccountRecord, AccountStore, FederatedCredentialRecord } from './account-store.js';

/**
 * An {@link AccountStore} that holds federated credentials: it has `addFederatedCredential`,
 * `revokeFederatedCredential`, `recordFederatedCredentialUse`, `findFederatedClients` and
 * `consumeAssertionId`.
 *
 * @example
 * ```ts
 * const clientIds = supportsFederatedCredentials(store) ? await store.findFederatedClients('https://token.actions.githubusercontent.com', 'repo:acme/billing:ref:refs/heads/main', 2) : []
 * ```
 */
export type FederatedCredentialStore = AccountStore &
  Required<
    Pick<AccountStore, 'addFederatedCredential' | 'revokeFederatedCredential' | 'recordFederatedCredentialUse' | 'findFederatedClients' | 'consumeAssertionId'>
  >;

/**
 * Whether a store holds federated credentials (all five methods present).
 *
 * @example
 * ```ts
 * if (!supportsFederatedCredentials(store)) throw new Error('this store cannot hold federated credentials')
 * ```
 */
export function supportsFederatedCredentials(store: AccountStore): store is FederatedCredentialStore {
  return (
    typeof store.addFederatedCredential === 'function' &&
    typeof store.revokeFederatedCredential === 'function' &&
    typeof store.recordFederatedCredentialUse === 'function' &&
    typeof store.findFederatedClients === 'function' &&
    typeof store.consumeAssertionId === 'function'
  );
}

/**
 * The federated credentials of an account, live and revoked, oldest first; none when the store did not return `federated`.
 *
 * @example
 * ```ts
 * const trusted = federatedOf(account).filter((credential) => credential.revokedAt === null)
 * ```
 */
export function federatedOf(account: AccountRecord): readonly FederatedCredentialRecord[] {
  return account.federated ?? [];
}
