/**
 * @module create-failure-limiter
 * Builds the failure limiter (failure-limiter.ts) from the resolved `failureLimit` option: counts in
 * this process's memory, or, when an ioredis client is given, in rate-limiter-flexible's
 * `RateLimiterRedis`, shared by every instance (the Redis backend is here). Every Redis call has the
 * `storeTimeout` deadline; a Redis that fails or hangs becomes a `StoreUnavailableError` (503
 * `temporarily_unavailable`), never a pass. The Redis client keeps reconnecting on its own, so the
 * limiter recovers without a restart.
 */
import { RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import type { ResolvedConfig } from '../config.js';
import { callStore } from '../runtime/call-store.js';
import type { CallObserver } from '../runtime/call-store.js';
import { createMemoryLimiter, FAILURE_KEY_PREFIX, giveBackMarginMs, keysOf, type FailureLimiter, type LimiterOptions } from './failure-limiter.js';

/** Most limiter commands awaiting Redis at once (see `createRedisLimiter`). */
export const MAX_PENDING_LIMITER_CALLS = 10_000;

/** The shape of an ioredis client that rate-limiter-flexible relies on, and our own give-back command. */
interface IoredisLike {
  readonly status: string;
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
  ping(): Promise<unknown>;
  connect?(): Promise<void>;
}

function isIoredisClient(value: unknown): value is IoredisLike {
  const client = value as { defineCommand?: unknown; multi?: unknown; status?: unknown } | null;
  return (
    typeof client === 'object' &&
    client !== null &&
    typeof client.defineCommand === 'function' &&
    typeof client.multi === 'function' &&
    typeof client.status === 'string'
  );
}

/** Our Redis command that gives one count back: only while the key lives, never below zero (the key's TTL is kept). */
const GIVE_BACK_COMMAND = 'esaFailuresGiveBack';
const GIVE_BACK_LUA = `local n = tonumber(redis.call('get', KEYS[1]) or '0')
if n > 0 then return redis.call('decr', KEYS[1]) end
return n`;

/**
 * Builds the limiter from the resolved `failureLimit` option. Throws a `TypeError` at start-up when
 * `redis` is given but is not an ioredis client.
 *
 * @example
 * ```ts
 * const limiter = createFailureLimiter({ max: 10, windowSeconds: 60, ipv6Prefix: 64, maxKeys: 100_000, redis: undefined }, 2000)
 * declare const checkSecret: () => Promise<boolean> // the client authentication
 * const attempt = await limiter.reserve({ clientId, address: '192.0.2.1' })
 * if (attempt.retryAfter > 0) throw new TooManyRequestsError(attempt.retryAfter)
 * if (await checkSecret()) attempt.release() // a failure keeps its count
 * ```
 */
export function createFailureLimiter(
  options: Exclude<ResolvedConfig['failureLimit'], false>,
  timeoutMs: number,
  observer?: CallObserver,
): FailureLimiter {
  const { redis } = options;
  if (redis === undefined || redis === null) return createMemoryLimiter(options);
  if (!isIoredisClient(redis)) {
    throw new TypeError('express-service-accounts: option "failureLimit.redis" must be an ioredis client');
  }
  return createRedisLimiter(options, redis, timeoutMs, observer);
}

/** Counts in Redis, shared by every instance (rate-limiter-flexible's `RateLimiterRedis`). */
function createRedisLimiter(
  { max, windowSeconds, ipv6Prefix }: LimiterOptions,
  client: IoredisLike,
  timeoutMs: number,
  observer: CallObserver | undefined,
): FailureLimiter {
  const store = new RateLimiterRedis({
    storeClient: client,
    keyPrefix: FAILURE_KEY_PREFIX,
    points: max,
    duration: windowSeconds,
    // A disconnected client answers at once (→ 503) instead of queueing commands until it reconnects.
    rejectIfRedisNotReady: true,
  });
  client.defineCommand(GIVE_BACK_COMMAND, { numberOfKeys: 1, lua: GIVE_BACK_LUA });
  const command = (client as unknown as Record<string, (key: string) => Promise<unknown>>)[GIVE_BACK_COMMAND]!.bind(client);
  // Not queued while disconnected: delivered late, it could land in another window.
  const giveBack = (key: string): Promise<unknown> => (client.status === 'ready' ? command(store.getKey(key)) : Promise.resolve());
  // Commands sent and not yet answered. The deadline answers the request, not the command: one sent to
  // a Redis that hangs with the connection up stays with the client until Redis answers. Past the
  // bound (a flood during such a hang), an attempt is answered at once (503) and nothing is sent, so
  // memory stays bounded however long the hang lasts.
  let pending = 0;
  const settle = (): void => {
    pending -= 1;
  };
  const call = <T>(work: () => Promise<T>, what: string): Promise<T> => {
    // A client made with `lazyConnect` connects on its first command, and none is sent while it is not
    // ready: connect it here (this call is still answered 503), else it would stay unconnected for ever.
    if (client.status === 'wait') client.connect?.().catch(() => {});
    const bounded = (): Promise<T> => {
      if (pending >= MAX_PENDING_LIMITER_CALLS) throw new Error(`${MAX_PENDING_LIMITER_CALLS} limiter commands are awaiting Redis`);
      const sent = work();
      pending += 1;
      sent.then(settle, settle);
      return sent;
    };
    return callStore(bounded, timeoutMs, what, observer);
  };
  const margin = giveBackMarginMs(windowSeconds);

  const secondsFrom = (res: RateLimiterRes | null, over: (consumed: number) => boolean): number => {
    if (!res || !over(res.consumedPoints)) return 0;
    // A key whose TTL is unknown (-1 / 0) still blocks: wait at least one second.
    return Math.max(1, Math.ceil(Math.max(0, res.msBeforeNext) / 1000));
  };

  /** Gives back each counted key whose window has room left; errors only leave the count in place. */
  const releaseAll = (counted: ReadonlyArray<{ key: string; until: number }>): void => {
    const now = Date.now();
    for (const { key, until } of counted) {
      if (now < until) call(() => giveBack(key), 'failure limiter give-back').catch(() => {});
    }
  };

  return {
    backend: 'redis',
    probe: () => call(async () => void (await client.ping()), 'limiter ping'),
    check(keys) {
      // Redis is shared by other instances, whose counts this one never sees: every check asks it.
      const keyList = keysOf(keys, ipv6Prefix, false);
      return Promise.all(keyList.map((key) => call(() => store.get(key), 'failure limiter get'))).then((results) =>
        Math.max(0, ...results.map((res) => secondsFrom(res, (consumed) => consumed >= max))),
      );
    },
    async reserve(keys) {
      const keyList = keysOf(keys, ipv6Prefix, false);
      const sent: Array<Promise<RateLimiterRes> | undefined> = [];
      const settled = await Promise.allSettled(keyList.map((key, i) => call(() => (sent[i] = store.penalty(key, 1)), 'failure limiter reserve')));
      const now = Date.now();
      const counted: Array<{ key: string; until: number }> = [];
      settled.forEach((s, i) => {
        if (s.status === 'fulfilled') counted.push({ key: keyList[i]!, until: now + Math.max(0, s.value.msBeforeNext) - margin });
      });
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) {
        releaseAll(counted);
        // A count that timed out may still land once Redis answers again: the attempt was answered 503,
        // undecided, so that count is given back too when it lands (not in another window).
        settled.forEach((s, i) => {
          if (s.status === 'rejected') {
            sent[i]?.then(
              (res) => releaseAll([{ key: keyList[i]!, until: Date.now() + Math.max(0, res.msBeforeNext) - margin }]),
              () => {},
            );
          }
        });
        throw failed.reason;
      }
      const results = settled.map((s) => (s as PromiseFulfilledResult<RateLimiterRes>).value);
      const retryAfter = Math.max(0, ...results.map((res) => secondsFrom(res, (consumed) => consumed > max)));
      if (retryAfter > 0) {
        // Past the limit: refused, and not a failure either.
        releaseAll(counted);
        return { retryAfter, release: () => {} };
      }
      let held = true;
      return {
        retryAfter: 0,
        release: () => {
          if (held) releaseAll(counted);
          held = false;
        },
      };
    },
    async close() {
      // A host's Redis client stays open for the host to close.
    },
  };
}
