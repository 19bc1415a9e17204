/**
 * @module describe-secret-cap
 * The contract tests of `addSecret`'s cap on live secrets: a full account refuses, revoked secrets
 * leave room, and concurrent adds never get past the cap or leave a refused secret behind.
 */
import type { AccountStore, AddSecretResult } from '../store/account-store.js';
import type { AccountStoreTestApi } from './account-store-test-api.js';
import { cap, type IdFactory } from './contract-fixtures.js';

/** Concurrent adds in the race test, and the cap they race for (the account starts with one secret). */
const RACERS = 10;
const CAP = 3;

/**
 * Registers the cap tests in the enclosing `describe`, on the store `currentStore()` returns.
 *
 * @example
 * ```ts
 * import { expect, it } from 'vitest'
 * import { IdFactory } from './contract-fixtures.js'
 *
 * describeSecretCap(() => store, new IdFactory(), { it, expect })
 * ```
 */
export function describeSecretCap(
  currentStore: () => AccountStore,
  ids: IdFactory,
  { it, expect }: Pick<AccountStoreTestApi, 'it' | 'expect'>,
): void {
  it('addSecret resolves limit_reached and stores nothing when the account has maxLiveCredentials live credentials', async () => {
    const store = currentStore();
    const account = await store.createAccount(ids.account());
    const second = ids.secret();
    expect(await store.addSecret(account.clientId, second, cap(2))).toEqual({ ...second, lastUsedAt: null, revokedAt: null });
    expect(await store.addSecret(account.clientId, ids.secret(), cap(2))).toBe('limit_reached');
    expect(await store.addSecret(account.clientId, ids.secret(), cap(1))).toBe('limit_reached');
    const found = await store.findAccount(account.clientId);
    expect(found?.secrets.map((s) => s.id)).toEqual([account.secrets[0]?.id, second.id]);
  });

  it('addSecret counts live secrets only: a revoked secret makes room', async () => {
    const store = currentStore();
    const account = await store.createAccount(ids.account());
    await store.revokeSecret(account.clientId, account.secrets[0]?.id ?? '', ids.time());
    const next = ids.secret();
    expect(await store.addSecret(account.clientId, next, cap(1))).toEqual({ ...next, lastUsedAt: null, revokedAt: null });
    expect(await store.addSecret(account.clientId, ids.secret(), cap(1))).toBe('limit_reached');
    expect((await store.findAccount(account.clientId))?.secrets.length).toBe(2);
  });

  it(`addSecret keeps the cap under ${RACERS} concurrent adds: exactly the room left is stored, nothing else`, async () => {
    const store = currentStore();
    const account = await store.createAccount(ids.account());
    const secrets = Array.from({ length: RACERS }, () => ids.secret());
    const results: AddSecretResult[] = await Promise.all(
      secrets.map((secret) => store.addSecret(account.clientId, secret, cap(CAP))),
    );
    const stored = secrets.filter((_, i) => typeof results[i] === 'object');
    expect(stored.length).toBe(CAP - 1);
    expect(results.filter((r) => r === 'limit_reached').length).toBe(RACERS - (CAP - 1));
    const found = await store.findAccount(account.clientId);
    // No refused secret is left behind, not even as a revoked row.
    expect(found?.secrets.map((s) => s.id).sort()).toEqual([account.secrets[0]?.id, ...stored.map((s) => s.id)].sort());
    expect(found?.secrets.filter((s) => s.revokedAt !== null).length).toBe(0);
  });
}
