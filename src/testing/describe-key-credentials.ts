/**
 * @module describe-key-credentials
 * The contract tests of key-pair credentials: `addKey` (its cap shared with secrets, its refusal of a
 * duplicate live key), `revokeKey`, `recordKeyUse`, and the change announcements. They run when the
 * store has all four key methods, and are reported skipped otherwise (a store without keys).
 */
import type { AddKeyResult, AddSecretResult } from '../store/account-store.js';
import { heldTest, type DescribeStorePart } from './store-holding.js';
import { describeAssertionIds } from './describe-assertion-ids.js';
import { describeCredentialLife, kindStore } from './describe-credential-life.js';
import { cap } from './contract-fixtures.js';

const ROOM = cap(100);
const RACERS = 10;

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
export const describeKeyCredentials: DescribeStorePart = (currentStore, ids, { describe, it, expect }) => {
  /** The store when it holds keys; otherwise marks the running test skipped and returns undefined. */
  const keyStore = kindStore(currentStore, 'key');

  describe('key credentials', () => {
    const life = { kind: 'key', thing: 'key', twins: 'addKey calls with the same key', make: () => ids.key(), makeOther: () => ids.key(), newId: () => ids.keyId() } as const;
    describeCredentialLife(currentStore, life, ids, { it, expect });

    it('addKey resolves duplicate and stores nothing for a live key of the account; a revoked one or another account may have it', heldTest(keyStore, async (store) => {
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
    }));

    it('addKey and addSecret share the cap: live secrets and live keys count together, revoked ones do not', heldTest(keyStore, async (store) => {
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
    }));

    it(`keeps the shared cap under ${RACERS} concurrent addKey and addSecret calls: exactly the room left is stored`, heldTest(keyStore, async (store) => {
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
    }));

    it('returns copies of keys: mutating a returned key does not change the store', heldTest(keyStore, async (store) => {
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
    }));

    describeAssertionIds(keyStore, ids, { it, expect });
  });
};
