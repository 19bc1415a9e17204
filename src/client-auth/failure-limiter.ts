/**
 * @module failure-limiter
 * Counts failed client authentications per client ID and per client address (docs/security.md):
 * with a limit of N failures a window, the first N failures are answered 401 and every attempt after
 * them, right or wrong, 429 `too_many_requests` with `Retry-After` until the window passes. Successes
 * never count.
 *
 * Under concurrency: an attempt that needs a secret check is counted before its bcrypt work
 * ({@link FailureLimiter.reserve}), one atomic increment per key; an increment past N is refused (429)
 * and given back at once, so at most N attempts per key and window ever reach bcrypt. A failure keeps
 * its count; a success (or an attempt that ended undecided, 503) gives it back. Until then an attempt
 * in flight counts as a failure. A repeat client verified without bcrypt cannot be a guess: it is only
 * checked ({@link FailureLimiter.check}), never counted in advance.
 *
 * Counts live in this process's memory by default ({@link MemoryFailureCounts}: at most `maxKeys`
 * keys, no timer per key), or in rate-limiter-flexible's `RateLimiterRedis` when an ioredis client is
 * given (shared by every instance). Every Redis call has the `storeTimeout` deadline; a Redis that
 * fails or hangs becomes a {@link StoreUnavailableError} (503 `temporarily_unavailable`), never a pass.
 * The Redis client keeps reconnecting on its own, so the limiter recovers without a restart.
 */
import { createHash } from 'node:crypto';
import { RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import type { ResolvedConfig } from '../config.js';
import { callStore } from '../runtime/call-store.js';
import { MemoryFailureCounts } from './memory-failure-counts.js';
import { limiterAddress } from './limiter-address.js';
import type { StoreUnavailableError } from '../errors.js';
import type { CallObserver } from '../runtime/call-store.js';

/** What an attempt is counted under. */
export interface FailureKeys {
  readonly clientId: string | undefined;
  /** The client address as Express sees it (`req.ip`, which respects `trust proxy`). */
  readonly address: string | undefined;
}

/** An attempt counted in advance by {@link FailureLimiter.reserve}. */
export interface AttemptReservation {
  /** Seconds to wait when the attempt went past the limit (answer 429; nothing is held then), else 0. */
  readonly retryAfter: number;
  /**
   * Gives the count back: the attempt succeeded, or ended without a decision (503). A failure keeps it.
   * Never throws; if the store cannot be reached, the count stays until the window passes. Idempotent.
   */
  release(): void;
}

/** The limiter the token endpoint consults. */
export interface FailureLimiter {
  /**
   * For an attempt that needs no secret check (a repeat client): seconds to wait when one of the keys
   * already has `max` failures or attempts in flight in the current window (answer 429), or 0. A plain
   * `0` (not a promise) when it is known at once that neither key has anything on record.
   * @throws {StoreUnavailableError} the limiter's store failed or timed out (→ 503)
   */
  check(keys: FailureKeys): 0 | Promise<number>;
  /**
   * Before a secret check: counts the attempt under every key, atomically per key. Resolves with
   * `retryAfter > 0` when that went past the limit for one of them (the count is given back at once).
   * @throws {StoreUnavailableError} the limiter's store failed or timed out (→ 503)
   */
  reserve(keys: FailureKeys): Promise<AttemptReservation>;
  /** Where counts live: this process's `memory`, or `redis` shared by every instance. */
  readonly backend: 'memory' | 'redis';
  /**
   * Checks that the backend answers now (a Redis `PING`, with the `storeTimeout` deadline); memory always does.
   * @throws {StoreUnavailableError} Redis failed or timed out
   */
  probe(): Promise<void>;
  /** Releases timers. A Redis client given by the host is the host's to close. */
  close(): Promise<void>;
}

/** Prefix of the limiter's keys (in Redis: `esa-failures:c:<hash>` and `esa-failures:a:<hash>`). */
export const FAILURE_KEY_PREFIX = 'esa-failures';

/** A client ID or address short and plain enough to be a memory key as it is (every ID we issue, every IP or IPv6 prefix). */
const PLAIN_KEY = /^[A-Za-z0-9._:/-]{1,64}$/;

/**
 * The key of a client ID (`c`) or address (`a`). Either is attacker-chosen text of any length, so it is
 * hashed to a fixed-size digest: keys stay bounded and free of odd characters, and client addresses
 * stay out of Redis. In this process's memory a short plain value is used as it is (the separator,
 * `=` instead of `:`, keeps it from ever equalling a digest).
 */
function keyOf(kind: 'c' | 'a', value: string, inMemory: boolean): string {
  if (inMemory && PLAIN_KEY.test(value)) return `${kind}=${value}`;
  return `${kind}:${createHash('sha256').update(value, 'utf8').digest('base64url').slice(0, 32)}`;
}

/** The shape of an ioredis client that rate-limiter-flexible relies on, and our own give-back command. */
interface IoredisLike {
  readonly status: string;
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
  ping(): Promise<unknown>;
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
 * A count is given back only while at least this much of the window it was counted in is left (a tenth
 * of the window, at most a second), so a late give-back never lands in the next window, where it would
 * erase a failure. Closer to the end, the count simply stays until the window passes.
 */
const giveBackMarginMs = (windowSeconds: number): number => Math.min(1000, windowSeconds * 100);

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

type LimiterOptions = Exclude<ResolvedConfig['failureLimit'], false>;

const keysOf = (keys: FailureKeys, ipv6Prefix: number, inMemory: boolean): string[] => {
  const out: string[] = [];
  if (keys.clientId !== undefined) out.push(keyOf('c', keys.clientId, inMemory));
  if (keys.address !== undefined) out.push(keyOf('a', limiterAddress(keys.address, ipv6Prefix), inMemory));
  return out;
};

/**
 * Counts in this process (memory-failure-counts.ts). Every answer is known at once: a check and a
 * reservation are one synchronous step each, so a refused attempt never counts (or adds) anything.
 */
function createMemoryLimiter({ max, windowSeconds, ipv6Prefix, maxKeys }: LimiterOptions): FailureLimiter {
  const counts = new MemoryFailureCounts({ max, windowMs: windowSeconds * 1000, maxKeys });
  const margin = giveBackMarginMs(windowSeconds);
  return {
    backend: 'memory',
    probe: () => Promise.resolve(),
    check(keys) {
      const retryAfter = counts.retryAfter(keysOf(keys, ipv6Prefix, true), Date.now());
      return retryAfter === 0 ? 0 : Promise.resolve(retryAfter);
    },
    async reserve(keys) {
      const outcome = counts.count(keysOf(keys, ipv6Prefix, true), Date.now());
      if (outcome.counted === undefined) return { retryAfter: outcome.retryAfter, release: () => {} };
      let held = true;
      return {
        retryAfter: 0,
        release: () => {
          // Only ever into the window it was counted in, and (as on Redis) while it has room left.
          const now = Date.now();
          if (held) for (const { key, window } of outcome.counted) if (now < window.endsAt - margin) counts.giveBack(key, window);
          held = false;
        },
      };
    },
    async close() {},
  };
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
  const call = <T>(work: () => Promise<T>, what: string): Promise<T> => callStore(work, timeoutMs, what, observer);
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
      const settled = await Promise.allSettled(keyList.map((key) => call(() => store.penalty(key, 1), 'failure limiter reserve')));
      const now = Date.now();
      const counted: Array<{ key: string; until: number }> = [];
      settled.forEach((s, i) => {
        if (s.status === 'fulfilled') counted.push({ key: keyList[i]!, until: now + Math.max(0, s.value.msBeforeNext) - margin });
      });
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) {
        releaseAll(counted);
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
