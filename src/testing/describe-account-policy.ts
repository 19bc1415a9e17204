/**
 * @module describe-account-policy
 * The contract tests of account token policies: `accessTokenLifetime` and `dpopBoundAccessTokens`
 * (RFC 9449 §5.2) given to `createAccount` and changed by the optional `setAccountPolicy`. They run
 * when the store has the method, and are reported skipped otherwise.
 */
import type { AccountRecord } from '../store/account-store.js';
import { announcedTest, heldTest, storeWithMethod, type DescribeStorePart } from './store-holding.js';

/** The two policy fields of a record, as compared. */
const policyOf = (account: AccountRecord | undefined) => ({
  accessTokenLifetime: account?.accessTokenLifetime,
  dpopBoundAccessTokens: account?.dpopBoundAccessTokens,
});

/**
 * Registers the policy tests in a `describe('account policy')` of the enclosing suite, on the store
 * `currentStore()` returns.
 *
 * @example
 * ```ts
 * import { describe, expect, it } from 'vitest'
 * import { IdFactory } from './contract-fixtures.js'
 *
 * describeAccountPolicy(() => store, new IdFactory(), { describe, it, expect })
 * ```
 */
export const describeAccountPolicy: DescribeStorePart = (currentStore, ids, { describe, it, expect }) => {
  /** The store when it has setAccountPolicy; otherwise marks the running test skipped and returns undefined. */
  const policyStore = storeWithMethod(currentStore, 'setAccountPolicy');

  describe('account policy', () => {
    it('createAccount keeps accessTokenLifetime and dpopBoundAccessTokens; findAccount and listAccounts return them', heldTest(policyStore, async (store) => {
      const input = ids.account({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
      const created = await store.createAccount(input);
      expect(policyOf(created)).toEqual({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
      expect(policyOf(await store.findAccount(input.clientId))).toEqual({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
      const listed = (await store.listAccounts()).find((a) => a.clientId === input.clientId);
      expect(policyOf(listed)).toEqual({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
    }));

    it('createAccount without a policy gives the server lifetime (null) and no DPoP requirement', heldTest(policyStore, async (store) => {
      const input = ids.account();
      await store.createAccount(input);
      const found = await store.findAccount(input.clientId);
      expect(found?.accessTokenLifetime).toBeNull();
      expect(found?.dpopBoundAccessTokens).toBe(false);
    }));

    it('setAccountPolicy sets the fields given, keeps the others, returns the account, and leaves other accounts alone', heldTest(policyStore, async (store) => {
      const account = await store.createAccount(ids.account({ accessTokenLifetime: 600 }));
      const bystander = await store.createAccount(ids.account({ accessTokenLifetime: 300, dpopBoundAccessTokens: true }));
      const bound = await store.setAccountPolicy(account.clientId, { dpopBoundAccessTokens: true });
      expect(bound).toEqual({ ...account, accessTokenLifetime: 600, dpopBoundAccessTokens: true });
      expect(await store.findAccount(account.clientId)).toEqual(bound);
      const longer = await store.setAccountPolicy(account.clientId, { accessTokenLifetime: 7200 });
      expect(policyOf(longer)).toEqual({ accessTokenLifetime: 7200, dpopBoundAccessTokens: true });
      const reset = await store.setAccountPolicy(account.clientId, { accessTokenLifetime: null, dpopBoundAccessTokens: false });
      expect(policyOf(reset)).toEqual({ accessTokenLifetime: null, dpopBoundAccessTokens: false });
      expect(await store.findAccount(account.clientId)).toEqual(reset);
      expect(await store.findAccount(bystander.clientId)).toEqual(bystander);
    }));

    it('setAccountPolicy resolves undefined for an unknown client ID', heldTest(policyStore, async (store) => {
      expect(await store.setAccountPolicy(ids.clientId(), { accessTokenLifetime: 60 })).toBeUndefined();
    }));

    it('setAccountPolicy is announced to watch listeners', announcedTest(policyStore, ids, 'setAccountPolicy', (store, clientId) => store.setAccountPolicy(clientId, { dpopBoundAccessTokens: true })));
  });
};
