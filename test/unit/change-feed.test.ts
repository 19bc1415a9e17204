/**
 * The SQL stores' change feed (CONTRACT §3: "A secret revocation or an account disable takes effect on
 * every server sharing the store within 1 second"): a database that hangs must not leave an instance
 * trusting its cache. Time is faked; nothing sleeps.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ALL_ACCOUNTS, ChangeFeed, POLL_DEADLINE_MS, POLL_GRACE_MS, type ChangeFeedEntry } from '../../src/sql/change-feed.js';

describe('ChangeFeed', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('announces every account changed when a poll hangs, within 1 s, and resumes once the database answers', async () => {
    let hang = false;
    const rows: ChangeFeedEntry[] = [];
    const feed = new ChangeFeed({
      readLatestSeq: async () => 0,
      readSince: (after) => (hang ? new Promise<never>(() => {}) : Promise.resolve(rows.filter((r) => r.seq > after))),
      pollIntervalMs: 200,
      onError: () => {},
    });
    const seen: string[] = [];
    const stop = await feed.watch((clientId) => seen.push(clientId));

    await vi.advanceTimersByTimeAsync(450);
    expect(seen).toEqual([]);
    hang = true;
    // At worst the hang starts right after a poll: one interval, then the poll's deadline.
    await vi.advanceTimersByTimeAsync(200 + POLL_DEADLINE_MS);
    expect(POLL_DEADLINE_MS + 200).toBeLessThan(1000);
    expect(seen).toEqual([ALL_ACCOUNTS]);

    hang = false;
    rows.push({ seq: 1, clientId: 'esa_changed' } as ChangeFeedEntry);
    await vi.advanceTimersByTimeAsync(200 + POLL_DEADLINE_MS);
    expect(seen).toEqual([ALL_ACCOUNTS, 'esa_changed']);
    await stop();
  });

  // docs/security.md, "Revocation timing": a change is delivered, or every cache told to stop trusting
  // itself, within pollIntervalMs + 200 ms of its commit, even when the database hangs mid-way.
  it("announces '*' pollIntervalMs + POLL_GRACE_MS after the start of the last successful poll", async () => {
    let hang = false;
    const errors: unknown[] = [];
    const feed = new ChangeFeed({
      readLatestSeq: async () => 0,
      readSince: () => (hang ? new Promise<never>(() => {}) : Promise.resolve([])),
      pollIntervalMs: 200,
      onError: (error) => errors.push(error),
    });
    const seen: string[] = [];
    const stop = await feed.watch((clientId) => seen.push(clientId));
    await vi.advanceTimersByTimeAsync(200); // poll 1 starts at 200 and succeeds at once
    hang = true; // a change committed now is read by poll 2 (at 400), which hangs
    expect(POLL_GRACE_MS).toBe(200);
    await vi.advanceTimersByTimeAsync(200 + POLL_GRACE_MS - 1);
    expect(seen).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(seen).toEqual([ALL_ACCOUNTS]); // at 600: 400 ms after the last read that could have missed it
    expect(errors).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(POLL_DEADLINE_MS);
    expect(seen).toEqual([ALL_ACCOUNTS]); // the abandoned poll does not announce the same outage again
    await stop();
  });

  it('does not announce anything while polls succeed, however long the feed runs', async () => {
    const feed = new ChangeFeed({ readLatestSeq: async () => 0, readSince: async () => [], pollIntervalMs: 200, onError: () => {} });
    const seen: string[] = [];
    const stop = await feed.watch((clientId) => seen.push(clientId));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(seen).toEqual([]);
    await stop();
  });

  // A database restored from a backup (or a standby that lacked the last commits) gives out the
  // sequence numbers an instance has already read again: when the one it read last goes to another
  // entry, the feed must notice, even when that instance has read no change since it started.
  it("announces '*' when the entry it started at is given to another change before a poll sees it gone", async () => {
    let rows: ChangeFeedEntry[] = [
      { seq: 1, clientId: 'esa_first', changedAt: 1000 },
      { seq: 2, clientId: 'esa_lost', changedAt: 2000 },
    ];
    const feed = new ChangeFeed({
      readLatestSeq: async () => Math.max(0, ...rows.map((r) => r.seq)),
      readSince: async (after) => rows.filter((r) => r.seq > after),
      pollIntervalMs: 200,
      onError: () => {},
    });
    const seen: string[] = [];
    const stop = await feed.watch((clientId) => seen.push(clientId));
    await vi.advanceTimersByTimeAsync(450);
    expect(seen).toEqual([]);

    // Restored to a backup without entry 2; a revocation made since got number 2 again.
    rows = [rows[0]!, { seq: 2, clientId: 'esa_revoked', changedAt: 3000 }];
    await vi.advanceTimersByTimeAsync(450);
    expect(seen.some((id) => id === 'esa_revoked' || id === ALL_ACCOUNTS)).toBe(true);
    await stop();
  });

  // docs/stores.md: after a restore "changes made afterwards still take effect within the bound above".
  // A pushed change numbered at or below what the poll read, naming another account than the entry the
  // poll read there, is a number given out again: the feed polls at once (and so notices the restore)
  // instead of at its next turn. A late push of an entry the poll already read changes nothing.
  it('polls at once on a push of a number already read that names another account, and not on a late push', async () => {
    let rows: ChangeFeedEntry[] = [];
    let reads = 0;
    let push: (payload: string) => void = () => {};
    const feed = new ChangeFeed({
      readLatestSeq: async () => Math.max(0, ...rows.map((r) => r.seq)),
      readSince: async (after) => {
        reads++;
        return rows.filter((r) => r.seq > after);
      },
      pollIntervalMs: 200,
      notifications: {
        listen: async (onPayload) => {
          push = onPayload;
          return async () => {};
        },
      },
      onError: () => {},
    });
    const seen: string[] = [];
    const stop = await feed.watch((clientId) => seen.push(clientId));
    rows = [{ seq: 1, clientId: 'esa_first', changedAt: 1000 }];
    await vi.advanceTimersByTimeAsync(250); // one poll reads entry 1
    expect(seen).toEqual(['esa_first']);
    await vi.advanceTimersByTimeAsync(100); // 150 ms before the next poll
    const before = reads;
    push('1:esa_first'); // the poll was faster than the notification
    await vi.advanceTimersByTimeAsync(1);
    expect(reads).toBe(before);
    // Restored to a backup without entry 1; a revocation made since got number 1 again.
    rows = [{ seq: 1, clientId: 'esa_revoked', changedAt: 3000 }];
    push('1:esa_revoked');
    await vi.advanceTimersByTimeAsync(1);
    expect(reads).toBe(before + 1);
    expect(seen).toContain(ALL_ACCOUNTS);
    await stop();
  });
});
