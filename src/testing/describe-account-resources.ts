/**
 * @module describe-account-resources
 * The contract tests of account resources (RFC 8707 resource indicators): `resources` given to
 * `createAccount` and changed by the optional `setAccountResources`. They run when the store has the
 * method, and are reported skipped otherwise.
 */
import { announcedTest, heldTest, storeWithMethod, type DescribeStorePart } from './store-holding.js';

/**
 * Registers the resource tests in a `describe('account resources')` of the enclosing suite, on the
 * store `currentStore()` returns.
 *
 * @example
 * ```ts
 * import { describe, expect, it } from 'vitest'
 * import { IdFactory } from './contract-fixtures.js'
 *
 * describeAccountResources(() => store, new IdFactory(), { describe, it, expect })
 * ```
 */
export const describeAccountResources: DescribeStorePart = (currentStore, ids, { describe, it, expect }) => {
  /** The store when it has setAccountResources; otherwise marks the running test skipped and returns undefined. */
  const resourceStore = storeWithMethod(currentStore, 'setAccountResources');

  describe('account resources', () => {
    it('createAccount keeps the resources in their order; findAccount and listAccounts return them', heldTest(resourceStore, async (store) => {
      const input = ids.account({ resources: ['https://billing.example.com/', 'reports'] });
      const created = await store.createAccount(input);
      expect(created.resources).toEqual(['https://billing.example.com/', 'reports']);
      expect((await store.findAccount(input.clientId))?.resources).toEqual(['https://billing.example.com/', 'reports']);
      const listed = (await store.listAccounts()).find((a) => a.clientId === input.clientId);
      expect(listed?.resources).toEqual(['https://billing.example.com/', 'reports']);
    }));

    it('createAccount without resources gives an account with none', heldTest(resourceStore, async (store) => {
      const input = ids.account();
      await store.createAccount(input);
      expect((await store.findAccount(input.clientId))?.resources).toEqual([]);
    }));

    it('setAccountResources replaces the list (empty clears it), returns the account, and leaves other accounts alone', heldTest(resourceStore, async (store) => {
      const account = await store.createAccount(ids.account({ resources: ['a'] }));
      const bystander = await store.createAccount(ids.account({ resources: ['b'] }));
      const updated = await store.setAccountResources(account.clientId, ['https://x.example/', 'y']);
      expect(updated).toEqual({ ...account, resources: ['https://x.example/', 'y'] });
      expect(await store.findAccount(account.clientId)).toEqual(updated);
      expect((await store.setAccountResources(account.clientId, []))?.resources).toEqual([]);
      expect((await store.findAccount(account.clientId))?.resources).toEqual([]);
      expect(await store.findAccount(bystander.clientId)).toEqual(bystander);
    }));

    it('setAccountResources resolves undefined for an unknown client ID', heldTest(resourceStore, async (store) => {
      expect(await store.setAccountResources(ids.clientId(), ['a'])).toBeUndefined();
    }));

    it('setAccountResources is announced to watch listeners', announcedTest(resourceStore, ids, 'setAccountResources', (store, clientId) => store.setAccountResources(clientId, ['a'])));
  });
};
