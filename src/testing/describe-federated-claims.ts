/**
 * @module describe-federated-claims
 * The contract tests of claim conditions on federated credentials: a store keeps the `claims` it is
 * given with a credential, exactly and in their order, and gives them back from `addFederatedCredential`,
 * `findAccount`, `listAccounts` and `revokeFederatedCredential`. They run when the store holds federated
 * credentials; a store that gives a credential back without its conditions (one written before them)
 * is reported skipped, and the admin API refuses to register conditions with it.
 */
import type { FederatedCredentialRecord } from '../store/account-store.js';
import { federatedOf } from '../store/credential-kinds.js';
import { skipRunningTest } from './account-store-test-api.js';
import { kindStore } from './describe-credential-life.js';
import { heldTest, type DescribeStorePart } from './store-holding.js';
import { cap } from './contract-fixtures.js';

const ROOM = cap(100);
const NO_CLAIMS = 'the store gives federated credentials back without their claim conditions (claims)';

/** Conditions that exercise the edges: a JSON Pointer with escapes, a value with `=` and non-ASCII text, a name like `__proto__`. */
const CONDITIONS: Readonly<Record<string, string>> = Object.fromEntries([
  ['repository_owner', 'acme'],
  ['/kubernetes.io/namespace', 'payments'],
  ['/a~1b/c~0d', 'x=y'],
  ['environment', 'producción'],
  ['__proto__', 'kept as a plain name'],
]);

/**
 * Registers the claim condition tests in a `describe('federated claim conditions')` of the enclosing
 * suite, on the store `currentStore()` returns. `describeAccountStore` calls it.
 *
 * @example
 * ```ts
 * import { describe, expect, it } from 'vitest'
 * import { IdFactory } from './contract-fixtures.js'
 *
 * describeFederatedClaims(() => store, new IdFactory(), { describe, it, expect })
 * ```
 */
export const describeFederatedClaims: DescribeStorePart = (currentStore, ids, { describe, it, expect }) => {
  const federatedStore = kindStore(currentStore, 'federated');
  /** The conditions of `credential`, in their order, as [name, value] pairs (own properties only). */
  const pairs = (credential: FederatedCredentialRecord | undefined) => Object.entries(credential?.claims ?? {});

  describe('federated claim conditions', () => {
    it('addFederatedCredential keeps claims exactly and in order; findAccount, listAccounts and revokeFederatedCredential return them', heldTest(federatedStore, async (store, testArguments) => {
      const account = await store.createAccount(ids.account());
      const credential = ids.federated({ claims: CONDITIONS });
      const added = await store.addFederatedCredential(account.clientId, credential, ROOM);
      if (typeof added !== 'object') throw new Error(`addFederatedCredential answered ${String(added)}`);
      if (added.claims === undefined) return skipRunningTest(testArguments, NO_CLAIMS);
      expect(pairs(added)).toEqual(Object.entries(CONDITIONS));
      expect(Object.getPrototypeOf(added.claims)).toBe(Object.prototype);
      const found = federatedOf((await store.findAccount(account.clientId))!).find((c) => c.id === credential.id);
      expect(pairs(found)).toEqual(Object.entries(CONDITIONS));
      const listed = (await store.listAccounts()).find((a) => a.clientId === account.clientId);
      expect(pairs(federatedOf(listed!).find((c) => c.id === credential.id))).toEqual(Object.entries(CONDITIONS));
      const revoked = await store.revokeFederatedCredential(account.clientId, credential.id, ids.time());
      expect(pairs(revoked)).toEqual(Object.entries(CONDITIONS));
    }));

    it('a credential added without claims has none (claims absent or empty), beside one that has them', heldTest(federatedStore, async (store, testArguments) => {
      const account = await store.createAccount(ids.account());
      const plain = ids.federated();
      const conditioned = ids.federated({ claims: { environment: 'production' } });
      await store.addFederatedCredential(account.clientId, plain, ROOM);
      const added = await store.addFederatedCredential(account.clientId, conditioned, ROOM);
      if (typeof added === 'object' && added.claims === undefined) return skipRunningTest(testArguments, NO_CLAIMS);
      const held = federatedOf((await store.findAccount(account.clientId))!);
      expect(pairs(held.find((c) => c.id === plain.id))).toEqual([]);
      expect(pairs(held.find((c) => c.id === conditioned.id))).toEqual([['environment', 'production']]);
    }));
  });
};
