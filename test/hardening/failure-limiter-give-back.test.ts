/**
 * The limiter's give-back (docs/security.md, "Concurrent attempts"): an attempt is counted before its
 * bcrypt work and a success gives the count back, but "a late give-back never lands in the next window"
 * and never takes a count below zero. In memory with a fake clock; on Redis (REDIS_URL) by removing the
 * key, as its expiry would.
 */
import Redis from 'ioredis';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createFailureLimiter } from '../../src/client-auth/create-failure-limiter.js';
import { FAILURE_KEY_PREFIX } from '../../src/client-auth/failure-limiter.js';
import { redisUrl, testKeyPrefix } from './helpers.js';

const keys = { clientId: 'esa_giveback', address: '192.0.2.1' };

describe('failure limiter give-back in memory', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gives a count back within the window, so the budget is whole again', async () => {
    const limiter = createFailureLimiter({ max: 1, windowSeconds: 60, ipv6Prefix: 64, maxKeys: 100_000, redis: undefined }, 2000);
    const first = await limiter.reserve(keys);
    expect(first.retryAfter).toBe(0);
    expect((await limiter.reserve(keys)).retryAfter).toBeGreaterThan(0); // slot 2 of 1: refused
    first.release();
    first.release(); // idempotent: the second call gives nothing back
    expect(await limiter.check(keys)).toBe(0);
    const second = await limiter.reserve(keys);
    expect(second.retryAfter).toBe(0); // kept: a failure
    expect((await limiter.reserve(keys)).retryAfter).toBeGreaterThan(0);
  });

  it('keeps the count when less than a tenth of the window is left, and the next window starts from zero', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const limiter = createFailureLimiter({ max: 1, windowSeconds: 1, ipv6Prefix: 64, maxKeys: 100_000, redis: undefined }, 2000);
    const attempt = await limiter.reserve(keys);
    vi.advanceTimersByTime(950);
    attempt.release(); // too late for this window: nothing given back
    expect(await limiter.check(keys)).toBeGreaterThan(0);
    vi.advanceTimersByTime(100);
    // A fresh window: one attempt allowed, not two (no count below zero was carried over).
    expect((await limiter.reserve(keys)).retryAfter).toBe(0);
    expect((await limiter.reserve(keys)).retryAfter).toBeGreaterThan(0);
  });
});

const url = redisUrl('the failure limiter give-back');
if (!url) {
  describe.skip('failure limiter give-back on Redis (REDIS_URL not set)', () => {
    it('needs Redis', () => {});
  });
} else {
  describe('failure limiter give-back on Redis', () => {
    const prefix = testKeyPrefix();
    const redis = new Redis(url, { keyPrefix: prefix, maxRetriesPerRequest: 1 });
    const admin = new Redis(url, { maxRetriesPerRequest: 1 });
    afterAll(async () => {
      const left = await admin.keys(`${prefix}*`);
      if (left.length > 0) await admin.del(...left);
      await Promise.all([redis.quit(), admin.quit()]);
    });

    it('never creates a key or goes below zero when the key expired before the give-back', async () => {
      await redis.ping();
      const limiter = createFailureLimiter({ max: 1, windowSeconds: 60, ipv6Prefix: 64, maxKeys: 100_000, redis }, 2000);
      const attempt = await limiter.reserve(keys);
      expect(attempt.retryAfter).toBe(0);
      const counted = await admin.keys(`${prefix}${FAILURE_KEY_PREFIX}:*`);
      expect(counted).toHaveLength(2);
      await admin.del(...counted); // as the window's expiry would
      attempt.release();
      await redis.ping(); // the give-back went first on the same connection
      expect(await admin.keys(`${prefix}${FAILURE_KEY_PREFIX}:*`)).toEqual([]);
      // The next attempt is slot 1 (allowed), the one after it slot 2 (refused): no extra budget.
      expect((await limiter.reserve(keys)).retryAfter).toBe(0);
      expect((await limiter.reserve(keys)).retryAfter).toBeGreaterThan(0);
    });

    it('gives a count back within the window and keeps the key with its expiry', async () => {
      const limiter = createFailureLimiter({ max: 1, windowSeconds: 60, ipv6Prefix: 64, maxKeys: 100_000, redis }, 2000);
      const other = { clientId: 'esa_giveback2', address: '192.0.2.2' };
      const attempt = await limiter.reserve(other);
      attempt.release();
      await redis.ping(); // the give-back went first on the same connection
      expect(await limiter.check(other)).toBe(0);
      // Every key still expires with its window (DECR keeps the TTL).
      const all = await admin.keys(`${prefix}${FAILURE_KEY_PREFIX}:*`);
      expect(all.length).toBeGreaterThan(0);
      for (const key of all) expect(await admin.pttl(key)).toBeGreaterThan(0);
      expect((await limiter.reserve(other)).retryAfter).toBe(0);
      expect((await limiter.reserve(other)).retryAfter).toBeGreaterThan(0);
    });
  });
}
