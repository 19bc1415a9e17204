/**
 * @module failure-limiter
 * Counts failed client authentications per client ID and per client address (docs/security.md):
 * with a limit of N failures a window, the first N failures are answered 401 and every attempt after
 * them, right or wrong, 429 `too_many_requests` with `Retry-After` until the window passes. Successes
 * never count.
 *
 * Counts live in rate-limiter-flexible: `RateLimiterMemory` by default (one process), or
 * `RateLimiterRedis` when an ioredis client is given (shared by every instance). Every call to the
 * limiter's store has the `storeTimeout` deadline; a store that fails or hangs becomes a
 * {@link StoreUnavailableError} (503 `temporarily_unavailable`), never a pass. The Redis client keeps
 * reconnecting on its own, so the limiter recovers without a restart.
 */
import { createHash } from 'node:crypto';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract, type RateLimiterRes } from 'rate-limiter-flexible';
import type { ResolvedConfig } from '../config.js';
import { callStore } from '../store/call-store.js';
import { RecentFailures } from './recent-failures.js';
import type { StoreUnavailableError } from '../errors.js';

/** What a failed or checked attempt is counted under. */
export interface FailureKeys {
  readonly clientId: string | undefined;
  /** The client address as Express sees it (`req.ip`, which respects `trust proxy`). */
  readonly address: string | undefined;
}

/** The limiter the token endpoint consults. */
export interface FailureLimiter {
  /**
   * Before authenticating: seconds to wait when one of the keys already has `max` failures in the
   * current window (answer 429), or 0 when the attempt may proceed. A plain `0` (not a promise) when
   * it is known at once that neither key has a failure on record.
   * @throws {StoreUnavailableError} the limiter's store failed or timed out (→ 503)
   */
  check(keys: FailureKeys): 0 | Promise<number>;
  /**
   * Counts one failed authentication under every key. Resolves with seconds to wait when this failure
   * went past the limit (concurrent attempts that all passed `check`: answer 429, not 401), else 0.
   * @throws {StoreUnavailableError} the limiter's store failed or timed out (→ 503)
   */
  recordFailure(keys: FailureKeys): Promise<number>;
  /** Releases timers. A Redis client given by the host is the host's to close. */
  close(): Promise<void>;
}

/** Prefix of the limiter's keys (in Redis: `esa-failures:c:<hash>` and `esa-failures:a:<hash>`). */
export const FAILURE_KEY_PREFIX = 'esa-failures';

/** A client ID or address short and plain enough to be a memory key as it is (every ID we issue, every IP). */
const PLAIN_KEY = /^[A-Za-z0-9._:-]{1,64}$/;

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

function keysOf(keys: FailureKeys, inMemory: boolean): string[] {
  const out: string[] = [];
  if (keys.clientId !== undefined) out.push(keyOf('c', keys.clientId, inMemory));
  if (keys.address !== undefined) out.push(keyOf('a', keys.address, inMemory));
  return out;
}

/** The shape of an ioredis client that rate-limiter-flexible relies on. */
function isIoredisClient(value: unknown): boolean {
  const client = value as { defineCommand?: unknown; multi?: unknown; status?: unknown } | null;
  return (
    typeof client === 'object' &&
    client !== null &&
    typeof client.defineCommand === 'function' &&
    typeof client.multi === 'function' &&
    typeof client.status === 'string'
  );
}


/**
 * Builds the limiter from the resolved `failureLimit` option. Throws a `TypeError` at start-up when
 * `redis` is given but is not an ioredis client.
 *
 * @example
 * ```ts
 * const limiter = createFailureLimiter({ max: 10, windowSeconds: 60, redis: undefined }, 2000)
 * if ((await limiter.check({ clientId, address })) > 0) throw new TooManyRequestsError(...)
 * ```
 */
export function createFailureLimiter(options: Exclude<ResolvedConfig['failureLimit'], false>, timeoutMs: number): FailureLimiter {
  const { max, windowSeconds, redis } = options;
  let store: RateLimiterAbstract;
  if (redis === undefined || redis === null) {
    store = new RateLimiterMemory({ keyPrefix: FAILURE_KEY_PREFIX, points: max, duration: windowSeconds });
  } else {
    if (!isIoredisClient(redis)) {
      throw new TypeError('express-service-accounts: option "failureLimit.redis" must be an ioredis client');
    }
    store = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: FAILURE_KEY_PREFIX,
      points: max,
      duration: windowSeconds,
      // A disconnected client answers at once (→ 503) instead of queueing commands until it reconnects.
      rejectIfRedisNotReady: true,
    });
  }

  // The memory store answers in-process and cannot hang: only Redis calls get the storeTimeout deadline.
  // Redis is shared by other instances, whose failures this one never sees: only in memory can a key
  // without a failure recorded here be passed without asking.
  const inMemory = redis === undefined || redis === null;
  const call = <T>(work: () => Promise<T>, what: string): Promise<T> => (inMemory ? work() : callStore(work, timeoutMs, what));
  const recent = inMemory ? new RecentFailures() : undefined;

  const secondsFrom = (res: RateLimiterRes | null, over: (consumed: number) => boolean): number => {
    if (!res || !over(res.consumedPoints)) return 0;
    // A key whose TTL is unknown (-1 / 0) still blocks: wait at least one second.
    return Math.max(1, Math.ceil(Math.max(0, res.msBeforeNext) / 1000));
  };

  return {
    check(keys) {
      const keyList = keysOf(keys, inMemory);
      if (recent) {
        const now = Date.now();
        if (!keyList.some((key) => recent.mayHave(key, now))) return 0;
      }
      return Promise.all(keyList.map((key) => call(() => store.get(key), 'failure limiter get'))).then((results) =>
        Math.max(0, ...results.map((res) => secondsFrom(res, (consumed) => consumed >= max))),
      );
    },
    async recordFailure(keys) {
      const keyList = keysOf(keys, inMemory);
      const results = await Promise.all(keyList.map((key) => call(() => store.penalty(key, 1), 'failure limiter penalty')));
      if (recent) {
        const now = Date.now();
        // msBeforeNext is what is left of the key's window; a second more covers rounding.
        results.forEach((res, i) => recent.note(keyList[i]!, now + Math.max(0, res.msBeforeNext) + 1000, now));
      }
      return Math.max(0, ...results.map((res) => secondsFrom(res, (consumed) => consumed > max)));
    },
    async close() {
      // The memory store's timers are unref'd; a host's Redis client stays open for the host to close.
    },
  };
}
