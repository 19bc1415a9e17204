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
 * Whether `credential` is live and trusts exactly what `trust` names: the same issuer, subject and
 * audience (`null`, the server's issuer identifier, equal only to `null`). A second such credential on
 * one account is a duplicate.
 *
 * @example
 * ```ts
 * declare const credential: FederatedCredentialRecord // or the new one about to be stored
 * const duplicate = federatedOf(account).some((existing) => isLiveTwin(existing, credential))
 * ```
 */
export function isLiveTwin(
  credential: FederatedCredentialRecord,
  trust: Pick<FederatedCredentialRecord, 'issuer' | 'subject' | 'audience'>,
): boolean {
  return credential.revokedAt === null && credential.issuer === trust.issuer && credential.subject === trust.subject && credential.audience === trust.audience;
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
