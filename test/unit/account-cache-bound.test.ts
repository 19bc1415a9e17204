/**
 * AccountCache keeps at most `max` accounts (src/runtime/account-cache.ts): when full, the entry stored
 * longest ago goes first, and a dropped account is read from the store again on its next request.
 */
import { describe, expect, it } from 'vitest';
import { AccountCache } from '../../src/runtime/account-cache.js';
import { IdFactory } from '../../src/testing/contract-fixtures.js';
import { GatedStore } from '../helpers/gated-store.js';

describe('AccountCache bound', () => {
  it('holds at most `max` accounts, dropping the one stored longest ago', async () => {
    const store = new GatedStore();
    const ids = new IdFactory();
    const [a, b, c] = [ids.account(), ids.account(), ids.account()];
    for (const account of [a, b, c]) await store.inner.createAccount(account);
    const cache = new AccountCache({ store, storeTimeout: 1000, statusCacheTtl: 30_000, max: 2 });
    await cache.get(a.clientId);
    await cache.get(b.clientId);
    expect(cache.peek(a.clientId)?.account?.clientId).toBe(a.clientId); // a hit does not reorder
    await cache.get(c.clientId);
    expect(cache.peek(a.clientId)).toBeUndefined();
    expect(cache.peek(b.clientId)?.account?.clientId).toBe(b.clientId);
    expect(cache.peek(c.clientId)?.account?.clientId).toBe(c.clientId);
    expect(store.findCalls).toBe(3);
    expect((await cache.get(a.clientId))?.clientId).toBe(a.clientId);
    expect(store.findCalls).toBe(4);
  });
});
