/**
 * AccountCache: the per-instance account cache behind the token endpoint and requireBearer. The store
 * is a GatedStore (reads answer when the test says so) and time is vitest's fake clock: no sleeps.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StoreUnavailableError } from '../../src/errors.js';
import { AccountCache, WATCHLESS_TTL_MS } from '../../src/store/account-cache.js';
import { IdFactory } from '../../src/testing/contract-fixtures.js';
import { GatedStore } from '../helpers/gated-store.js';

const ids = new IdFactory();
const fakeClock = { now: () => Date.now() }; // Date is faked below

async function setUp(options: { watch?: boolean; statusCacheTtl?: number } = {}) {
  const store = new GatedStore(undefined, { watch: options.watch ?? true });
  const cache = new AccountCache({ store, storeTimeout: 2000, statusCacheTtl: options.statusCacheTtl ?? 30_000, clock: fakeClock });
  await cache.start();
  const account = ids.account();
  await store.inner.createAccount(account);
  return { store, cache, clientId: account.clientId, secretId: account.secret.id };
}

/** The record as the store has it now (bypassing the gate). */
const revoke = (store: GatedStore, clientId: string, secretId: string) => store.inner.revokeSecret(clientId, secretId, new Date());
const revokedAt = (account: { secrets: readonly { revokedAt: Date | null }[] } | undefined) => account?.secrets[0]?.revokedAt ?? null;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('AccountCache: reads in flight', () => {
  it('concurrent misses for one client ID share one store read', async () => {
    const { store, cache, clientId } = await setUp();
    store.holding = true;
    const answers = [cache.get(clientId), cache.get(clientId), cache.get(clientId)];
    const [read] = await store.heldReads(1);
    read!.release();
    const [a, b, c] = await Promise.all(answers);
    expect(store.findCalls).toBe(1);
    expect(a?.clientId).toBe(clientId);
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect(cache.peek(clientId)?.account).toBe(a);
  });

  // Docs (security.md, revocation): a request arriving after this instance heard of a revocation is
  // never answered from a store read that began before it, however slow the store.
  it('a request arriving after an invalidation does not join the older read: it starts a fresh one and gets the new record', async () => {
    const { store, cache, clientId, secretId } = await setUp();
    store.holding = true;
    const before = cache.get(clientId); // arrived before the revocation
    const [stale] = await store.heldReads(1);
    await revoke(store, clientId, secretId);
    cache.invalidate(clientId);
    const after = cache.get(clientId); // arrived after it
    expect(store.findCalls).toBe(2);
    const [, fresh] = await store.heldReads(2);
    fresh!.release();
    expect(revokedAt(await after)).not.toBeNull();
    // The older read finishing last neither changes that answer nor overwrites the cached fresh one.
    stale!.release();
    expect(revokedAt(await before)).toBeNull(); // it arrived before the revocation: see the module comment
    expect(revokedAt(cache.peek(clientId)?.account)).not.toBeNull();
  });

  it('the answer of a read that began before an invalidation is never cached', async () => {
    const { store, cache, clientId, secretId } = await setUp();
    store.holding = true;
    const before = cache.get(clientId);
    const [stale] = await store.heldReads(1);
    await revoke(store, clientId, secretId);
    cache.invalidate(clientId);
    stale!.release();
    await before;
    expect(cache.peek(clientId)).toBeUndefined();
    store.holding = false;
    expect(revokedAt(await cache.get(clientId))).not.toBeNull();
    expect(store.findCalls).toBe(2);
  });

  it("invalidating one client ID leaves other client IDs' reads shared and cacheable", async () => {
    const { store, cache, clientId } = await setUp();
    store.holding = true;
    const first = cache.get(clientId);
    const [read] = await store.heldReads(1);
    cache.invalidate(ids.clientId());
    const second = cache.get(clientId);
    expect(store.findCalls).toBe(1);
    read!.release();
    expect(await second).toBe(await first);
    expect(cache.peek(clientId)?.account).toBe(await first);
  });

  it("'*' drops every entry and detaches every read in flight", async () => {
    const { store, cache, clientId } = await setUp();
    const other = ids.account();
    await store.inner.createAccount(other);
    await cache.get(clientId);
    await cache.get(other.clientId);
    const third = ids.account();
    await store.inner.createAccount(third);
    store.holding = true;
    const early = cache.get(third.clientId);
    const [stale] = await store.heldReads(1);
    cache.invalidate('*');
    expect(cache.peek(clientId)).toBeUndefined();
    expect(cache.peek(other.clientId)).toBeUndefined();
    const late = cache.get(third.clientId);
    const [, fresh] = await store.heldReads(2);
    stale!.release();
    await early;
    expect(cache.peek(third.clientId)).toBeUndefined();
    fresh!.release();
    await late;
    expect(cache.peek(third.clientId)).toBeDefined();
  });

  it('a failing read rejects every joiner with StoreUnavailableError and is not cached', async () => {
    const { store, cache, clientId } = await setUp();
    store.holding = true;
    const answers = [cache.get(clientId), cache.get(clientId), cache.get(clientId)];
    const [read] = await store.heldReads(1);
    read!.fail(new Error('connection reset'));
    const settled = await Promise.allSettled(answers);
    for (const outcome of settled) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
    }
    expect(store.findCalls).toBe(1);
    expect(cache.peek(clientId)).toBeUndefined();
    store.holding = false;
    await expect(cache.get(clientId)).resolves.toMatchObject({ clientId });
    expect(store.findCalls).toBe(2);
  });
});

describe('AccountCache: lifetimes', () => {
  // Docs (configuration.md, statusCacheTtl): "Without watch, the cache lifetime is capped at 500 ms so
  // revocation takes effect within 1 s."
  it('without watch, an entry lives at most 500 ms from the start of its read', async () => {
    const { store, cache, clientId } = await setUp({ watch: false });
    await cache.get(clientId);
    vi.advanceTimersByTime(WATCHLESS_TTL_MS);
    expect(cache.peek(clientId)).toBeDefined();
    vi.advanceTimersByTime(1);
    expect(cache.peek(clientId)).toBeUndefined();
    expect(store.findCalls).toBe(1);
  });

  it('without watch, a slow read is cached only for what is left of 500 ms from its start, and a request never joins an older read', async () => {
    const { store, cache, clientId } = await setUp({ watch: false });
    store.holding = true;
    const slow = cache.get(clientId);
    const [read] = await store.heldReads(1);
    vi.advanceTimersByTime(400);
    expect(store.findCalls).toBe(1);
    const joined = cache.get(clientId); // 400 ms after the read began: may join
    expect(store.findCalls).toBe(1);
    read!.release();
    expect(await joined).toBe(await slow);
    vi.advanceTimersByTime(100);
    expect(cache.peek(clientId)).toBeDefined();
    vi.advanceTimersByTime(1);
    expect(cache.peek(clientId)).toBeUndefined();

    const older = cache.get(clientId);
    const [, second] = await store.heldReads(2);
    vi.advanceTimersByTime(WATCHLESS_TTL_MS);
    void cache.get(clientId); // 500 ms after the read began: a read of its own
    expect(store.findCalls).toBe(3);
    second!.release();
    await older;
    expect(cache.peek(clientId)).toBeUndefined(); // no lifetime left, and a newer read is in flight
  });

  it('with watch, an entry lives statusCacheTtl until a change is announced', async () => {
    const { store, cache, clientId, secretId } = await setUp({ watch: true, statusCacheTtl: 30_000 });
    await cache.get(clientId);
    vi.advanceTimersByTime(29_000);
    expect(cache.peek(clientId)).toBeDefined();
    await revoke(store, clientId, secretId); // MemoryAccountStore announces it to watchers
    expect(cache.peek(clientId)).toBeUndefined();
  });

  it('statusCacheTtl 0 never caches, and every request reads the store itself', async () => {
    const { store, cache, clientId } = await setUp({ statusCacheTtl: 0 });
    await cache.get(clientId);
    expect(cache.peek(clientId)).toBeUndefined();
    store.holding = true;
    const answers = [cache.get(clientId), cache.get(clientId)];
    const reads = await store.heldReads(2);
    for (const read of reads) read.release();
    await Promise.all(answers);
    expect(store.findCalls).toBe(3);
    expect(cache.peek(clientId)).toBeUndefined();
  });
});
