/**
 * @module describe-credential-life
 * The contract tests every credential kind of its own store methods shares (public keys, federated
 * credentials): added after the account's others and read back alike by `findAccount` and
 * `listAccounts`; nothing for an unknown account; one of concurrent twins stored; revoked once (a
 * second revocation keeps the first `revokedAt`), never through another account; a use recorded on
 * that credential only, and never undoing a revocation or a disable it races; and the change announced
 * to `watch` listeners. Each kind's describe file
 * adds what is its own (its twins, its cap tests, its lookups).
 */
import type { AccountRecord, AccountStore } from '../store/account-store.js';
import { CREDENTIAL_KINDS, supportsKind, type CredentialKindName, type CredentialKindStores, type NewCredentialRecords } from '../store/credential-kinds.js';
import { skipRunningTest, type AccountStoreTestApi } from './account-store-test-api.js';
import { heldTest, storeHolding } from './store-holding.js';
import { cap, raceBookkeeping, waitFor, type IdFactory } from './contract-fixtures.js';

const ROOM = cap(100);
const RACERS = 10;

/**
 * The store `currentStore()` returns when it holds the kind (every store method of its
 * `CREDENTIAL_KINDS` row), as a contract test reads it; otherwise the running test is marked skipped,
 * naming the methods, and it is undefined.
 *
 * @example
 * ```ts
 * import { it } from 'vitest'
 * import type { AccountStore } from '../store/account-store.js'
 * import { heldTest } from './store-holding.js'
 *
 * declare const store: AccountStore
 * const keyStore = kindStore(() => store, 'key')
 * it('addKey ...', heldTest(keyStore, async (store) => {
 *   await store.recordKeyUse('esa_V1StGXR8Z5jdHi6BmyT0aQ2k', 'esak_V1StGXR8Z5jdHi6BmyT0aQ2k', new Date())
 * }))
 * ```
 */
export function kindStore<K extends CredentialKindName>(
  currentStore: () => AccountStore,
  kind: K,
): (testArguments: IArguments) => CredentialKindStores[K] | undefined {
  const { noun, storeMethods } = CREDENTIAL_KINDS[kind];
  const holds = (store: AccountStore): store is CredentialKindStores[K] => supportsKind(store, kind);
  return storeHolding(currentStore, holds, `the store has no ${noun}s (${storeMethods.join(', ')})`);
}

/** One credential kind, as its life's contract tests use it; its store methods follow its `CREDENTIAL_KINDS` row. */
export interface CredentialLife<K extends CredentialKindName> {
  readonly kind: K;
  /** How the test names call one: `key`, `credential`. */
  readonly thing: string;
  /** The concurrent twins of the race test, for its name: `addKey calls with the same key`. */
  readonly twins: string;
  /** A new credential, and another one (with other optional fields, where the kind has them). */
  readonly make: () => NewCredentialRecords[K];
  readonly makeOther: () => NewCredentialRecords[K];
  /** A new ID of the kind. */
  readonly newId: () => string;
  /** What else an add for an unknown client ID must not have left behind. */
  readonly checkUnknownAdd?: (store: CredentialKindStores[K], credential: NewCredentialRecords[K]) => Promise<void>;
  /** What else must still hold after the revocation test (`bystander` is live on `clientId`). */
  readonly checkAfterRevoke?: (store: CredentialKindStores[K], clientId: string, bystander: NewCredentialRecords[K]) => Promise<void>;
}

/** A kind's store methods, as the shared tests call them (by the names of its `CREDENTIAL_KINDS` row). */
interface KindMethods<N> {
  add(clientId: string, credential: N, options: { readonly maxLiveCredentials: number }): Promise<unknown>;
  revoke(clientId: string, id: string, at: Date): Promise<{ readonly revokedAt: Date | null } | undefined>;
  recordUse(clientId: string, id: string, at: Date): Promise<void>;
}

/**
 * Registers the life tests of one credential kind in the enclosing `describe`.
 *
 * @example
 * ```ts
 * import { expect, it } from 'vitest'
 * import { IdFactory } from './contract-fixtures.js'
 * import type { AccountStore } from '../store/account-store.js'
 *
 * declare const store: AccountStore
 *
 * const ids = new IdFactory()
 * describeCredentialLife(() => store, {
 *   kind: 'key', thing: 'key', twins: 'addKey calls with the same key',
 *   make: () => ids.key(), makeOther: () => ids.key(), newId: () => ids.keyId(),
 * }, ids, { it, expect })
 * ```
 */
export function describeCredentialLife<K extends CredentialKindName>(
  currentStore: () => AccountStore,
  life: CredentialLife<K>,
  ids: IdFactory,
  { it, expect }: Pick<AccountStoreTestApi, 'it' | 'expect'>,
): void {
  type N = NewCredentialRecords[K];
  const { field, add, revoke, recordUse } = CREDENTIAL_KINDS[life.kind];
  const holding = kindStore(currentStore, life.kind);
  /** The store when it holds the kind, with the kind's methods by their names; otherwise the test is skipped. */
  const kindMethods = (testArguments: IArguments) => {
    const store = holding(testArguments);
    if (!store) return undefined;
    const named = store as unknown as Record<typeof add | typeof revoke | typeof recordUse, (...args: unknown[]) => Promise<never>>;
    const methods: KindMethods<N> = {
      add: (clientId, credential, options) => named[add].call(store, clientId, credential, options),
      revoke: (clientId, id, at) => named[revoke].call(store, clientId, id, at),
      recordUse: (clientId, id, at) => named[recordUse].call(store, clientId, id, at),
    };
    return { store, ...methods };
  };
  /** The account's credentials of the kind, as the store returned them. */
  const held = (account: AccountRecord | undefined) => account?.[field];
  const stored = (credential: N) => ({ ...credential, lastUsedAt: null, revokedAt: null });

  it(`${add} stores the ${life.thing} after the existing ones and returns it as findAccount and listAccounts do`, heldTest(kindMethods, async (kind) => {
    const { store } = kind;
    const account = await store.createAccount(ids.account());
    const first = life.make();
    const second = life.makeOther();
    expect(await kind.add(account.clientId, first, ROOM)).toEqual(stored(first));
    expect(await kind.add(account.clientId, second, ROOM)).toEqual(stored(second));
    const found = await store.findAccount(account.clientId);
    expect(held(found)).toEqual([stored(first), stored(second)]);
    expect(held(found)?.[0]?.createdAt).toBeInstanceOf(Date);
    expect(held(found)?.[0]?.createdAt.getTime()).toBe(first.createdAt.getTime());
    expect(found?.secrets).toEqual(account.secrets);
    expect((await store.listAccounts()).find((a) => a.clientId === account.clientId)).toEqual(found);
  }));

  it(`${add} resolves undefined for an unknown client ID and creates nothing`, heldTest(kindMethods, async (kind) => {
    const { store } = kind;
    const clientId = ids.clientId();
    const credential = life.make();
    expect(await kind.add(clientId, credential, ROOM)).toBeUndefined();
    expect(await store.findAccount(clientId)).toBeUndefined();
    await life.checkUnknownAdd?.(store, credential);
  }));

  it(`stores one of ${RACERS} concurrent ${life.twins} and refuses the others as duplicate`, heldTest(kindMethods, async (kind) => {
    const { store } = kind;
    const account = await store.createAccount(ids.account());
    const credential = life.make();
    const results = await Promise.all(
      Array.from({ length: RACERS }, () => kind.add(account.clientId, { ...credential, id: life.newId() }, ROOM)),
    );
    expect(results.filter((r) => typeof r === 'object').length).toBe(1);
    expect(results.filter((r) => r === 'duplicate').length).toBe(RACERS - 1);
    expect(held(await store.findAccount(account.clientId))?.length).toBe(1);
  }));

  it(`${revoke} sets revokedAt on that ${life.thing} only, once; unknown IDs and ${life.thing}s of another account resolve undefined`, heldTest(kindMethods, async (kind) => {
    const { store } = kind;
    const account = await store.createAccount(ids.account());
    const other = await store.createAccount(ids.account());
    const target = life.make();
    const bystander = life.make();
    await kind.add(account.clientId, target, ROOM);
    await kind.add(account.clientId, bystander, ROOM);
    const at = ids.time();
    expect(await kind.revoke(account.clientId, target.id, at)).toEqual({ ...stored(target), revokedAt: at });
    const again = await kind.revoke(account.clientId, target.id, ids.time());
    expect(again?.revokedAt?.getTime()).toBe(at.getTime());
    expect(await kind.revoke(ids.clientId(), bystander.id, ids.time())).toBeUndefined();
    expect(await kind.revoke(account.clientId, life.newId(), ids.time())).toBeUndefined();
    // Never through the wrong client ID: another account cannot revoke this account's credential.
    expect(await kind.revoke(other.clientId, bystander.id, ids.time())).toBeUndefined();
    const found = await store.findAccount(account.clientId);
    expect(held(found)?.[0]?.revokedAt?.getTime()).toBe(at.getTime());
    expect(held(found)?.[1]?.revokedAt).toBeNull();
    expect(found?.secrets[0]?.revokedAt).toBeNull();
    await life.checkAfterRevoke?.(store, account.clientId, bystander);
  }));

  it(`${recordUse} sets lastUsedAt of that ${life.thing} only`, heldTest(kindMethods, async (kind) => {
    const { store } = kind;
    const account = await store.createAccount(ids.account());
    const used = life.make();
    const idle = life.make();
    await kind.add(account.clientId, used, ROOM);
    await kind.add(account.clientId, idle, ROOM);
    const first = ids.time();
    await kind.recordUse(account.clientId, used.id, first);
    let found = await store.findAccount(account.clientId);
    expect(held(found)?.[0]?.lastUsedAt).toBeInstanceOf(Date);
    expect(held(found)?.[0]?.lastUsedAt?.getTime()).toBe(first.getTime());
    expect(held(found)?.[0]?.revokedAt).toBeNull();
    expect(held(found)?.[1]?.lastUsedAt).toBeNull();
    expect(found?.secrets[0]?.lastUsedAt).toBeNull();
    const later = ids.time();
    await kind.recordUse(account.clientId, used.id, later);
    found = await store.findAccount(account.clientId);
    expect(held(found)?.[0]?.lastUsedAt?.getTime()).toBe(later.getTime());
  }));

  // A use is recorded on every token request, while an operator may revoke or disable at the same
  // moment: the recording must never write back the credential or the account as it was before.
  it(`${recordUse} racing ${revoke} and setAccountEnabled never undoes them`, heldTest(kindMethods, async (kind) => {
    const { store } = kind;
    const account = await store.createAccount(ids.account());
    const credential = life.make();
    await kind.add(account.clientId, credential, ROOM);
    const at = ids.time();
    await raceBookkeeping(
      () => [kind.recordUse(account.clientId, credential.id, ids.time())],
      () => Promise.all([kind.revoke(account.clientId, credential.id, at), store.setAccountEnabled(account.clientId, false)]),
      async () => {
        const found = await store.findAccount(account.clientId);
        expect(found?.enabled).toBe(false);
        expect(held(found)?.[0]?.revokedAt?.getTime()).toBe(at.getTime());
      },
    );
  }));

  it(`watch: the listener is called after ${add} and after ${revoke}`, heldTest(kindMethods, async (kind, testArguments) => {
    const { store } = kind;
    if (!store.watch) return skipRunningTest(testArguments, 'the store has no watch');
    const account = await store.createAccount(ids.account());
    const calls: string[] = [];
    const stop = await store.watch((clientId) => calls.push(clientId));
    try {
      const count = (): number => calls.filter((id) => id === account.clientId || id === '*').length;
      const credential = life.make();
      await kind.add(account.clientId, credential, ROOM);
      await waitFor(() => count() >= 1, add);
      const before = count();
      await kind.revoke(account.clientId, credential.id, ids.time());
      await waitFor(() => count() > before, revoke);
    } finally {
      await stop();
    }
  }));
}
