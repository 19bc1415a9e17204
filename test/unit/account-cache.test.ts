/**
 * AccountCache: the per-instance account cache behind the token endpoint and requireBearer. The store
 * is a GatedStore (reads answer when the test says so) and time is vitest's fake clock: no sleeps.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StoreUnavailableError } from '../../src/errors.js';
import { AccountCache, WATCHLESS_TTL_MS } from '../../src/runtime/account-cache.js';
import { IdFactory } from '../../src/testing/contract-fixtures.js';
import { MemoryAccountStore, type AccountChangeListener, type ChangeFeedState, type WatchOptions } from '../../src/index.js';
import { ForwardingStore } from '../helpers/forwarding-store.js';
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

/** A millisecond clock the test moves by hand (the cache's `clock` option). Never 0: lru-cache reads 0 as "no start". */
class ManualClock {
  ms = 1_000_000;
  now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

/**
 * A memory store whose change feed the test drives: announcements come from the memory store's own
 * changes, and the state of the feed (`push`, `failing`, ...) is reported by `report()`.
 */
class ReportingStore extends ForwardingStore {
  readonly #watchers: WatchOptions[] = [];
  readonly #memory: MemoryAccountStore;
  constructor(memory = new MemoryAccountStore()) {
    super(memory);
    this.#memory = memory;
  }
  async watch(listener: AccountChangeListener, options?: WatchOptions): Promise<() => Promise<void>> {
    const watcher = options ?? {};
    this.#watchers.push(watcher);
    const unwatch = await this.#memory.watch(listener);
    return async () => {
      this.#watchers.splice(this.#watchers.indexOf(watcher), 1);
      await unwatch();
    };
  }
  /** Tells every watcher the feed's new state. */
  report(state: ChangeFeedState): void {
    for (const watcher of this.#watchers) watcher.onStateChange?.(state);
  }
}

async function setUpWithClock(options: { watch?: boolean; statusCacheTtl?: number; onFeedState?: (state: ChangeFeedState) => void } = {}) {
  const clock = new ManualClock();
  const feed = new ReportingStore();
  const store = new GatedStore(feed, { watch: options.watch ?? true });
  const cache = new AccountCache({
    store,
    storeTimeout: 2000,
    statusCacheTtl: options.statusCacheTtl ?? 30_000,
    clock,
    ...(options.onFeedState ? { onFeedState: options.onFeedState } : {}),
  });
  await cache.start();
  const account = ids.account();
  await store.inner.createAccount(account);
  return { clock, feed, store, cache, clientId: account.clientId, secretId: account.secret.id };
}

describe('AccountCache: the clock option', () => {
  it('measures lifetimes on the injected clock only', async () => {
    const { clock, store, cache, clientId } = await setUpWithClock({ watch: false });
    await cache.get(clientId);
    vi.advanceTimersByTime(3_600_000); // wall time (faked Date, timers) does not age entries
    expect(cache.peek(clientId)).toBeDefined();
    clock.advance(WATCHLESS_TTL_MS + 1);
    expect(cache.peek(clientId)).toBeUndefined();
    expect(store.findCalls).toBe(1);
  });
});

describe('AccountCache: lifetimes on the injected clock', () => {
  it('with watch, an entry lives exactly statusCacheTtl from the start of its read', async () => {
    const { clock, cache, clientId } = await setUpWithClock({ statusCacheTtl: 30_000 });
    await cache.get(clientId);
    clock.advance(30_000);
    expect(cache.peek(clientId)).toBeDefined();
    clock.advance(1);
    expect(cache.peek(clientId)).toBeUndefined();
  });

  it('with watch, a slow read is cached only for what is left of statusCacheTtl from its start', async () => {
    const { clock, store, cache, clientId } = await setUpWithClock({ statusCacheTtl: 30_000 });
    store.holding = true;
    const slow = cache.get(clientId);
    const [read] = await store.heldReads(1);
    clock.advance(20_000);
    read!.release();
    await slow;
    clock.advance(10_000);
    expect(cache.peek(clientId)).toBeDefined();
    clock.advance(1);
    expect(cache.peek(clientId)).toBeUndefined();
  });

  it('without watch, a statusCacheTtl under 500 ms is kept (the bound is a ceiling)', async () => {
    const { clock, cache, clientId } = await setUpWithClock({ watch: false, statusCacheTtl: 200 });
    await cache.get(clientId);
    clock.advance(200);
    expect(cache.peek(clientId)).toBeDefined();
    clock.advance(1);
    expect(cache.peek(clientId)).toBeUndefined();
  });

  // A lifetime of 0 would mean "never expires" to the LRU: a read that used up its whole lifetime
  // must not be cached at all.
  it('a read that answers when its lifetime is used up is not cached, then or later', async () => {
    const { clock, store, cache, clientId } = await setUpWithClock({ watch: false });
    store.holding = true;
    const slow = cache.get(clientId);
    const [read] = await store.heldReads(1);
    clock.advance(WATCHLESS_TTL_MS);
    read!.release();
    expect(await slow).toMatchObject({ clientId });
    expect(cache.peek(clientId)).toBeUndefined();
    clock.advance(60_000);
    expect(cache.peek(clientId)).toBeUndefined();
  });

  it('with watch, a request does not join a read that began statusCacheTtl or more ago', async () => {
    const { clock, store, cache, clientId } = await setUpWithClock({ statusCacheTtl: 1000 });
    store.holding = true;
    void cache.get(clientId);
    await store.heldReads(1);
    clock.advance(999);
    void cache.get(clientId);
    expect(store.findCalls).toBe(1);
    clock.advance(1);
    void cache.get(clientId);
    expect(store.findCalls).toBe(2);
  });
});

describe('AccountCache: a failing change feed', () => {
  // Docs (observability.md, changeFeed.status): "failing: the change feed cannot be read", so changes
  // may go unannounced: the cache falls back to the 500 ms bound of a store that cannot watch.
  it('while the store reports its feed failing, new entries live 500 ms; once it recovers, statusCacheTtl again', async () => {
    const { clock, feed, store, cache, clientId } = await setUpWithClock({ statusCacheTtl: 30_000 });
    feed.report('failing');
    await cache.get(clientId);
    clock.advance(WATCHLESS_TTL_MS);
    expect(cache.peek(clientId)).toBeDefined();
    clock.advance(1);
    expect(cache.peek(clientId)).toBeUndefined();

    feed.report('push');
    await cache.get(clientId);
    clock.advance(29_000);
    expect(cache.peek(clientId)).toBeDefined();
    expect(store.findCalls).toBe(2);
  });

  it('while the feed is failing, a request does not join a read that began 500 ms ago', async () => {
    const { clock, feed, store, cache, clientId } = await setUpWithClock({ statusCacheTtl: 30_000 });
    store.holding = true;
    void cache.get(clientId);
    await store.heldReads(1);
    feed.report('failing');
    clock.advance(WATCHLESS_TTL_MS);
    void cache.get(clientId);
    expect(store.findCalls).toBe(2);
  });

  // Docs (observability.md): "failing: the change feed cannot be read, so cached account status is
  // dropped". A store may report the state without announcing '*' (WatchOptions asks for no more).
  it('an entry cached before the feed started failing is dropped when it does', async () => {
    const { feed, store, cache, clientId } = await setUpWithClock({ statusCacheTtl: 30_000 });
    await cache.get(clientId);
    feed.report('failing');
    expect(cache.peek(clientId)).toBeUndefined();
    await cache.get(clientId);
    expect(store.findCalls).toBe(2);
  });

  it.each(['reconnecting', 'polling', 'push'] as const)('a feed that is %s still delivers changes: entries keep statusCacheTtl', async (state) => {
    const { clock, feed, cache, clientId } = await setUpWithClock({ statusCacheTtl: 30_000 });
    feed.report(state);
    await cache.get(clientId);
    clock.advance(29_000);
    expect(cache.peek(clientId)).toBeDefined();
  });

  it('passes every state the store reports to onFeedState', async () => {
    const states: ChangeFeedState[] = [];
    const { feed } = await setUpWithClock({ onFeedState: (state) => states.push(state) });
    feed.report('push');
    feed.report('failing');
    feed.report('reconnecting');
    expect(states).toEqual(['push', 'failing', 'reconnecting']);
  });
});

describe('AccountCache: start', () => {
  // docs/stores.md: a store call that does not settle within storeTimeout fails (503) and the next
  // call tries again; a watch that starts after its start gave up must not stay behind as a second one.
  it('a watch that starts after storeTimeout is stopped as soon as it does, and tells the cache nothing', async () => {
    class LateStore extends ReportingStore {
      calls = 0;
      stopped = 0;
      override async watch(listener: AccountChangeListener, options?: WatchOptions): Promise<() => Promise<void>> {
        if (++this.calls === 1) await new Promise((resolve) => setTimeout(resolve, 3000));
        const unwatch = await super.watch(listener, options);
        return async () => {
          this.stopped++;
          await unwatch();
        };
      }
    }
    const store = new LateStore();
    const states: ChangeFeedState[] = [];
    const cache = new AccountCache({ store, storeTimeout: 2000, statusCacheTtl: 30_000, onFeedState: (state) => states.push(state) });
    const first = cache.start();
    const failed = expect(first).rejects.toBeInstanceOf(StoreUnavailableError);
    await vi.advanceTimersByTimeAsync(2000);
    await failed;
    await cache.start(); // tried again: watches at once
    await vi.advanceTimersByTimeAsync(1000); // the first watch starts now
    expect(store.stopped).toBe(1);
    store.report('failing');
    expect(states).toEqual(['failing']); // told once, by the watch that is in use
    await cache.stop();
    expect(store.stopped).toBe(2);
  });
});

describe('AccountCache: invalidation', () => {
  it('invalidating one client ID drops only its entry', async () => {
    const { store, cache, clientId } = await setUpWithClock();
    const other = ids.account();
    await store.inner.createAccount(other);
    await cache.get(clientId);
    await cache.get(other.clientId);
    cache.invalidate(clientId);
    expect(cache.peek(clientId)).toBeUndefined();
    expect(cache.peek(other.clientId)).toBeDefined();
  });

  it('a detached read that answers first does not end the newer read that requests now share', async () => {
    const { store, cache, clientId } = await setUpWithClock();
    store.holding = true;
    const early = cache.get(clientId);
    const [stale] = await store.heldReads(1);
    cache.invalidate(clientId);
    const late = cache.get(clientId);
    const [, fresh] = await store.heldReads(2);
    stale!.release();
    await early;
    const later = cache.get(clientId); // joins the newer read, still in flight
    expect(store.findCalls).toBe(2);
    fresh!.release();
    expect(await later).toBe(await late);
    expect(cache.peek(clientId)?.account).toBe(await late);
  });

  it("a change the store announces detaches the client ID's read in flight", async () => {
    const { store, cache, clientId, secretId } = await setUpWithClock();
    store.holding = true;
    const early = cache.get(clientId);
    const [stale] = await store.heldReads(1);
    await revoke(store, clientId, secretId); // announced by the store, not invalidated by hand
    const late = cache.get(clientId);
    expect(store.findCalls).toBe(2);
    const [, fresh] = await store.heldReads(2);
    fresh!.release();
    stale!.release();
    expect(revokedAt(await late)).not.toBeNull();
    expect(revokedAt(await early)).toBeNull();
    expect(revokedAt(cache.peek(clientId)?.account)).not.toBeNull();
  });

  it('tells onInvalidate listeners every client ID dropped, by hand or announced by the store', async () => {
    const { store, cache, clientId, secretId } = await setUpWithClock();
    const dropped: string[] = [];
    cache.onInvalidate((id) => dropped.push(id));
    cache.invalidate('svc_other');
    await revoke(store, clientId, secretId);
    cache.invalidate('*');
    expect(dropped).toEqual(['svc_other', clientId, '*']);
  });
});

describe('AccountCache: counts', () => {
  it('counts a lookup answered from the cache as a hit and one that needs the store (or waits for it) as a miss', async () => {
    const { store, cache, clientId } = await setUpWithClock();
    expect(cache.counts()).toEqual({ hits: 0, misses: 0 });
    expect(cache.peek(clientId)).toBeUndefined(); // nothing cached: neither
    expect(cache.counts()).toEqual({ hits: 0, misses: 0 });
    store.holding = true;
    const first = cache.get(clientId);
    const joined = cache.get(clientId); // shares the read, but still waits for the store
    const [read] = await store.heldReads(1);
    read!.release();
    await Promise.all([first, joined]);
    expect(cache.counts()).toEqual({ hits: 0, misses: 2 });
    await cache.get(clientId);
    cache.peek(clientId);
    expect(cache.counts()).toEqual({ hits: 2, misses: 2 });
    expect(store.findCalls).toBe(1);
  });
});

describe('AccountCache: start and stop', () => {
  it('without watch, start() leaves it not watching and entries bound to 500 ms', async () => {
    const { clock, cache, clientId } = await setUpWithClock({ watch: false, statusCacheTtl: 30_000 });
    expect(cache.watching).toBe(false);
    await cache.get(clientId);
    clock.advance(WATCHLESS_TTL_MS + 1);
    expect(cache.peek(clientId)).toBeUndefined();
  });

  it('start() twice subscribes once', async () => {
    const { store, cache, clientId, secretId } = await setUpWithClock();
    await cache.start();
    const dropped: string[] = [];
    cache.onInvalidate((id) => dropped.push(id));
    await revoke(store, clientId, secretId);
    expect(dropped).toEqual([clientId]);
  });

  it('stop() drops every entry and stops listening to the store', async () => {
    const { store, cache, clientId, secretId } = await setUpWithClock();
    await cache.get(clientId);
    expect(cache.watching).toBe(true);
    await cache.stop();
    expect(cache.watching).toBe(false);
    expect(cache.peek(clientId)).toBeUndefined();
    const dropped: string[] = [];
    cache.onInvalidate((id) => dropped.push(id));
    await revoke(store, clientId, secretId);
    expect(dropped).toEqual([]);
  });
});
