/**
 * `sa.health()` and the `onEvent` hook (docs/observability.md): the state of each part as a typed
 * report that never throws and answers within the store timeout; and an operator told when the store
 * or the limiter's Redis goes away and comes back, and when the secret-check queue fills up, with a
 * few events per outage (never one per request) and never a secret.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryAccountStore, type AccountChangeListener, type ChangeFeedState, type OperationalEvent, type WatchOptions } from '../../src/index.js';
import { MAX_EVENTS_PER_MINUTE } from '../../src/runtime/call-store.js';
import { createTestApp } from '../helpers/create-app.js';
import { listen, redisUrl, RedisProxy, testKeyPrefix, tokenRequest, UnreliableStore, type LiveServer, type RawResponse } from '../hardening/helpers.js';
import { heldBcrypt } from '../helpers/held-bcrypt.js';
import { secretWithId } from '../helpers/secret-values.js';

// bcrypt compares counted, and held until released (test/helpers/held-bcrypt.ts).
vi.mock('bcrypt', async (importOriginal) => (await import('../helpers/held-bcrypt.js')).withHeldCompares(await importOriginal()));

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.useRealTimers();
  heldBcrypt.release();
  for (const close of closers.splice(0).reverse()) await close();
});

async function started(options: Parameters<typeof createTestApp>[0] = {}) {
  const events: OperationalEvent[] = [];
  const made = createTestApp({ ...options, onEvent: (event) => void events.push(event) });
  closers.push(() => made.sa.close());
  const server: LiveServer = await listen(made.app);
  closers.push(() => server.close());
  return { ...made, server, events };
}

/** One turn of the (real) event loop. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Waits until `check` passes (events are delivered off the request path). */
const eventually = (check: () => void): Promise<void> => vi.waitFor(check, { timeout: 2000, interval: 10 });

describe('sa.health()', () => {
  it('reports ok with every part, when everything answers', async () => {
    const { sa } = await started();
    const report = await sa.health();
    expect(report).toEqual({
      status: 'ok',
      checkedAt: expect.any(Date),
      store: { status: 'ok', latencyMs: expect.any(Number) },
      changeFeed: { status: 'watching' },
      limiter: { status: 'ok', backend: 'memory' },
      secretChecks: { running: 0, queued: 0, queueLimit: 256 },
    });
  });

  it('reports the limiter off when failureLimit is false', async () => {
    const { sa } = await started({ failureLimit: false });
    expect((await sa.health()).limiter).toEqual({ status: 'off', backend: 'none' });
  });

  for (const mode of ['fail', 'hang'] as const) {
    it(`reports unavailable, without throwing and within storeTimeout, when the store ${mode === 'fail' ? 'fails' : 'hangs'}`, async () => {
      const store = new UnreliableStore();
      const { sa, clock } = await started({ store, storeTimeout: 150 });
      await sa.ready();
      // The bound is the store call's deadline, a timer: only setTimeout and clearTimeout are faked, so
      // the test moves that clock instead of measuring wall time. A hung store's report is still
      // pending 1 ms before storeTimeout and ready when it has passed; a failing store's comes with no
      // time passing at all.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      store.mode = mode;
      let answered = false;
      const reported = sa.health().finally(() => (answered = true));
      await store.calledWhileDown(1); // the probe reached the store: its deadline runs
      if (mode === 'hang') {
        await vi.advanceTimersByTimeAsync(149);
        await nextTurn();
        expect(answered).toBe(false);
        await vi.advanceTimersByTimeAsync(1);
      }
      await nextTurn();
      expect(answered).toBe(true);
      const report = await reported;
      vi.useRealTimers();
      expect(report.status).toBe('unavailable');
      expect(report.store.status).toBe('unavailable');
      if (mode === 'hang') expect(report.store.error).toMatch(/timed out after 150 ms/);
      // The store's own message (host names, credentials) never reaches the report.
      expect(JSON.stringify(report)).not.toMatch(/hunter2|10\.0\.0\.5/);
      store.mode = 'ok';
      clock.advance(1); // past the second a probe's result is reused for
      expect((await sa.health()).status).toBe('ok');
    });
  }
});

describe('sa.health() under load', () => {
  /** A store that counts the reads health probes make. */
  class CountingStore extends UnreliableStore {
    probes = 0;
    override findAccount(clientId: string) {
      this.probes++;
      return super.findAccount(clientId);
    }
  }

  // docs/observability.md: "Calls made while a probe runs share it", so a flood of readiness requests
  // cannot become a flood of database reads.
  it('shares one probe among concurrent calls', async () => {
    const store = new CountingStore();
    const { sa } = await started({ store });
    await sa.ready();
    store.probes = 0;
    const reports = await Promise.all(Array.from({ length: 200 }, () => sa.health()));
    expect(store.probes).toBe(1);
    expect(new Set(reports.map((r) => r.checkedAt.getTime())).size).toBe(1);
    expect(reports.every((r) => r.status === 'ok')).toBe(true);
  });

  // docs/observability.md: "a probe's result answers every call for 1 second (by the configured clock)".
  it('reuses a probe for 1 second, then probes again and sees a change', async () => {
    const store = new CountingStore();
    const { sa, clock } = await started({ store, storeTimeout: 150 });
    await sa.ready();
    store.probes = 0;
    expect((await sa.health()).status).toBe('ok');
    store.mode = 'fail';
    clock.advance(0.999);
    for (let i = 0; i < 100; i++) expect((await sa.health()).status).toBe('ok');
    expect(store.probes).toBe(1);
    clock.advance(0.001);
    const report = await sa.health();
    expect(report).toMatchObject({ status: 'unavailable', checkedAt: clock.now() });
    expect(store.probes).toBe(2);
    // A failure is reused too: a down store is not asked once per readiness request either.
    for (let i = 0; i < 100; i++) expect((await sa.health()).status).toBe('unavailable');
    expect(store.probes).toBe(2);
  });

  it('reads the change feed live, between probes', async () => {
    const store = new StateReportingStore();
    const { sa } = await started({ store });
    await sa.ready();
    store.report('push');
    expect((await sa.health()).status).toBe('ok');
    store.report('failing');
    expect(await sa.health()).toMatchObject({ status: 'degraded', changeFeed: { status: 'failing' } });
  });
});

describe('operational events', () => {
  it('tells of a store outage once, however many requests it fails, and of its end', async () => {
    const store = new UnreliableStore();
    const { sa, server, events } = await started({ store, storeTimeout: 200 });
    const account = await sa.admin.createAccount({ name: 'outage' });
    const right = { grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value };
    store.mode = 'fail';
    for (let i = 0; i < 5; i++) expect((await tokenRequest(server, right)).status).toBe(503);
    await eventually(() => expect(events.map((e) => e.type)).toEqual(['store.unavailable']));
    store.mode = 'ok';
    expect((await tokenRequest(server, right)).status).toBe(200);
    await eventually(() => expect(events.map((e) => e.type)).toEqual(['store.unavailable', 'store.recovered']));
    expect(events[0]).toMatchObject({ dependency: 'store', operation: 'findAccount', error: expect.stringContaining('StoreUnavailableError') });
    expect(events[1]).toMatchObject({ dependency: 'store', downtimeMs: expect.any(Number) });
    expect(JSON.stringify(events)).not.toMatch(/hunter2|10\.0\.0\.5|esas_/);
  });

  it(`limits a flapping store to ${MAX_EVENTS_PER_MINUTE} events a minute`, async () => {
    const store = new UnreliableStore();
    const { sa, events, clock } = await started({ store, statusCacheTtl: 0 });
    await sa.ready();
    for (let i = 0; i < 20; i++) {
      store.mode = i % 2 === 0 ? 'fail' : 'ok';
      await sa.health();
      clock.advance(1); // a new probe each time, still within one minute
    }
    await new Promise((resolve) => setImmediate(resolve));
    await eventually(() => expect(events.length).toBe(MAX_EVENTS_PER_MINUTE));
  });

  // docs/observability.md: a flapping dependency gives at most 6 events a minute (by the configured
  // clock), and its last change is told once the limit allows: an outage that outlasts the flapping
  // must not stay untold, and a recovery must not leave an unavailable event as the last word.
  it("tells an outage that outlasts a flapping store once the minute's limit allows, at its next call", async () => {
    const store = new UnreliableStore();
    const { sa, events, clock } = await started({ store, statusCacheTtl: 0 });
    await sa.ready();
    // Down, up, down, up, down, up: six events, the limit. Then down once more, and it stays down.
    for (let i = 0; i < 7; i++) {
      store.mode = i % 2 === 0 ? 'fail' : 'ok';
      await sa.health();
      clock.advance(1); // a new probe each time
    }
    await nextTurn();
    await eventually(() => expect(events).toHaveLength(MAX_EVENTS_PER_MINUTE));
    expect(events.at(-1)!.type).toBe('store.recovered');
    clock.advance(60);
    await sa.health();
    await eventually(() => expect(events).toHaveLength(MAX_EVENTS_PER_MINUTE + 1));
    expect(events.at(-1)).toMatchObject({ type: 'store.unavailable', dependency: 'store', operation: 'health probe', error: expect.stringContaining('StoreUnavailableError') });
    // Told once: further calls in the same state tell nothing more.
    clock.advance(1);
    await sa.health();
    await nextTurn();
    expect(events).toHaveLength(MAX_EVENTS_PER_MINUTE + 1);
  });

  it("tells a flapping store's recovery once the minute's limit allows, never leaving it told as unavailable", async () => {
    const store = new UnreliableStore();
    const { sa, events, clock } = await started({ store, statusCacheTtl: 0 });
    await sa.ready();
    // Six changes two seconds apart: the limit, reached at 10 s.
    for (let i = 0; i < 6; i++) {
      store.mode = i % 2 === 0 ? 'fail' : 'ok';
      await sa.health();
      clock.advance(2);
    }
    // At 60 s the first event has left the minute: a new outage is told; its end, a second later, is
    // over the limit again and waits.
    clock.advance(48);
    store.mode = 'fail';
    await sa.health();
    await eventually(() => expect(events).toHaveLength(MAX_EVENTS_PER_MINUTE + 1));
    expect(events.at(-1)!.type).toBe('store.unavailable');
    clock.advance(1);
    store.mode = 'ok';
    await sa.health();
    await nextTurn();
    expect(events).toHaveLength(MAX_EVENTS_PER_MINUTE + 1);
    // The store stays up; a minute on, its next call tells that it recovered.
    clock.advance(60);
    await sa.health();
    await eventually(() => expect(events).toHaveLength(MAX_EVENTS_PER_MINUTE + 2));
    expect(events.at(-1)).toMatchObject({ type: 'store.recovered', downtimeMs: 61_000 });
    // Events alternate, so every unavailable event is followed by its recovery.
    events.forEach((event, i) => expect(event.type).toBe(i % 2 === 0 ? 'store.unavailable' : 'store.recovered'));
  });

  it('measures downtime from the unavailable event that was told', async () => {
    const store = new UnreliableStore();
    const { sa, events, clock } = await started({ store, statusCacheTtl: 0 });
    await sa.ready();
    store.mode = 'fail';
    await sa.health();
    clock.advance(30);
    await sa.health();
    store.mode = 'ok';
    clock.advance(30);
    await sa.health();
    await eventually(() => expect(events.map((e) => e.type)).toEqual(['store.unavailable', 'store.recovered']));
    expect(events[1]).toMatchObject({ downtimeMs: 60_000 });
  });

  it("tells each change of the store's change-feed state with the one before, and health shows the current one", async () => {
    const store = new StateReportingStore();
    const { sa, events } = await started({ store });
    await sa.ready();
    store.report('push');
    store.report('failing');
    expect((await sa.health()).changeFeed).toEqual({ status: 'failing' });
    store.report('push');
    expect((await sa.health()).changeFeed).toEqual({ status: 'push' });
    await eventually(() =>
      expect(events.filter((e) => e.type === 'change_feed.state_changed').map(({ state, previous }) => ({ state, previous }))).toEqual([
        { state: 'push', previous: undefined },
        { state: 'failing', previous: 'push' },
        { state: 'push', previous: 'failing' },
      ]),
    );
  });

  it('tells that the secret-check queue is full, at most once every 10 seconds', async () => {
    const { sa, server, events } = await started({ maxQueuedSecretChecks: 0, failureLimit: false });
    const account = await sa.admin.createAccount({ name: 'queue' });
    // Distinct values of the generated format, each its own compare (identical ones would share one).
    const guess = (i: number) => ({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: i === 0 ? account.secret.value : secretWithId(account.secret.id) });
    // Two compares run at once and none may wait: with both held, the rest of a burst is refused with 503.
    heldBcrypt.compares = 0;
    heldBcrypt.hold();
    const answered: RawResponse[] = [];
    const burst = Array.from({ length: 8 }, (_, i) => tokenRequest(server, guess(i)).then((res) => (answered.push(res), res)));
    // Every request of the burst holds a slot or was answered (no compare ends while they are held).
    await vi.waitFor(
      async () => {
        const { running, queued } = (await sa.health()).secretChecks;
        expect(running + queued + answered.length).toBe(8);
      },
      { timeout: 10_000, interval: 5 },
    );
    expect(answered.map((r) => r.status)).toEqual(Array(6).fill(503));
    expect(heldBcrypt.compares).toBe(2);
    await eventually(() => expect(events.filter((e) => e.type === 'secret_checks.saturated')).toHaveLength(1));
    heldBcrypt.release();
    // The two that held a slot are answered as their secret deserves (the first is the right one).
    const statuses = (await Promise.all(burst)).map((r) => r.status);
    expect(statuses.filter((status) => status === 503)).toHaveLength(6);
    statuses.forEach((status, i) => status === 503 || expect(status).toBe(i === 0 ? 200 : 401));
    expect(events.filter((e) => e.type === 'secret_checks.saturated')).toHaveLength(1);
  });
});

const url = redisUrl('health and events');
describe.runIf(url)('the limiter on Redis', () => {
  it('reports degraded and tells that the limiter is unavailable (failing closed), then recovered', async () => {
    const proxy = await RedisProxy.start(url!);
    closers.push(() => proxy.close());
    const redis = new Redis({ host: '127.0.0.1', port: proxy.port, keyPrefix: testKeyPrefix(), maxRetriesPerRequest: 1, retryStrategy: () => 50 });
    redis.on('error', () => {});
    closers.push(async () => void redis.disconnect());
    await redis.ping();
    const { sa, events, clock } = await started({ failureLimit: { max: 5, redis }, storeTimeout: 1000 });
    expect((await sa.health()).limiter).toEqual({ status: 'ok', backend: 'redis' });
    proxy.freeze();
    clock.advance(1); // past the second a probe's result is reused for
    const report = await sa.health();
    expect(report.status).toBe('degraded');
    expect(report.limiter).toMatchObject({ status: 'unavailable', backend: 'redis' });
    await eventually(() => expect(events.map((e) => e.type)).toContain('limiter.unavailable'));
    expect(events.find((e) => e.type === 'limiter.unavailable')).toMatchObject({ failMode: 'closed' });
    proxy.restore();
    await vi.waitFor(
      async () => {
        clock.advance(1);
        expect((await sa.health()).status).toBe('ok');
      },
      { timeout: 5000, interval: 50 },
    );
    await eventually(() => expect(events.map((e) => e.type)).toContain('limiter.recovered'));
  });
});

/** A memory store that reports the change-feed states the test gives it, as a custom store would. */
class StateReportingStore extends MemoryAccountStore {
  #options: WatchOptions | undefined;
  override async watch(listener: AccountChangeListener, options?: WatchOptions): Promise<() => Promise<void>> {
    this.#options = options;
    return super.watch(listener);
  }
  report(state: ChangeFeedState): void {
    this.#options?.onStateChange?.(state);
  }
}
