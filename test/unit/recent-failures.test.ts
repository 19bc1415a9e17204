/**
 * The in-process filter in front of the memory failure limiter (issue "hardening" 1: "past the limit,
 * 429 ... even for a correct secret"): a key may skip the limiter only when it certainly has no failure
 * on record, and a flood of distinct keys cannot push a failing key out of it.
 */
import { describe, expect, it } from 'vitest';
import { RecentFailures } from '../../src/token-endpoint/recent-failures.js';

describe('RecentFailures', () => {
  it('lists a key from its failure until its window ends, then forgets it', () => {
    const recent = new RecentFailures(10);
    expect(recent.mayHave('c:a', 1000)).toBe(false);
    recent.note('c:a', 61_000, 1000);
    expect(recent.mayHave('c:a', 60_999)).toBe(true);
    expect(recent.mayHave('c:b', 2000)).toBe(false);
    expect(recent.mayHave('c:a', 61_000)).toBe(false);
  });

  it('keeps the later end when a key fails again', () => {
    const recent = new RecentFailures(10);
    recent.note('a:10.0.0.1', 30_000, 0);
    recent.note('a:10.0.0.1', 20_000, 5000);
    expect(recent.mayHave('a:10.0.0.1', 25_000)).toBe(true);
  });

  it('when full of live keys, rules nothing out until the newest failure window ends', () => {
    const recent = new RecentFailures(3);
    for (const key of ['k1', 'k2', 'k3']) recent.note(key, 60_000, 0);
    recent.note('attacker', 70_000, 1000); // no room: it is not listed, so nothing can be ruled out
    expect(recent.mayHave('attacker', 2000)).toBe(true);
    expect(recent.mayHave('never-failed', 69_999)).toBe(true);
    expect(recent.mayHave('never-failed', 70_000)).toBe(false);
  });

  it('makes room by dropping expired keys before giving up', () => {
    const recent = new RecentFailures(2);
    recent.note('old1', 10_000, 0);
    recent.note('old2', 10_000, 0);
    recent.note('new', 80_000, 20_000);
    expect(recent.mayHave('new', 30_000)).toBe(true);
    expect(recent.mayHave('other', 30_000)).toBe(false);
  });
});
