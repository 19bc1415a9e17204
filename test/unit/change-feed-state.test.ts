/**
 * The change feed tells its watchers how changes arrive (docs/observability.md: `push`, `polling`,
 * `reconnecting`, `failing`), once watching has started and then on every change of state only; the
 * account cache keeps entries at most 500 ms while the feed is failing (announcements may be missed).
 * Time is faked; nothing sleeps.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChangeFeedState } from '../../src/index.js';
import { ChangeFeed, type ChangeNotifications } from '../../src/sql/change-feed.js';

/** A push channel the test breaks and lets reconnect. */
class TestNotifications implements ChangeNotifications {
  refuse = false;
  #onError: ((error: unknown) => void) | undefined;
  async listen(_onPayload: (payload: string) => void, onError: (error: unknown) => void): Promise<() => Promise<void>> {
    if (this.refuse) throw new Error('connection refused');
    this.#onError = onError;
    return async () => {};
  }
  break(): void {
    this.#onError?.(new Error('connection terminated'));
  }
}

describe('ChangeFeed state', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reports polling without a push channel, failing while the feed cannot be read, then polling again', async () => {
    let fail = false;
    const feed = new ChangeFeed({
      readLatestSeq: async () => 0,
      readSince: async () => {
        if (fail) throw new Error('database down');
        return [];
      },
      pollIntervalMs: 200,
      onError: () => {},
    });
    const states: ChangeFeedState[] = [];
    const stop = await feed.watch(() => {}, { onStateChange: (state) => states.push(state) });
    await vi.advanceTimersByTimeAsync(1000);
    expect(states).toEqual(['polling']);
    fail = true;
    await vi.advanceTimersByTimeAsync(1000);
    expect(states).toEqual(['polling', 'failing']);
    fail = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(states).toEqual(['polling', 'failing', 'polling']);
    await stop();
  });

  it('reports push while the push channel is connected, reconnecting while it is down, push once it is back', async () => {
    const notifications = new TestNotifications();
    const feed = new ChangeFeed({ readLatestSeq: async () => 0, readSince: async () => [], pollIntervalMs: 200, notifications, onError: () => {} });
    const states: ChangeFeedState[] = [];
    const stop = await feed.watch(() => {}, { onStateChange: (state) => states.push(state) });
    expect(states).toEqual(['push']);
    notifications.refuse = true;
    notifications.break();
    await vi.advanceTimersByTimeAsync(2000);
    expect(states).toEqual(['push', 'reconnecting']);
    notifications.refuse = false;
    await vi.advanceTimersByTimeAsync(5000);
    expect(states).toEqual(['push', 'reconnecting', 'push']);
    await stop();
  });

  it('tells watchers that join while the feed is starting its state once each', async () => {
    const notifications = new TestNotifications();
    const feed = new ChangeFeed({ readLatestSeq: async () => 0, readSince: async () => [], pollIntervalMs: 200, notifications, onError: () => {} });
    const first: ChangeFeedState[] = [];
    const second: ChangeFeedState[] = [];
    const stops = await Promise.all([
      feed.watch(() => {}, { onStateChange: (state) => first.push(state) }),
      feed.watch(() => {}, { onStateChange: (state) => second.push(state) }),
    ]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(first).toEqual(['push']);
    expect(second).toEqual(['push']);
    for (const stop of stops) await stop();
  });

  it('tells a watcher that joins a running feed its current state', async () => {
    const feed = new ChangeFeed({ readLatestSeq: async () => 0, readSince: async () => [], pollIntervalMs: 200, onError: () => {} });
    const stopFirst = await feed.watch(() => {});
    const states: ChangeFeedState[] = [];
    const stopSecond = await feed.watch(() => {}, { onStateChange: (state) => states.push(state) });
    expect(states).toEqual(['polling']);
    await stopSecond();
    await stopFirst();
  });

  it('stays failing, with one "*", while every read of the feed answers later than pollIntervalMs + 200 ms, until reads are quick again', async () => {
    // A slow database: nothing fails, but each answer comes 600 ms after the poll started (before
    // the poll's 750 ms deadline). No read arrives in time, so caches must not trust the feed.
    let slow = false;
    const feed = new ChangeFeed({
      readLatestSeq: async () => 0,
      readSince: () => new Promise((resolve) => setTimeout(() => resolve([]), slow ? 600 : 0)),
      pollIntervalMs: 200,
      onError: () => {},
    });
    const states: ChangeFeedState[] = [];
    const announced: string[] = [];
    const stop = await feed.watch((clientId) => announced.push(clientId), { onStateChange: (state) => states.push(state) });
    await vi.advanceTimersByTimeAsync(1000);
    expect(states).toEqual(['polling']);
    slow = true;
    await vi.advanceTimersByTimeAsync(5000);
    expect(states).toEqual(['polling', 'failing']);
    expect(announced).toEqual(['*']);
    slow = false;
    await vi.advanceTimersByTimeAsync(2000);
    expect(states).toEqual(['polling', 'failing', 'polling']);
    await stop();
  });

  it('has at most two reads of the feed in flight: while reads abandoned at their deadline have not answered, no poll starts a third (it would hold one more connection)', async () => {
    // A read stalled on the database (a lock on the feed's table) answers only when released.
    let stalled: Array<() => void> | undefined;
    let reads = 0;
    const feed = new ChangeFeed({
      readLatestSeq: async () => 0,
      readSince: () => {
        reads++;
        return stalled ? new Promise((resolve) => stalled!.push(() => resolve([]))) : Promise.resolve([]);
      },
      pollIntervalMs: 200,
      onError: () => {},
    });
    const states: ChangeFeedState[] = [];
    const stop = await feed.watch(() => {}, { onStateChange: (state) => states.push(state) });
    await vi.advanceTimersByTimeAsync(1000);
    stalled = [];
    const before = reads;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(reads - before).toBe(2);
    expect(states).toEqual(['polling', 'failing']);
    const waiting = stalled;
    stalled = undefined;
    for (const release of waiting) release();
    await vi.advanceTimersByTimeAsync(1000);
    expect(reads - before).toBeGreaterThan(1);
    expect(states).toEqual(['polling', 'failing', 'polling']);
    await stop();
  });

  it('stays failing after an outage until a poll has read every change made meanwhile, even when one poll cannot read them all', async () => {
    let fail = false;
    const rows: Array<{ seq: number; clientId: string }> = [];
    const feed = new ChangeFeed({
      readLatestSeq: async () => 0,
      readSince: async (after, limit) => {
        if (fail) throw new Error('database down');
        return rows.filter((row) => row.seq > after).slice(0, limit);
      },
      pollIntervalMs: 200,
      onError: () => {},
    });
    const announced: string[] = [];
    const states: Array<{ state: ChangeFeedState; announcedBefore: number }> = [];
    const stop = await feed.watch((clientId) => announced.push(clientId), {
      onStateChange: (state) => states.push({ state, announcedBefore: announced.length }),
    });
    fail = true;
    await vi.advanceTimersByTimeAsync(1000);
    // 12,500 changes while the feed could not be read: more than one poll reads (20 batches of 500).
    for (let seq = 1; seq <= 12_500; seq++) rows.push({ seq, clientId: `client-${seq}` });
    fail = false;
    await vi.advanceTimersByTimeAsync(2000);
    expect(states.map(({ state }) => state)).toEqual(['polling', 'failing', 'polling']);
    // '*' when the outage began, then every change, all of them before the feed says it is back.
    expect(announced).toHaveLength(1 + 12_500);
    expect(states[2]!.announcedBefore).toBe(1 + 12_500);
    await stop();
  });

  it('starts polling, without "*", when its first read takes longer than pollIntervalMs + 200 ms: nothing before the start can be missed', async () => {
    const announced: string[] = [];
    const feed = new ChangeFeed({
      readLatestSeq: () => new Promise((resolve) => setTimeout(() => resolve(0), 600)),
      readSince: async () => [],
      pollIntervalMs: 200,
      onError: () => {},
    });
    const states: ChangeFeedState[] = [];
    const watching = feed.watch((clientId) => announced.push(clientId), { onStateChange: (state) => states.push(state) });
    await vi.advanceTimersByTimeAsync(600);
    const stop = await watching;
    await vi.advanceTimersByTimeAsync(1000);
    expect(states).toEqual(['polling']);
    expect(announced).toEqual([]);
    await stop();
  });

  it('does not wait more than a second for a push channel that is slow to answer: reports reconnecting, then push once it answers', async () => {
    const feed = new ChangeFeed({
      readLatestSeq: async () => 0,
      readSince: async () => [],
      pollIntervalMs: 200,
      notifications: { listen: () => new Promise((resolve) => setTimeout(() => resolve(async () => {}), 1500)) },
      onError: () => {},
    });
    const states: ChangeFeedState[] = [];
    let resolved = false;
    const watching = feed.watch(() => {}, { onStateChange: (state) => states.push(state) }).then((stop) => {
      resolved = true;
      return stop;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(resolved).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(resolved).toBe(true);
    expect(states).toEqual(['reconnecting']);
    await vi.advanceTimersByTimeAsync(500);
    expect(states).toEqual(['reconnecting', 'push']);
    await (await watching)();
  });

  it('retries a push channel that broke while connecting once, even when it reported the break twice', async () => {
    // As pg does when the connection ends during LISTEN: an 'error' event first, then the query rejects.
    let attempts = 0;
    let live = 0;
    const notifications: ChangeNotifications = {
      async listen(_onPayload, onError) {
        if (++attempts === 1) {
          onError(new Error('Connection terminated unexpectedly'));
          throw new Error('Connection terminated unexpectedly');
        }
        live++;
        return async () => {
          live--;
        };
      },
    };
    const feed = new ChangeFeed({ readLatestSeq: async () => 0, readSince: async () => [], pollIntervalMs: 200, notifications, onError: () => {} });
    const watching = feed.watch(() => {});
    await vi.advanceTimersByTimeAsync(5000);
    expect(attempts).toBe(2);
    expect(live).toBe(1);
    await (await watching)();
    expect(live).toBe(0);
  });

  it('a watch still starting when the feed closes rejects, and its watcher hears no state', async () => {
    const feed = new ChangeFeed({
      readLatestSeq: async () => 0,
      readSince: async () => [],
      pollIntervalMs: 200,
      notifications: { listen: () => new Promise(() => {}) }, // never answers: the start waits its second
      onError: () => {},
    });
    const states: ChangeFeedState[] = [];
    const watching = feed.watch(() => {}, { onStateChange: (state) => states.push(state) });
    const outcome = expect(watching).rejects.toThrow('The account store is closed');
    await vi.advanceTimersByTimeAsync(10);
    await feed.close();
    await vi.advanceTimersByTimeAsync(1000);
    await outcome;
    expect(states).toEqual([]);
  });
});

