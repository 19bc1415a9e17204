/**
 * @module describe-account-policy
 * The contract tests of account token policies: `accessTokenLifetime` and `dpopBoundAccessTokens`
 * (RFC 9449 §5.2) given to `createAccount` and changed by the optional `setAccountPolicy`. They run
 * when the store has the method, and are reported skipped otherwise.
 */
import type { AccountRecord, AccountStore } from '../store/account-store.js';
import { skipRunningTest, type AccountStoreTestApi } from './account-store-test-api.js';
import { waitFor, type IdFactory } from './contract-fixtures.js';

const NO_POLICY = 'the store has no setAccountPolicy';

/** The two policy fields of a record, as compared. */
const policyOf = (account: AccountRecord | undefined) => ({
  accessTokenLifetime: account?.accessTokenLifetime,
  dpopBoundAccessTokens: account?.dpopBoundAccessTokens,
});

type PolicyStore = AccountStore & Required<Pick<AccountStore, 'setAccountPolicy'>>;

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
export function describeAccountPolicy(
  currentStore: () => AccountStore,
  ids: IdFactory,
  { describe, it, expect }: Pick<AccountStoreTestApi, 'describe' | 'it' | 'expect'>,
): void {
  /** The store when it keeps policies; otherwise marks the running test skipped and returns undefined. */
  const policyStore = (testArguments: IArguments): PolicyStore | undefined => {
    const store = currentStore();
    if (typeof store.setAccountPolicy === 'function') return store as PolicyStore;
    skipRunningTest(testArguments, NO_POLICY);
    return undefined;
  };

  describe('account policy', () => {
    it('createAccount keeps accessTokenLifetime and dpopBoundAccessTokens; findAccount and listAccounts return them', async function () {
      const store = policyStore(arguments);
      if (!store) return;
      const input = ids.account({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
      const created = await store.createAccount(input);
      expect(policyOf(created)).toEqual({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
      expect(policyOf(await store.findAccount(input.clientId))).toEqual({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
      const listed = (await store.listAccounts()).find((a) => a.clientId === input.clientId);
      expect(policyOf(listed)).toEqual({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
    });

    it('createAccount without a policy gives the server lifetime (null) and no DPoP requirement', async function () {
      const store = policyStore(arguments);
      if (!store) return;
      const input = ids.account();
      await store.createAccount(input);
      const found = await store.findAccount(input.clientId);
      expect(found?.accessTokenLifetime).toBeNull();
      expect(found?.dpopBoundAccessTokens).toBe(false);
    });

    it('setAccountPolicy sets the fields given, keeps the others, returns the account, and leaves other accounts alone', async function () {
      const store = policyStore(arguments);
      if (!store) return;
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
    });

    it('setAccountPolicy resolves undefined for an unknown client ID', async function () {
      const store = policyStore(arguments);
      if (!store) return;
      expect(await store.setAccountPolicy(ids.clientId(), { accessTokenLifetime: 60 })).toBeUndefined();
    });

    it('setAccountPolicy is announced to watch listeners', async function () {
      const store = policyStore(arguments);
      if (!store) return;
      if (!store.watch) return skipRunningTest(arguments, 'the store has no watch');
      const account = await store.createAccount(ids.account());
      const calls: string[] = [];
      const stop = await store.watch((clientId) => calls.push(clientId));
      try {
        calls.length = 0;
        await store.setAccountPolicy(account.clientId, { dpopBoundAccessTokens: true });
        await waitFor(() => calls.includes(account.clientId), 'setAccountPolicy');
      } finally {
        await stop();
      }
    });
  });
}
