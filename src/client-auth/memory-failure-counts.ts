/**
 * @module memory-failure-counts
 * The failure limiter's counts in this process's memory (used when no Redis client is given): one fixed
 * window per key, started by the key's first counted attempt.
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
 */

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
 * See the module description.
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
