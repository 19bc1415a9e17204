/**
 * RevokedTokenCache: each instance's copy of the token deny-list. docs/revocation-and-introspection.md,
 * "How fast a revocation takes effect": read once at start-up, then kept current by the store's
 * announcements without a store read per check; re-read when announcements may have been missed
 * (`'*'`) or, without `watch`, at most every 500 ms; a failed read fails the check rather than admit a
 * token; entries dropped once their token has expired. Time is injected; nothing sleeps.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryAccountStore, revokedTokenChangeKey, type RevokedTokenRecord } from '../../src/index.js';
import { WATCHLESS_TTL_MS } from '../../src/runtime/account-cache.js';
import { RevokedTokenCache } from '../../src/runtime/revoked-token-cache.js';

/** A memory store that counts deny-list reads and can be made to fail them. */
class CountingStore extends MemoryAccountStore {
  reads = 0;
  failing = false;
  override async listRevokedTokens(now: Date): Promise<RevokedTokenRecord[]> {
    this.reads++;
    if (this.failing) throw new Error('store down');
    return super.listRevokedTokens(now);
  }
}

function setUp(options: { announcing?: boolean } = {}) {
  const store = new CountingStore();
  let mono = 1_000;
  let wall = Date.parse('2026-11-22T10:00:00Z');
  const state = { announcing: options.announcing ?? true };
  const cache = new RevokedTokenCache({
    store,
    storeTimeout: 2000,
    clockTolerance: 5,
    now: () => new Date(wall),
    announcing: () => state.announcing,
    clock: { now: () => mono },
  });
  const entry = (lifetimeMs = 3_600_000): RevokedTokenRecord => ({
    tokenId: randomUUID(),
    clientId: 'esa_test',
    revokedAt: new Date(wall),
    expiresAt: new Date(wall + lifetimeMs),
  });
  return {
    store,
    cache,
    state,
    entry,
    advance: (ms: number) => {
      mono += ms;
      wall += ms;
    },
    /** Steps the wall clock alone, as NTP does (the monotonic clock goes on). */
    stepWall: (ms: number) => {
      wall += ms;
    },
    wallNow: () => wall,
  };
}

describe('RevokedTokenCache', () => {
  it('reads the list once at start-up, then answers every check without reading the store', async () => {
    const { store, cache, entry } = setUp();
    const before = entry();
    await store.revokeToken(before);
    await cache.start();
    expect(store.reads).toBe(1);
    expect(cache.check(before.tokenId)).toBe(true);
    for (let i = 0; i < 1000; i++) expect(cache.check(randomUUID())).toBe(false);
    expect(store.reads).toBe(1);
  });

  it('adds an announced revocation at once, from the change key alone', async () => {
    const { store, cache, entry } = setUp();
    await cache.start();
    const record = entry();
    await store.revokeToken(record); // announced to nobody here: the key is handed over as the feed would
    expect(cache.check(record.tokenId)).toBe(false);
    cache.onChange(revokedTokenChangeKey(record));
    expect(cache.check(record.tokenId)).toBe(true);
    expect(store.reads).toBe(1);
  });

  it("stops trusting itself on '*' and reads the list again for the next check", async () => {
    const { store, cache, entry } = setUp();
    await cache.start();
    const missed = entry();
    await store.revokeToken(missed);
    cache.onChange('*');
    expect(cache.check(missed.tokenId)).toBeUndefined();
    expect(await cache.isRevoked(missed.tokenId)).toBe(true);
    expect(store.reads).toBe(2);
    expect(cache.check(randomUUID())).toBe(false); // trusted again
  });

  it('fails a check it cannot answer when the store fails, rather than admit the token', async () => {
    const { store, cache } = setUp();
    await cache.start();
    cache.onChange('*');
    store.failing = true;
    await expect(cache.isRevoked(randomUUID())).rejects.toThrow();
    expect(cache.check(randomUUID())).toBeUndefined();
  });

  it("does not trust a read that a '*' overtook", async () => {
    const { store, cache } = setUp();
    await cache.start();
    cache.onChange('*');
    const reading = cache.isRevoked(randomUUID());
    cache.onChange('*'); // announcements missed while that read was in flight
    await reading;
    expect(cache.check(randomUUID())).toBeUndefined();
    await cache.isRevoked(randomUUID());
    expect(store.reads).toBe(3);
  });

  it(`without announcements, trusts a read for ${WATCHLESS_TTL_MS} ms, then reads again`, async () => {
    const { store, cache, advance, entry } = setUp({ announcing: false });
    await cache.start();
    expect(cache.check(randomUUID())).toBe(false);
    advance(WATCHLESS_TTL_MS - 1);
    expect(cache.check(randomUUID())).toBe(false);
    const record = entry();
    await store.revokeToken(record);
    advance(1);
    expect(cache.check(record.tokenId)).toBeUndefined();
    expect(await cache.isRevoked(record.tokenId)).toBe(true);
    expect(store.reads).toBe(2);
  });

  it("drops an entry once its token has expired (exp plus the clock tolerance), checked once a minute", async () => {
    const { cache, advance, entry } = setUp();
    await cache.start();
    const short = entry(30_000);
    cache.onChange(revokedTokenChangeKey(short));
    expect(cache.size).toBe(1);
    advance(60_000);
    cache.onChange(revokedTokenChangeKey(entry())); // any addition prunes, at most once a minute
    expect(cache.check(short.tokenId)).toBe(false);
    expect(cache.size).toBe(1);
  });

  it('refuses a token dropped while a read was adding entries, once a clock that jumped ahead meanwhile is set back', async () => {
    const { store, cache, entry, stepWall, wallNow } = setUp();
    await cache.start();
    const record = entry(30 * 60_000); // expires in half an hour
    await store.revokeToken(record); // not announced: only a read brings it in
    cache.onChange('*');
    const reading = cache.isRevoked(randomUUID()); // the read starts now
    stepWall(2 * 3_600_000); // the clock jumps two hours ahead before the answer arrives
    await reading; // adding the entries prunes, on the clock two hours ahead: the entry is dropped
    stepWall(-2 * 3_600_000); // NTP sets it right: the token verifies again
    const answer = cache.check(record.tokenId, wallNow());
    expect(answer === true || answer === undefined).toBe(true);
    expect(await cache.isRevoked(record.tokenId)).toBe(true);
  });

  it('answers not revoked, without reading, for a store that keeps no deny-list', async () => {
    const store = new MemoryAccountStore();
    Object.assign(store, { listRevokedTokens: undefined, revokeToken: undefined });
    const cache = new RevokedTokenCache({ store, storeTimeout: 2000, clockTolerance: 5, now: () => new Date(), announcing: () => false });
    await cache.start();
    expect(cache.check(randomUUID())).toBe(false);
  });
});
