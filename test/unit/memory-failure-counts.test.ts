/**
 * The failure limiter's in-memory counts (docs/security.md, "Failed-authentication limit"): with a
 * limit of N failures a window, the first N are counted and every attempt after them is refused until
 * the window passes (CONTRACT §2, 429 row); the table holds at most `maxKeys` keys, a refused attempt
 * adds none, and ended windows are dropped a few at a time, never by one walk of the whole table.
 */
import { describe, expect, it } from 'vitest';
import { MemoryFailureCounts, SWEEP_PER_INSERT } from '../../src/client-auth/failure-limiter.js';

describe('MemoryFailureCounts', () => {
  it('counts N attempts per key and window, then refuses until the window ends', () => {
    const counts = new MemoryFailureCounts({ max: 2, windowMs: 60_000, maxKeys: 1000 });
    expect(counts.count(['c=a'], 0).retryAfter).toBe(0);
    expect(counts.count(['c=a'], 1000).retryAfter).toBe(0);
    expect(counts.count(['c=a'], 2000)).toEqual({ retryAfter: 58 });
    expect(counts.retryAfter(['c=a'], 59_999)).toBe(1);
    expect(counts.retryAfter(['c=a'], 60_000)).toBe(0);
  });

  // "the first N failures get 401 and every attempt after them, right or wrong, gets 429": a refused
  // attempt is not a failure, so it counts under no key, and adds none.
  it('a refused attempt counts nothing and adds no key', () => {
    const counts = new MemoryFailureCounts({ max: 1, windowMs: 60_000, maxKeys: 1000 });
    counts.count(['a=192.0.2.1'], 0);
    for (let i = 0; i < 50; i++) expect(counts.count([`c=guess${i}`, 'a=192.0.2.1'], 10).retryAfter).toBeGreaterThan(0);
    expect(counts.size).toBe(1);
    expect(counts.retryAfter(['c=guess0'], 20)).toBe(0);
  });

  it('a give-back lands only in the window it was counted in', () => {
    const counts = new MemoryFailureCounts({ max: 1, windowMs: 1000, maxKeys: 1000 });
    const first = counts.count(['c=a'], 0);
    expect(counts.count(['c=a'], 1000).retryAfter).toBe(0); // a new window, with a new failure
    for (const { key, window } of first.counted!) counts.giveBack(key, window);
    expect(counts.retryAfter(['c=a'], 1500)).toBe(1);
  });

  // Bounded state: never more than maxKeys keys; past it the window that ends soonest goes.
  it('holds at most maxKeys keys, evicting the window that ends soonest', () => {
    const counts = new MemoryFailureCounts({ max: 1, windowMs: 60_000, maxKeys: 3 });
    counts.count(['victim'], 0);
    counts.count(['k1'], 1);
    counts.count(['k2'], 2);
    expect(counts.retryAfter(['victim'], 3)).toBe(60);
    counts.count(['k3'], 3);
    expect(counts.size).toBe(3);
    expect(counts.retryAfter(['victim'], 4)).toBe(0);
    expect(counts.retryAfter(['k1'], 4)).toBe(60);
  });

  // Sweeping never makes one request walk the table: each new key drops at most SWEEP_PER_INSERT
  // ended windows, and ended windows still go at least as fast as new keys come.
  it('drops ended windows a few per new key, never all at once', () => {
    const counts = new MemoryFailureCounts({ max: 1, windowMs: 1000, maxKeys: 100_000 });
    for (let i = 0; i < 1000; i++) counts.count([`old${i}`], 0);
    counts.count(['new0'], 5000);
    expect(counts.size).toBe(1000 - SWEEP_PER_INSERT + 1);
    for (let i = 1; i < 400; i++) counts.count([`new${i}`], 5000);
    expect(counts.size).toBe(400);
  });

  // A key whose window ended and was opened again is evicted by its new window's end, not its old one:
  // past maxKeys, the window that ends soonest goes, whatever was dropped or replaced before it.
  it('evicts by the live windows only, after a key was dropped and opened again', () => {
    const counts = new MemoryFailureCounts({ max: 2, windowMs: 100, maxKeys: 2 });
    counts.count(['a'], 0); // ends at 100
    counts.count(['b'], 50); // ends at 150
    counts.count(['a'], 120); // a's window ended: a new one, ending at 220
    counts.count(['c'], 130); // full: b's window ends soonest
    expect(counts.size).toBe(2);
    expect(counts.count(['a'], 131).retryAfter).toBe(0); // a's second failure in its new window
    expect(counts.retryAfter(['a'], 132)).toBe(1); // now at the limit
    expect(counts.retryAfter(['b'], 132)).toBe(0); // b was evicted
    expect(counts.retryAfter(['c'], 132)).toBe(0);
  });

  // Ended windows are found from a queue of their own, not by iterating the table from its start (a
  // Map keeps deleted slots until it rehashes): 10,000 rounds of one new key and one ended window keep
  // exactly the live ones.
  it('keeps exactly the live windows through many rounds of sweeping', () => {
    const counts = new MemoryFailureCounts({ max: 1, windowMs: 100, maxKeys: 1000 });
    for (let i = 0; i < 10_000; i++) counts.count([`k${i}`], i);
    expect(counts.size).toBeLessThanOrEqual(100 + SWEEP_PER_INSERT);
    expect(counts.retryAfter(['k9999'], 10_000)).toBe(1);
    expect(counts.retryAfter(['k9000'], 10_000)).toBe(0);
  });
});
