/**
 * The SQL stores' change feed (CONTRACT §3: "A secret revocation or an account disable takes effect on
 * every server sharing the store within 1 second"): a database that hangs must not leave an instance
 * trusting its cache. Time is faked; nothing sleeps.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ALL_ACCOUNTS, ChangeFeed, POLL_DEADLINE_MS, type ChangeFeedEntry } from '../../src/sql/change-feed.js';

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
});
