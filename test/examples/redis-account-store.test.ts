/**
 * The custom-store template of docs/writing-a-store.md (examples/custom-store/redis-account-store.ts)
 * passes the same AccountStore contract suite as the shipped stores, against the real Redis.
 * REDIS_URL unset: skipped with a note, unless CI=true, where a missing server fails the run.
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeAccountStore } from '../../src/testing/index.js';
import { RedisAccountStore } from '../../examples/custom-store/redis-account-store.js';

const url = process.env.REDIS_URL ?? (process.env.CI === 'true' ? 'redis://127.0.0.1:6379' : undefined);

if (!url) {
  console.warn('REDIS_URL not set: the Redis custom-store example tests are skipped');
  describe.skip('RedisAccountStore example (REDIS_URL not set)', () => {
    it('needs Redis', () => {});
  });
} else {
  describeAccountStore(
    'RedisAccountStore example',
    async () => {
      const prefix = `esa-test:${randomBytes(6).toString('hex')}:`;
      // maxRetriesPerRequest 1 + no offline queue: a missing server fails fast instead of hanging.
      const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: true, lazyConnect: false });
      const store = new RedisAccountStore({ redis, prefix });
      return {
        store,
        cleanup: async () => {
          const keys = await redis.keys(`${prefix}*`);
          if (keys.length > 0) await redis.del(...keys);
          await redis.quit();
        },
      };
    },
    { describe, it, expect, beforeEach, afterEach },
  );
}
