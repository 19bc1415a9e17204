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
 * Counts live in this process's memory by default (here: {@link createMemoryLimiter} over
 * {@link MemoryFailureCounts}), or in Redis, shared by every instance, when an ioredis client is given
 * (create-failure-limiter.ts, which builds either from the option).
 *
 * A client address is counted in the form of {@link limiterAddress}. One host usually holds a whole
 * IPv6 /64 (RFC 4291 §2.5.4; RFC 6177 lets a site get a /48 or /56), so counting per full IPv6 address
 * would give it 2^64 budgets: IPv6 addresses are counted per prefix (`failureLimit.ipv6Prefix`,
 * default 64). An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, RFC 4291 §2.5.5.2, what a dual-stack
 * socket reports for an IPv4 peer) is the IPv4 address it maps, so both spellings share one count.
 */
import { createHash } from 'node:crypto';
import { isIPv4 } from 'node:net';
import type { ResolvedConfig } from '../config.js';
import { dottedIPv4, ipAddressOf, ipv6Hextets, isIPv4Mapped } from '../ip-address.js';
import type { StoreUnavailableError } from '../errors.js';

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

/**
 * The limiter's key for a client address: an IPv4 address as it is; an IPv4-mapped IPv6 address as its
 * IPv4 address; any other IPv6 address (zone ID dropped) as its first `ipv6Prefix` bits, written
 * `2001:db8:0:0:0:0:0:0/64`; an address with a port a proxy added (`203.0.113.7:51234`) as the
 * address; anything else (not an IP address) unchanged.
 *
 * @example
 * ```ts
 * limiterAddress('203.0.113.7:51234', 64)       // '203.0.113.7'
 * limiterAddress('::ffff:127.0.0.1', 64)        // '127.0.0.1'
 * limiterAddress('2001:db8::1', 64)             // '2001:db8:0:0:0:0:0:0/64'
 * limiterAddress('2001:db8::2:3:4:5', 64)       // the same /64: '2001:db8:0:0:0:0:0:0/64'
 * ```
 */
export function limiterAddress(address: string, ipv6Prefix: number): string {
  if (isIPv4(address)) return address;
  // A port a proxy wrote into X-Forwarded-For would make every connection of one client a new address.
  const bare = ipAddressOf(address);
  if (bare !== undefined && bare !== address) return limiterAddress(bare, ipv6Prefix);
  const zone = address.indexOf('%');
  const hextets = ipv6Hextets(zone === -1 ? address : address.slice(0, zone));
  if (!hextets) return address;
  if (isIPv4Mapped(hextets)) return dottedIPv4(hextets[6]!, hextets[7]!);
  const masked = hextets.map((h, i) => {
    const bits = Math.min(16, Math.max(0, ipv6Prefix - i * 16));
    return h & ((0xffff << (16 - bits)) & 0xffff);
  });
  return `${masked.map((h) => h.toString(16)).join(':')}/${ipv6Prefix}`;
}

/**
 * A count is given back only while at least this much of the window it was counted in is left (a tenth
 * of the window, at most a second), so a late give-back never lands in the next window, where it would
 * erase a failure. Closer to the end, the count simply stays until the window passes.
 *
 * @example
 * ```ts
 * giveBackMarginMs(60) // 1000
 * ```
 */
export const giveBackMarginMs = (windowSeconds: number): number => Math.min(1000, windowSeconds * 100);

/** The resolved `failureLimit` option, when there is a limit. */
export type LimiterOptions = Exclude<ResolvedConfig['failureLimit'], false>;

/**
 * The limiter's keys of an attempt: its client ID's and its address's (see {@link limiterAddress}).
 *
 * @example
 * ```ts
 * keysOf({ clientId: 'esa_4fT0', address: '::ffff:192.0.2.1' }, 64, true) // ['c=esa_4fT0', 'a=192.0.2.1']
 * ```
 */
export const keysOf = (keys: FailureKeys, ipv6Prefix: number, inMemory: boolean): string[] => {
  const out: string[] = [];
  if (keys.clientId !== undefined) out.push(keyOf('c', keys.clientId, inMemory));
  if (keys.address !== undefined) out.push(keyOf('a', limiterAddress(keys.address, ipv6Prefix), inMemory));
  return out;
};

/**
 * Counts in this process ({@link MemoryFailureCounts}). Every answer is known at once: a check and a
 * reservation are one synchronous step each, so a refused attempt never counts (or adds) anything.
 *
 * @example
 * ```ts
 * const limiter = createMemoryLimiter({ max: 10, windowSeconds: 60, ipv6Prefix: 64, maxKeys: 100_000, redis: undefined })
 * ```
 */
export function createMemoryLimiter({ max, windowSeconds, ipv6Prefix, maxKeys }: LimiterOptions): FailureLimiter {
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

/** Ended windows dropped, at most, from the front of the table each time a key is added. */
export const SWEEP_PER_INSERT = 4;

/** One key's window. Replaced, never reopened: a give-back only touches the window it was counted in. */
export interface CountWindow {
  count: number;
  /** When the window ends, on `Date.now()`'s clock. */
  readonly endsAt: number;
}

/** What {@link MemoryFailureCounts.count} did. */
export type CountOutcome =
  | { readonly retryAfter: number; readonly counted?: undefined }
  | { readonly retryAfter: 0; readonly counted: ReadonlyArray<{ readonly key: string; readonly window: CountWindow }> };

/**
 * The failure limiter's counts in this process's memory (used when no Redis client is given): one
 * fixed window per key, started by the key's first counted attempt.
 *
 * Bounded, with no timer per key:
 * - Every window has the same length, so the order windows were opened in, kept in a queue beside the
 *   table, is also the order they end. Each new key first drops at most {@link SWEEP_PER_INSERT} ended
 *   windows from the front of the queue, so ended windows go at least as fast as new ones come and no
 *   request ever walks the table; a key whose window has ended is also dropped when it is next read.
 *   (The queue is ours, not the Map's insertion order: a Map keeps the slots of deleted entries until it
 *   rehashes, and iterating it from the start after many deletions at the front skips them all, tens of
 *   microseconds per new key at 100,000 keys.)
 * - Past `maxKeys` live keys, a new key evicts the oldest one: the window that ends soonest. Refused
 *   attempts (429) never add a key, and each new key needs a counted attempt, which the limit allows N
 *   times per address and window; so pushing one key out takes `maxKeys` counted failures inside that
 *   key's window, and gains the attacker at most N more guesses at one client ID (docs/security.md).
 *
 * @example
 * ```ts
 * const counts = new MemoryFailureCounts({ max: 10, windowMs: 60_000, maxKeys: 100_000 })
 * const outcome = counts.count(['c=esa_4fT0', 'a=192.0.2.1'], Date.now())
 * if (outcome.counted === undefined) console.log(`429, Retry-After: ${outcome.retryAfter}`)
 * else for (const { key, window } of outcome.counted) counts.giveBack(key, window) // the attempt succeeded
 * ```
 */
export class MemoryFailureCounts {
  readonly #windows = new Map<string, CountWindow>();
  /** Every window opened, oldest first, from `#head` on; an entry whose key has another window (or none) is stale. */
  #queue: { readonly key: string; readonly window: CountWindow }[] = [];
  #head = 0;
  readonly #max: number;
  readonly #windowMs: number;
  readonly #maxKeys: number;

  constructor(options: { max: number; windowMs: number; maxKeys: number }) {
    this.#max = options.max;
    this.#windowMs = options.windowMs;
    this.#maxKeys = options.maxKeys;
  }

  /** Seconds until none of `keys` is at the limit any more (at least 1), or 0 when none is now. */
  retryAfter(keys: readonly string[], now: number): number {
    let ms = 0;
    for (const key of keys) {
      const window = this.#live(key, now);
      if (window && window.count >= this.#max) ms = Math.max(ms, window.endsAt - now);
    }
    return ms > 0 ? Math.max(1, Math.ceil(ms / 1000)) : 0;
  }

  /**
   * Counts one attempt under every key, unless one of them is already at the limit: then nothing is
   * counted (and no key added) and `retryAfter` says how long to wait.
   */
  count(keys: readonly string[], now: number): CountOutcome {
    const retryAfter = this.retryAfter(keys, now);
    if (retryAfter > 0) return { retryAfter };
    const counted = keys.map((key) => {
      const window = this.#live(key, now) ?? this.#open(key, now);
      window.count += 1;
      return { key, window };
    });
    return { retryAfter: 0, counted };
  }

  /** Gives one count back to `window`, if it is still the key's window. */
  giveBack(key: string, window: CountWindow): void {
    if (this.#windows.get(key) === window && window.count > 0) window.count -= 1;
  }

  /** Live keys held (ended windows not yet dropped included). */
  get size(): number {
    return this.#windows.size;
  }

  #live(key: string, now: number): CountWindow | undefined {
    const window = this.#windows.get(key);
    if (window === undefined || window.endsAt > now) return window;
    this.#windows.delete(key);
    return undefined;
  }

  #open(key: string, now: number): CountWindow {
    // Ended windows go from the front, a few per new key; stale entries (already dropped or replaced)
    // are passed over, each once, so every entry costs O(1) in all.
    for (let swept = 0; swept < SWEEP_PER_INSERT; ) {
      const oldest = this.#oldest();
      if (oldest === undefined || oldest.window.endsAt > now) break;
      this.#windows.delete(oldest.key);
      this.#head += 1;
      swept += 1;
    }
    if (this.#windows.size >= this.#maxKeys) {
      const oldest = this.#oldest();
      if (oldest !== undefined) {
        this.#windows.delete(oldest.key);
        this.#head += 1;
      }
    }
    const window: CountWindow = { count: 0, endsAt: now + this.#windowMs };
    this.#windows.set(key, window);
    this.#queue.push({ key, window });
    return window;
  }

  /** The oldest live window in the queue, stale entries before it dropped; `undefined` when none. */
  #oldest(): { readonly key: string; readonly window: CountWindow } | undefined {
    while (this.#head < this.#queue.length) {
      const entry = this.#queue[this.#head]!;
      if (this.#windows.get(entry.key) === entry.window) {
        this.#compact();
        return entry;
      }
      this.#head += 1;
    }
    this.#queue = [];
    this.#head = 0;
    return undefined;
  }

  /** Drops the passed-over front of the queue once it is half the queue (amortised O(1)). */
  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
  }
}
