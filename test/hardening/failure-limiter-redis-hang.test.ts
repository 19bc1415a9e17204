/**
 * The failure limiter on a Redis that hangs (docs/security.md, "Redis outages fail closed"): every
 * call has the `storeTimeout` deadline, but a command sent to a Redis that does not answer stays with
 * the client until Redis answers. Under a flood of token requests during such a hang, commands
 * awaiting Redis are bounded ({@link MAX_PENDING_LIMITER_CALLS}): past that, an attempt is answered
 * at once (503) without sending anything, and the process' memory stays bounded.
 */
import Redis from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createFailureLimiter, MAX_PENDING_LIMITER_CALLS } from '../../src/client-auth/create-failure-limiter.js';
import { StoreUnavailableError } from '../../src/errors.js';
import { redisUrl, RedisProxy, testKeyPrefix } from './helpers.js';

const url = redisUrl('the failure limiter on a hanging Redis');
if (!url) {
  describe.skip('failure limiter on a hanging Redis (REDIS_URL not set)', () => {
    it('needs Redis', () => {});
  });
} else {
  describe('failure limiter on a hanging Redis', () => {
    const prefix = testKeyPrefix();
    const admin = new Redis(url, { maxRetriesPerRequest: 1 });
    afterAll(async () => {
      const left = await admin.keys(`${prefix}*`);
      if (left.length > 0) await admin.del(...left);
      await admin.quit();
    });

    it('sends no more commands past the bound while Redis hangs, answers at once, and recovers', async () => {
      const proxy = await RedisProxy.start(url);
      const parsed = new URL(url);
      const redis = new Redis({ host: '127.0.0.1', port: proxy.port, password: parsed.password || undefined, keyPrefix: prefix, maxRetriesPerRequest: 1 });
      redis.on('error', () => {});
      try {
        await redis.ping();
        // A long deadline: only the bound can answer the attempt past it while Redis hangs.
        const limiter = createFailureLimiter({ max: 3, windowSeconds: 60, ipv6Prefix: 64, maxKeys: 100_000, redis }, 8000);
        proxy.freeze();
        // Two keys per attempt: this fills the bound exactly.
        const held = Array.from({ length: MAX_PENDING_LIMITER_CALLS / 2 }, (_, i) =>
          limiter.reserve({ clientId: `esa_hang${i}`, address: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}` }),
        );
        for (const attempt of held) attempt.catch(() => {});
        const started = Date.now();
        await expect(limiter.reserve({ clientId: 'esa_past', address: '192.0.2.9' })).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(limiter.check({ clientId: 'esa_past', address: '192.0.2.9' })).rejects.toBeInstanceOf(StoreUnavailableError);
        expect(Date.now() - started).toBeLessThan(5000);
        proxy.restore();
        await Promise.allSettled(held);
        // Redis answers again: the limiter works as before.
        expect((await limiter.reserve({ clientId: 'esa_past', address: '192.0.2.9' })).retryAfter).toBe(0);
      } finally {
        redis.disconnect();
        await proxy.close();
      }
    }, 60_000);
  });
}
