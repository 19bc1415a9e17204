/**
 * @module describe-key-credentials
 * The contract tests of key-pair credentials: `addKey` (its cap shared with secrets, its refusal of a
 * duplicate live key), `revokeKey`, `recordKeyUse`, and the change announcements. They run when the
 * store has all four key methods, and are reported skipped otherwise (a store without keys).
 */
import type { AccountStore, AddKeyResult, AddSecretResult } from '../store/account-store.js';
import { supportsKeyCredentials, type KeyCredentialStore } from '../store/credential-kinds.js';
import { skipRunningTest, type AccountStoreTestApi } from './account-store-test-api.js';
import { describeAssertionIds } from './describe-assertion-ids.js';
import { cap, waitFor, type IdFactory } from './contract-fixtures.js';

const ROOM = cap(100);
const RACERS = 10;
const NO_KEYS = 'the store has no key credentials (addKey, revokeKey, recordKeyUse, consumeAssertionId)';

/**
 * Registers the key-credential tests in a `describe('key credentials')` of the enclosing suite, on
 * the store `currentStore()` returns.
 *
 * @example
 * ```ts
 * import { describe, expect, it } from 'vitest'
 * import { IdFactory } from './contract-fixtures.js'
 *
 * describeKeyCredentials(() => store, new IdFactory(), { describe, it, expect })
 * ```
 */
export function describeKeyCredentials(
  currentStore: () => AccountStore,
  ids: IdFactory,
  { describe, it, expect }: Pick<AccountStoreTestApi, 'describe' | 'it' | 'expect'>,
): void {
  /** The store when it holds keys; otherwise marks the running test skipped and returns undefined. */
  const keyStore = (testArguments: IArguments): KeyCredentialStore | undefined => {
    const store = currentStore();
    if (supportsKeyCredentials(store)) return store;
    skipRunningTest(testArguments, NO_KEYS);
    return undefined;
  };

  describe('key credentials', () => {
    // The test functions read vitest's test context from `arguments` (see skipRunningTest).
    it('addKey stores the key after the existing ones and returns it as findAccount and listAccounts do', async function () {
      const store = keyStore(arguments);
      if (!store) return;
      const account = await store.createAccount(ids.account());
      const first = ids.key();
      const second = ids.key();
      const added = await store.addKey(account.clientId, first, ROOM);
      const expected = { ...first, lastUsedAt: null, revokedAt: null };
      expect(added).toEqual(expected);
      await store.addKey(account.clientId, second, ROOM);
      const found = await store.findAccount(account.clientId);
      expect(found?.keys).toEqual([expected, { ...second, lastUsedAt: null, revokedAt: null }]);
      expect(found?.keys?.[0]?.createdAt).toBeInstanceOf(Date);
      expect(found?.keys?.[0]?.createdAt.getTime()).toBe(first.createdAt.getTime());
      expect(found?.secrets).toEqual(account.secrets);
      const listed = (await store.listAccounts()).find((a) => a.clientId === account.clientId);
      expect(listed).toEqual(found);
    });

    it('addKey resolves undefined for an unknown client ID and creates nothing', async function () {
      const store = keyStore(arguments);
      if (!store) return;
      const clientId = ids.clientId();
      expect(await store.addKey(clientId, ids.key(), ROOM)).toBeUndefined();
      expect(await store.findAccount(clientId)).toBeUndefined();
    });

    it('addKey resolves duplicate and stores nothing for a live key of the account; a revoked one or another account may have it', async function () {
      const store = keyStore(arguments);
      if (!store) return;
      const account = await store.createAccount(ids.account());
      const key = ids.key();
      await store.addKey(account.clientId, key, ROOM);
      const twin = { ...ids.key(), thumbprint: key.thumbprint, publicKey: key.publicKey };
      expect(await store.addKey(account.clientId, twin, ROOM)).toBe('duplicate');
      expect((await store.findAccount(account.clientId))?.keys?.map((k) => k.id)).toEqual([key.id]);
      const other = await store.createAccount(ids.account());
      expect(await store.addKey(other.clientId, { ...twin }, ROOM)).toEqual({ ...twin, lastUsedAt: null, revokedAt: null });
      await store.revokeKey(account.clientId, key.id, ids.time());
      const again = { ...ids.key(), thumbprint: key.thumbprint, publicKey: key.publicKey };
      expect(await store.addKey(account.clientId, again, ROOM)).toEqual({ ...again, lastUsedAt: null, revokedAt: null });
    });

    it('addKey and addSecret share the cap: live secrets and live keys count together, revoked ones do not', async function () {
      const store = keyStore(arguments);
      if (!store) return;
      const account = await store.createAccount(ids.account()); // one live secret
      const key = ids.key();
      expect(await store.addKey(account.clientId, key, { maxLiveCredentials: 2 })).toEqual({ ...key, lastUsedAt: null, revokedAt: null });
      expect(await store.addKey(account.clientId, ids.key(), { maxLiveCredentials: 2 })).toBe('limit_reached');
      expect(await store.addSecret(account.clientId, ids.secret(), cap(2))).toBe('limit_reached');
      await store.revokeSecret(account.clientId, account.secrets[0]?.id ?? '', ids.time());
      const secret = ids.secret();
      expect(await store.addSecret(account.clientId, secret, cap(2))).toEqual({ ...secret, lastUsedAt: null, revokedAt: null });
      await store.revokeKey(account.clientId, key.id, ids.time());
      const next = ids.key();
      expect(await store.addKey(account.clientId, next, { maxLiveCredentials: 2 })).toEqual({ ...next, lastUsedAt: null, revokedAt: null });
      const found = await store.findAccount(account.clientId);
      expect(found?.secrets.length).toBe(2);
      expect(found?.keys?.map((k) => k.id)).toEqual([key.id, next.id]);
    });

    it(`keeps the shared cap under ${RACERS} concurrent addKey and addSecret calls: exactly the room left is stored`, async function () {
      const store = keyStore(arguments);
      if (!store) return;
      const account = await store.createAccount(ids.account()); // one live secret: room for 3 more under a cap of 4
      const keys = Array.from({ length: RACERS / 2 }, () => ids.key());
      const secrets = Array.from({ length: RACERS / 2 }, () => ids.secret());
      const results: (AddKeyResult | AddSecretResult)[] = await Promise.all([
        ...keys.map((key) => store.addKey(account.clientId, key, { maxLiveCredentials: 4 })),
        ...secrets.map((secret) => store.addSecret(account.clientId, secret, cap(4))),
      ]);
      expect(results.filter((r) => typeof r === 'object').length).toBe(3);
      expect(results.filter((r) => r === 'limit_reached').length).toBe(RACERS - 3);
      const found = await store.findAccount(account.clientId);
      expect((found?.secrets.length ?? 0) + (found?.keys?.length ?? 0)).toBe(4);
    });

    it(`stores one of ${RACERS} concurrent addKey calls with the same key and refuses the others as duplicate`, async function () {
      const store = keyStore(arguments);
      if (!store) return;
      const account = await store.createAccount(ids.account());
      const key = ids.key();
      const results = await Promise.all(
        Array.from({ length: RACERS }, () => store.addKey(account.clientId, { ...key, id: ids.keyId() }, ROOM)),
      );
      expect(results.filter((r) => typeof r === 'object').length).toBe(1);
      expect(results.filter((r) => r === 'duplicate').length).toBe(RACERS - 1);
      expect((await store.findAccount(account.clientId))?.keys?.length).toBe(1);
    });

    it('revokeKey sets revokedAt on that key only, once; unknown keys and keys of another account resolve undefined', async function () {
      const store = keyStore(arguments);
      if (!store) return;
      const account = await store.createAccount(ids.account());
      const other = await store.createAccount(ids.account());
      const target = ids.key();
      const bystander = ids.key();
      await store.addKey(account.clientId, target, ROOM);
      await store.addKey(account.clientId, bystander, ROOM);
      const at = ids.time();
      expect(await store.revokeKey(account.clientId, target.id, at)).toEqual({ ...target, lastUsedAt: null, revokedAt: at });
      const again = await store.revokeKey(account.clientId, target.id, ids.time());
      expect(again?.revokedAt?.getTime()).toBe(at.getTime());
      expect(await store.revokeKey(ids.clientId(), bystander.id, ids.time())).toBeUndefined();
      expect(await store.revokeKey(account.clientId, ids.keyId(), ids.time())).toBeUndefined();
      expect(await store.revokeKey(other.clientId, bystander.id, ids.time())).toBeUndefined();
      const found = await store.findAccount(account.clientId);
      expect(found?.keys?.[0]?.revokedAt?.getTime()).toBe(at.getTime());
      expect(found?.keys?.[1]?.revokedAt).toBeNull();
      expect(found?.secrets[0]?.revokedAt).toBeNull();
    });

    it('recordKeyUse sets lastUsedAt of that key only', async function () {
      const store = keyStore(arguments);
      if (!store) return;
      const account = await store.createAccount(ids.account());
      const used = ids.key();
      const idle = ids.key();
      await store.addKey(account.clientId, used, ROOM);
      await store.addKey(account.clientId, idle, ROOM);
      const first = ids.time();
      await store.recordKeyUse(account.clientId, used.id, first);
      let found = await store.findAccount(account.clientId);
      expect(found?.keys?.[0]?.lastUsedAt).toBeInstanceOf(Date);
      expect(found?.keys?.[0]?.lastUsedAt?.getTime()).toBe(first.getTime());
      expect(found?.keys?.[0]?.revokedAt).toBeNull();
      expect(found?.keys?.[1]?.lastUsedAt).toBeNull();
      expect(found?.secrets[0]?.lastUsedAt).toBeNull();
      const later = ids.time();
      await store.recordKeyUse(account.clientId, used.id, later);
      found = await store.findAccount(account.clientId);
      expect(found?.keys?.[0]?.lastUsedAt?.getTime()).toBe(later.getTime());
    });

    it('returns copies of keys: mutating a returned key does not change the store', async function () {
      const store = keyStore(arguments);
      if (!store) return;
      const account = await store.createAccount(ids.account());
      const key = ids.key();
      const expected = [{ ...key, publicKey: { ...key.publicKey }, lastUsedAt: null, revokedAt: null }];
      const added = await store.addKey(account.clientId, key, ROOM);
      if (typeof added !== 'object') throw new Error('key not added');
      (added.publicKey as { x: string }).x = 'changed';
      const found = await store.findAccount(account.clientId);
      (found?.keys?.[0]?.publicKey as { x: string } | undefined)!.x = 'changed';
      (found?.keys as unknown[] | undefined)?.pop();
      expect((await store.findAccount(account.clientId))?.keys).toEqual(expected);
    });

    it('watch: the listener is called after addKey and after revokeKey', async function () {
      const store = keyStore(arguments);
      if (!store) return;
      if (!store.watch) return skipRunningTest(arguments, 'the store has no watch');
      const account = await store.createAccount(ids.account());
      const calls: string[] = [];
      const stop = await store.watch((clientId) => calls.push(clientId));
      try {
        const count = (): number => calls.filter((id) => id === account.clientId || id === '*').length;
        const key = ids.key();
        await store.addKey(account.clientId, key, ROOM);
        await waitFor(() => count() >= 1, 'addKey');
        const before = count();
        await store.revokeKey(account.clientId, key.id, ids.time());
        await waitFor(() => count() > before, 'revokeKey');
      } finally {
        await stop();
      }
    });

    describeAssertionIds(keyStore, ids, { it, expect });
  });
}
