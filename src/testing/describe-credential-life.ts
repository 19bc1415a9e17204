/**
 * @module describe-credential-life
 * The contract tests every credential kind of its own store methods shares (public keys, federated
 * credentials): added after the account's others and read back alike by `findAccount` and
 * `listAccounts`; nothing for an unknown account; one of concurrent twins stored; revoked once (a
 * second revocation keeps the first `revokedAt`), never through another account; a use recorded on
 * that credential only; and the change announced to `watch` listeners. Each kind's describe file
 * adds what is its own (its twins, its cap tests, its lookups).
 */
import type { AccountRecord, AccountStore } from '../store/account-store.js';
import { CREDENTIAL_KINDS, type CredentialKindName } from '../store/credential-kinds.js';
import { skipRunningTest, type AccountStoreTestApi } from './account-store-test-api.js';
import { cap, waitFor, type IdFactory } from './contract-fixtures.js';

const ROOM = cap(100);
const RACERS = 10;

/**
 * The store `currentStore()` returns when `holds` it, as a contract test reads it; otherwise the
 * running test is marked skipped with `note` (a store without the kind) and it is undefined.
 *
 * @example
 * ```ts
 * import { it } from 'vitest'
 * import type { AccountStore } from '../store/account-store.js'
 * import { supportsKeyCredentials } from '../store/credential-kinds.js'
 *
 * declare const store: AccountStore
 * const keyStore = storeHolding(() => store, supportsKeyCredentials, 'the store has no key credentials')
 * it('addKey ...', async function () {
 *   const store = keyStore(arguments)
 *   if (!store) return
 * })
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

/** One credential kind, as its life's contract tests use it. */
export interface CredentialLife<S extends AccountStore, N extends { readonly id: string; readonly createdAt: Date }> {
  readonly kind: CredentialKindName;
  /** How the test names call one: `key`, `credential`. */
  readonly thing: string;
  /** The store methods, by name, for the test names. */
  readonly names: { readonly add: string; readonly revoke: string };
  /** The concurrent twins of the race test, for its name: `addKey calls with the same key`. */
  readonly twins: string;
  /** The store when it holds the kind; otherwise marks the running test skipped (see {@link storeHolding}). */
  readonly store: (testArguments: IArguments) => S | undefined;
  /** A new credential, and another one (with other optional fields, where the kind has them). */
  readonly make: () => N;
  readonly makeOther: () => N;
  /** A new ID of the kind. */
  readonly newId: () => string;
  readonly add: (store: S, clientId: string, credential: N, options: { readonly maxLiveCredentials: number }) => Promise<unknown>;
  readonly revoke: (store: S, clientId: string, id: string, at: Date) => Promise<{ readonly revokedAt: Date | null } | undefined>;
  readonly recordUse: (store: S, clientId: string, id: string, at: Date) => Promise<void>;
  /** What else an add for an unknown client ID must not have left behind. */
  readonly checkUnknownAdd?: (store: S, credential: N) => Promise<void>;
  /** What else must still hold after the revocation test (`bystander` is live on `clientId`). */
  readonly checkAfterRevoke?: (store: S, clientId: string, bystander: N) => Promise<void>;
}

/**
 * Registers the life tests of one credential kind in the enclosing `describe`.
 *
 * @example
 * ```ts
 * import { expect, it } from 'vitest'
 * import { IdFactory } from './contract-fixtures.js'
 * import type { AccountStore, NewKeyRecord } from '../store/account-store.js'
 * import { supportsKeyCredentials, type KeyCredentialStore } from '../store/credential-kinds.js'
 *
 * declare const store: AccountStore
 *
 * const ids = new IdFactory()
 * describeCredentialLife<KeyCredentialStore, NewKeyRecord>({
 *   kind: 'key', thing: 'key', names: { add: 'addKey', revoke: 'revokeKey' }, twins: 'addKey calls with the same key',
 *   store: storeHolding(() => store, supportsKeyCredentials, 'the store has no key credentials'),
 *   make: () => ids.key(), makeOther: () => ids.key(), newId: () => ids.keyId(),
 *   add: (store, clientId, key, options) => store.addKey(clientId, key, options),
 *   revoke: (store, clientId, id, at) => store.revokeKey(clientId, id, at),
 *   recordUse: (store, clientId, id, at) => store.recordKeyUse(clientId, id, at),
 * }, ids, { it, expect })
 * ```
 */
export function describeCredentialLife<S extends AccountStore, N extends { readonly id: string; readonly createdAt: Date }>(
  life: CredentialLife<S, N>,
  ids: IdFactory,
  { it, expect }: Pick<AccountStoreTestApi, 'it' | 'expect'>,
): void {
  const { field } = CREDENTIAL_KINDS[life.kind];
  /** The account's credentials of the kind, as the store returned them. */
  const held = (account: AccountRecord | undefined) => account?.[field];
  const stored = (credential: N) => ({ ...credential, lastUsedAt: null, revokedAt: null });
  const { add, revoke } = life.names;

  // The test functions read vitest's test context from `arguments` (see skipRunningTest).
  it(`${add} stores the ${life.thing} after the existing ones and returns it as findAccount and listAccounts do`, async function () {
    const store = life.store(arguments);
    if (!store) return;
    const account = await store.createAccount(ids.account());
    const first = life.make();
    const second = life.makeOther();
    expect(await life.add(store, account.clientId, first, ROOM)).toEqual(stored(first));
    expect(await life.add(store, account.clientId, second, ROOM)).toEqual(stored(second));
    const found = await store.findAccount(account.clientId);
    expect(held(found)).toEqual([stored(first), stored(second)]);
    expect(held(found)?.[0]?.createdAt).toBeInstanceOf(Date);
    expect(held(found)?.[0]?.createdAt.getTime()).toBe(first.createdAt.getTime());
    expect(found?.secrets).toEqual(account.secrets);
    expect((await store.listAccounts()).find((a) => a.clientId === account.clientId)).toEqual(found);
  });

  it(`${add} resolves undefined for an unknown client ID and creates nothing`, async function () {
    const store = life.store(arguments);
    if (!store) return;
    const clientId = ids.clientId();
    const credential = life.make();
    expect(await life.add(store, clientId, credential, ROOM)).toBeUndefined();
    expect(await store.findAccount(clientId)).toBeUndefined();
    await life.checkUnknownAdd?.(store, credential);
  });

  it(`stores one of ${RACERS} concurrent ${life.twins} and refuses the others as duplicate`, async function () {
    const store = life.store(arguments);
    if (!store) return;
    const account = await store.createAccount(ids.account());
    const credential = life.make();
    const results = await Promise.all(
      Array.from({ length: RACERS }, () => life.add(store, account.clientId, { ...credential, id: life.newId() }, ROOM)),
    );
    expect(results.filter((r) => typeof r === 'object').length).toBe(1);
    expect(results.filter((r) => r === 'duplicate').length).toBe(RACERS - 1);
    expect(held(await store.findAccount(account.clientId))?.length).toBe(1);
  });

  it(`${revoke} sets revokedAt on that ${life.thing} only, once; unknown IDs and ${life.thing}s of another account resolve undefined`, async function () {
    const store = life.store(arguments);
    if (!store) return;
    const account = await store.createAccount(ids.account());
    const other = await store.createAccount(ids.account());
    const target = life.make();
    const bystander = life.make();
    await life.add(store, account.clientId, target, ROOM);
    await life.add(store, account.clientId, bystander, ROOM);
    const at = ids.time();
    expect(await life.revoke(store, account.clientId, target.id, at)).toEqual({ ...stored(target), revokedAt: at });
    const again = await life.revoke(store, account.clientId, target.id, ids.time());
    expect(again?.revokedAt?.getTime()).toBe(at.getTime());
    expect(await life.revoke(store, ids.clientId(), bystander.id, ids.time())).toBeUndefined();
    expect(await life.revoke(store, account.clientId, life.newId(), ids.time())).toBeUndefined();
    // Never through the wrong client ID: another account cannot revoke this account's credential.
    expect(await life.revoke(store, other.clientId, bystander.id, ids.time())).toBeUndefined();
    const found = await store.findAccount(account.clientId);
    expect(held(found)?.[0]?.revokedAt?.getTime()).toBe(at.getTime());
    expect(held(found)?.[1]?.revokedAt).toBeNull();
    expect(found?.secrets[0]?.revokedAt).toBeNull();
    await life.checkAfterRevoke?.(store, account.clientId, bystander);
  });

  it(`${CREDENTIAL_KINDS[life.kind].recordUse} sets lastUsedAt of that ${life.thing} only`, async function () {
    const store = life.store(arguments);
    if (!store) return;
    const account = await store.createAccount(ids.account());
    const used = life.make();
    const idle = life.make();
    await life.add(store, account.clientId, used, ROOM);
    await life.add(store, account.clientId, idle, ROOM);
    const first = ids.time();
    await life.recordUse(store, account.clientId, used.id, first);
    let found = await store.findAccount(account.clientId);
    expect(held(found)?.[0]?.lastUsedAt).toBeInstanceOf(Date);
    expect(held(found)?.[0]?.lastUsedAt?.getTime()).toBe(first.getTime());
    expect(held(found)?.[0]?.revokedAt).toBeNull();
    expect(held(found)?.[1]?.lastUsedAt).toBeNull();
    expect(found?.secrets[0]?.lastUsedAt).toBeNull();
    const later = ids.time();
    await life.recordUse(store, account.clientId, used.id, later);
    found = await store.findAccount(account.clientId);
    expect(held(found)?.[0]?.lastUsedAt?.getTime()).toBe(later.getTime());
  });

  it(`watch: the listener is called after ${add} and after ${revoke}`, async function () {
    const store = life.store(arguments);
    if (!store) return;
    if (!store.watch) return skipRunningTest(arguments, 'the store has no watch');
    const account = await store.createAccount(ids.account());
    const calls: string[] = [];
    const stop = await store.watch((clientId) => calls.push(clientId));
    try {
      const count = (): number => calls.filter((id) => id === account.clientId || id === '*').length;
      const credential = life.make();
      await life.add(store, account.clientId, credential, ROOM);
      await waitFor(() => count() >= 1, add);
      const before = count();
      await life.revoke(store, account.clientId, credential.id, ids.time());
      await waitFor(() => count() > before, revoke);
    } finally {
      await stop();
    }
  });
}
