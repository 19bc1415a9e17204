/**
 * @module store-holding
 * What the contract tests of an optional part of the store share: the store when it has that part
 * (else the running test is reported skipped), and the test that a change made through it is
 * announced to `watch` listeners.
 */
import type { AccountStore } from '../store/account-store.js';
import { skipRunningTest, type AccountStoreTestApi } from './account-store-test-api.js';
import { waitFor, type IdFactory } from './contract-fixtures.js';

/**
 * One part of the contract suite: registers its tests in the enclosing suite, on the store
 * `currentStore()` returns. `describeAccountStore` calls each; call one yourself only to run it alone.
 *
 * @example
 * ```ts
 * const describeNothing: DescribeStorePart = (currentStore, ids, { describe }) => describe('nothing', () => undefined)
 * ```
 */
export type DescribeStorePart = (
  currentStore: () => AccountStore,
  ids: IdFactory,
  api: Pick<AccountStoreTestApi, 'describe' | 'it' | 'expect'>,
) => void;

/**
 * The store `currentStore()` returns when `holds` it, as a contract test reads it; otherwise the
 * running test is marked skipped with `note` (a store without that part) and it is undefined.
 *
 * @example
 * ```ts
 * import { it } from 'vitest'
 * import type { AccountStore } from '../store/account-store.js'
 * import { supportsKeyCredentials } from '../store/credential-kinds.js'
 *
 * declare const store: AccountStore
 * const keyStore = storeHolding(() => store, supportsKeyCredentials, 'the store has no key credentials')
 * it('addKey ...', heldTest(keyStore, async (store) => {
 *   await store.recordKeyUse('esa_V1StGXR8Z5jdHi6BmyT0aQ2k', 'esak_V1StGXR8Z5jdHi6BmyT0aQ2k', new Date())
 * }))
 * ```
 */
export function storeHolding<S extends AccountStore>(
  currentStore: () => AccountStore,
  holds: (store: AccountStore) => store is S,
  note: string,
): (testArguments: IArguments) => S | undefined {
  return (testArguments) => {
    const store = currentStore();
    if (holds(store)) return store;
    skipRunningTest(testArguments, note);
    return undefined;
  };
}

/**
 * The store `currentStore()` returns when it has the optional method `method` (see
 * {@link storeHolding}); otherwise the test is reported skipped: `the store has no <method>`.
 *
 * @example
 * ```ts
 * declare const store: AccountStore
 * const policyStore = storeWithMethod(() => store, 'setAccountPolicy')
 * ```
 */
export function storeWithMethod<M extends keyof AccountStore>(
  currentStore: () => AccountStore,
  method: M,
): (testArguments: IArguments) => (AccountStore & Required<Pick<AccountStore, M>>) | undefined {
  const holds = (store: AccountStore): store is AccountStore & Required<Pick<AccountStore, M>> => typeof store[method] === 'function';
  return storeHolding(currentStore, holds, `the store has no ${method}`);
}

/**
 * A contract test on the part of the store `storeOf` gives (see {@link storeHolding}): `body` runs
 * with it, and a store without that part has the test reported skipped. `body` is given the test
 * function's `arguments` too, to report the test skipped for another reason (see skipRunningTest).
 *
 * @example
 * ```ts
 * import { it } from 'vitest'
 *
 * declare const store: AccountStore
 * const policyStore = storeWithMethod(() => store, 'setAccountPolicy')
 * it('setAccountPolicy resolves undefined for an unknown client ID', heldTest(policyStore, async (store) => {
 *   await store.setAccountPolicy('esa_V1StGXR8Z5jdHi6BmyT0aQ2k', { dpopBoundAccessTokens: true })
 * }))
 * ```
 */
export function heldTest<S>(
  storeOf: (testArguments: IArguments) => S | undefined,
  body: (store: S, testArguments: IArguments) => Promise<unknown>,
): () => Promise<void> {
  // A function, not an arrow: it reads vitest's test context from `arguments` (see skipRunningTest).
  return async function () {
    const store = storeOf(arguments);
    if (store) await body(store, arguments);
  };
}

/**
 * The body of a test that `change` (made through the store `storeOf` gives, to a new account) is
 * announced to `watch` listeners; skipped for a store without `watch`.
 *
 * @example
 * ```ts
 * import { it } from 'vitest'
 * import { IdFactory } from './contract-fixtures.js'
 *
 * declare const store: AccountStore
 * const policyStore = storeWithMethod(() => store, 'setAccountPolicy')
 * it('setAccountPolicy is announced to watch listeners', announcedTest(policyStore, new IdFactory(), 'setAccountPolicy', (store, clientId) =>
 *   store.setAccountPolicy(clientId, { dpopBoundAccessTokens: true }),
 * ))
 * ```
 */
export function announcedTest<S extends AccountStore>(
  storeOf: (testArguments: IArguments) => S | undefined,
  ids: IdFactory,
  what: string,
  change: (store: S, clientId: string) => Promise<unknown>,
): () => Promise<void> {
  return heldTest(storeOf, async (store, testArguments) => {
    if (!store.watch) return skipRunningTest(testArguments, 'the store has no watch');
    const account = await store.createAccount(ids.account());
    const calls: string[] = [];
    const stop = await store.watch((clientId) => calls.push(clientId));
    try {
      calls.length = 0;
      await change(store, account.clientId);
      await waitFor(() => calls.includes(account.clientId), what);
    } finally {
      await stop();
    }
  });
}
