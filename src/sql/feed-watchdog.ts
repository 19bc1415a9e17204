/**
 * @module feed-watchdog
 * Tells the change feed when it has gone too long without a fresh read, using timers only (no clock):
 * every read starts a timer of `limitMs`. A read that succeeds before its own timer fired is fresh: it
 * makes its timer the live one, replacing the previous. A read that fails drops its timer. A read that
 * succeeds only after its timer fired (the database answers, but late) is stale: it arrived more than
 * `limitMs` after it started, so it cannot stand for the feed having been read in time; the live timer
 * is dropped and the feed is told at once. So, unless a later read is fresh first, `onStale` is called
 * `limitMs` after the *start* of the last fresh read, and again whenever a read succeeds late.
 */

/** One read, from {@link FeedWatchdog.begin} to {@link FeedWatchdog.end}. */
export interface FeedRead {
  readonly timer: NodeJS.Timeout;
  /** Its timer fired: `limitMs` have passed since the read started. */
  fired: boolean;
}

export class FeedWatchdog {
  readonly #limitMs: number;
  readonly #onStale: () => void;
  /** The last fresh read, until its timer fires or a later read is fresh. */
  #live: FeedRead | undefined;
  #stopped = false;

  /**
   * @example
   * ```ts
   * declare const announce: (clientId: string) => void // tells the feed's listeners
   * declare const poll: () => Promise<void> // one read of the change table
   * const watchdog = new FeedWatchdog(400, () => announce('*'))
   * const read = watchdog.begin()
   * const fresh = watchdog.end(read, await poll().then(() => true, () => false))
   * ```
   */
  constructor(limitMs: number, onStale: () => void) {
    this.#limitMs = limitMs;
    this.#onStale = onStale;
  }

  /** Call when a read starts; pass the result to {@link end}. */
  begin(): FeedRead {
    const read: FeedRead = {
      fired: false,
      timer: setTimeout(() => {
        read.fired = true;
        if (read === this.#live && !this.#stopped) this.#onStale();
      }, this.#limitMs),
    };
    read.timer.unref();
    return read;
  }

  /**
   * Call when that read ends: `succeeded` when it read everything up to the end of the feed.
   * @returns whether the read was fresh: it succeeded before `limitMs` had passed since it started.
   */
  end(read: FeedRead, succeeded: boolean): boolean {
    if (!succeeded || this.#stopped) {
      clearTimeout(read.timer);
      return false;
    }
    clearTimeout(this.#live?.timer);
    if (read.fired) {
      // The last fresh read (if any) started earlier, so its timer has fired too: nothing is live.
      this.#live = undefined;
      this.#onStale();
      return false;
    }
    this.#live = read;
    return true;
  }

  /** Counts a read that succeeded just now: the feed's start, which nothing before it can be missing from. */
  readJustNow(): void {
    this.end(this.begin(), true);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#live?.timer);
  }
}
