/**
 * @module recent-failures
 * Which limiter keys have a failure (or an attempt counted in advance) on record in this process, and
 * until when. With the in-process memory limiter every count is listed here before it is made, so a
 * key not listed has no count and its check can be answered without asking the limiter at all (the
 * common case: a client that never failed).
 * Bounded: when full of live entries, it stops answering "none" until the newest entry expires, and
 * every check goes to the limiter meanwhile, so an attacker cannot flush their own key out of it.
 */

/** See the module description. Times are milliseconds on the limiter's clock (`Date.now`). */
export class RecentFailures {
  readonly #until = new Map<string, number>();
  readonly #max: number;
  /** While `now` is before this, the map may be missing keys: nothing can be ruled out. */
  #unsureUntil = 0;

  constructor(max = 100_000) {
    this.#max = max;
  }

  /** Records that `key` has a failure counted until `until`. */
  note(key: string, until: number, now: number): void {
    if (!this.#until.has(key) && this.#until.size >= this.#max) {
      for (const [k, t] of this.#until) if (t <= now) this.#until.delete(k);
      if (this.#until.size >= this.#max) {
        this.#unsureUntil = Math.max(this.#unsureUntil, until);
        return;
      }
    }
    this.#until.set(key, Math.max(until, this.#until.get(key) ?? 0));
  }

  /** Whether `key` may have failures on record at `now` (false: it certainly has none). */
  mayHave(key: string, now: number): boolean {
    if (now < this.#unsureUntil) return true;
    const until = this.#until.get(key);
    if (until === undefined) return false;
    if (until > now) return true;
    this.#until.delete(key);
    return false;
  }
}
