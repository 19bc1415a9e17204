/**
 * @module feed-watchdog
 * Tells the change feed when it has gone too long without a successful read, using timers only (no
 * clock): every read starts a timer; a read that succeeds makes its timer the live one, replacing the
 * previous; a read that fails drops its own. So the live timer fires `limitMs` after the *start* of the
 * last successful read, unless a later read succeeds first.
 */
export class FeedWatchdog {
  readonly #limitMs: number;
  readonly #onStale: () => void;
  #live: NodeJS.Timeout | undefined;
  #stopped = false;

  /**
   * @example
   * ```ts
   * declare const announce: (clientId: string) => void // tells the feed's listeners
   * declare const poll: () => Promise<void> // one read of the change table
   * const watchdog = new FeedWatchdog(400, () => announce('*'))
   * const read = watchdog.begin()
   * watchdog.end(read, await poll().then(() => true, () => false))
   * ```
   */
  constructor(limitMs: number, onStale: () => void) {
    this.#limitMs = limitMs;
    this.#onStale = onStale;
  }

  /** Call when a read starts; pass the result to {@link end}. */
  begin(): NodeJS.Timeout {
    const timer = setTimeout(() => {
      if (timer === this.#live && !this.#stopped) this.#onStale();
    }, this.#limitMs);
    timer.unref();
    return timer;
  }

  /** Call when that read ends: `succeeded` when it read everything up to the end of the feed. */
  end(read: NodeJS.Timeout, succeeded: boolean): void {
    if (!succeeded || this.#stopped) {
      clearTimeout(read);
      return;
    }
    clearTimeout(this.#live);
    this.#live = read;
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#live);
  }
}
