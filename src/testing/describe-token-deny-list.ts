/**
 * @module describe-token-deny-list
 * The contract tests of the token deny-list (`revokeToken`, `listRevokedTokens`): the first record
 * wins, expired entries are not listed, a client's live entries are capped (`maxPerClient`), and a store
 * that watches announces each new entry with its change key. Skipped for a store without the two methods.
 */
import { randomUUID } from 'node:crypto';
import type { AccountStore, RevokedTokenRecord } from '../store/account-store.js';
import { revokedTokenChangeKey } from '../store/revoked-token-change.js';
import { skipRunningTest, type AccountStoreTestApi } from './account-store-test-api.js';
import { waitFor, type IdFactory } from './contract-fixtures.js';

/** What a deny-list test needs: a store with both methods. */
type DenyListStore = AccountStore & Required<Pick<AccountStore, 'revokeToken' | 'listRevokedTokens'>>;

function hasDenyList(store: AccountStore): store is DenyListStore {
  return typeof store.revokeToken === 'function' && typeof store.listRevokedTokens === 'function';
}

/**
 * Registers the deny-list tests in the enclosing `describe`, on the store `currentStore()` returns.
 *
 * @example
 * ```ts
 * import { expect, it } from 'vitest'
 *
 * declare const ids: Parameters<typeof describeTokenDenyList>[1] // the suite's IdFactory
 * describeTokenDenyList(() => store, ids, { it, expect })
 * ```
 */
export function describeTokenDenyList(
  currentStore: () => AccountStore,
  ids: IdFactory,
  { it, expect }: Pick<AccountStoreTestApi, 'it' | 'expect'>,
): void {
  const entry = (revokedAt: Date, lifetimeMs: number, clientId: string | null = ids.clientId()): RevokedTokenRecord => ({
    tokenId: randomUUID(),
    clientId,
    revokedAt,
    expiresAt: new Date(revokedAt.getTime() + lifetimeMs),
  });

  // The test functions read vitest's test context from `arguments` (see skipRunningTest).
  it('revokeToken stores the entry and listRevokedTokens lists it until its expiry', async function () {
    const store = currentStore();
    if (!hasDenyList(store)) return skipRunningTest(arguments, 'the store has no token deny-list');
    const at = ids.time();
    const record = entry(at, 3_600_000);
    const anonymous = entry(at, 3_600_000, null);
    expect(await store.revokeToken(record)).toEqual(record);
    expect(await store.revokeToken(anonymous)).toEqual(anonymous);
    const listed = await store.listRevokedTokens(at);
    expect(listed.find((x) => x.tokenId === record.tokenId)).toEqual(record);
    expect(listed.find((x) => x.tokenId === anonymous.tokenId)).toEqual(anonymous);
    const found = listed.find((x) => x.tokenId === record.tokenId);
    expect(found?.revokedAt).toBeInstanceOf(Date);
    expect(found?.expiresAt.getTime()).toBe(record.expiresAt.getTime());
    // Not listed once `now` reaches its expiry.
    const mine = (now: Date) => store.listRevokedTokens(now).then((all) => all.filter((x) => x.tokenId === record.tokenId));
    expect(await mine(new Date(record.expiresAt.getTime() - 1))).toEqual([record]);
    expect(await mine(record.expiresAt)).toEqual([]);
  });

  it('revokeToken on a listed token keeps the first record', async function () {
    const store = currentStore();
    if (!hasDenyList(store)) return skipRunningTest(arguments, 'the store has no token deny-list');
    const first = entry(ids.time(), 3_600_000);
    await store.revokeToken(first);
    const again = { ...first, revokedAt: ids.time(), expiresAt: new Date(first.expiresAt.getTime() + 86_400_000) };
    expect(await store.revokeToken(again)).toEqual(first);
    const listed = (await store.listRevokedTokens(first.revokedAt)).filter((x) => x.tokenId === first.tokenId);
    expect(listed).toEqual([first]);
  });

  // AccountStore.revokeToken, RevokeTokenOptions.maxPerClient: with that many live entries of the client,
  // "nothing is stored and revokeToken returns 'limit_reached'"; entries of other clients, entries that
  // name no client and expired entries do not count, and a token already listed keeps its first record.
  it('revokeToken caps the live entries of one client at maxPerClient', async function () {
    const store = currentStore();
    if (!hasDenyList(store)) return skipRunningTest(arguments, 'the store has no token deny-list');
    const clientId = ids.clientId();
    const at = ids.time();
    const cap = { maxPerClient: 2 };
    const short = entry(at, 1000, clientId);
    const long = entry(at, 3_600_000, clientId);
    const anonymous = entry(at, 3_600_000, null);
    const elsewhere = entry(at, 3_600_000);
    const listedIds = async (): Promise<string[]> => (await store.listRevokedTokens(at)).map((x) => x.tokenId);
    expect(await store.revokeToken(short, cap)).toEqual(short);
    expect(await store.revokeToken(anonymous, cap)).toEqual(anonymous);
    expect(await store.revokeToken(elsewhere, cap)).toEqual(elsewhere);
    expect(await store.revokeToken(long, cap)).toEqual(long);
    const refused = entry(at, 3_600_000, clientId);
    expect(await store.revokeToken(refused, cap)).toBe('limit_reached');
    expect(await store.revokeToken(long, cap)).toEqual(long);
    expect((await listedIds()).includes(refused.tokenId)).toBe(false);
    // Once the short entry has expired, it no longer counts.
    const later = { ...refused, revokedAt: new Date(at.getTime() + 1000) };
    expect(await store.revokeToken(later, cap)).toEqual(later);
    expect((await listedIds()).includes(refused.tokenId)).toBe(true);
  });

  it('watch announces a new deny-list entry with its change key', async function () {
    const store = currentStore();
    if (!hasDenyList(store) || !store.watch) return skipRunningTest(arguments, 'the store has no token deny-list or no watch');
    const calls: string[] = [];
    const stop = await store.watch((key) => calls.push(key));
    try {
      const record = entry(ids.time(), 3_600_000);
      await store.revokeToken(record);
      await waitFor(() => calls.includes(revokedTokenChangeKey(record)), 'revokeToken');
    } finally {
      await stop();
    }
  });
}
