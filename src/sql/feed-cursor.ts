/**
 * @module feed-cursor
 * Where the change feed has read up to, and whether what it reads or is pushed next agrees with that:
 * the highest sequence number delivered, the entry found there, the numbers pushed ahead of the poll
 * (so the poll does not repeat them) and the client IDs read lately (to tell a late push from a number
 * given out again). It notices a database restored from a backup, or a standby that lacked the last
 * transactions taking over: the entry read last is gone or replaced. It holds no timers and reads
 * nothing; the {@link FeedLoop} (feed-loop.ts) reads the feed, asks it, and starts over when told.
 */

/**
 * One row of the change feed.
 *
 * @example
 * ```ts
 * const entry: ChangeFeedEntry = { seq: 42, clientId: 'esa_4fT0qLx2mZb8Rk1sVw7yNc3d' }
 * ```
 */
export interface ChangeFeedEntry {
  readonly seq: number;
  readonly clientId: string;
  /** When it was appended (ms): with `seq` and `clientId`, tells this entry from another given the same `seq`. */
  readonly changedAt?: number;
}

/**
 * What a pushed change means for the feed: `new` (announce it; the poll will not repeat it), `known`
 * (already announced, by the poll or an earlier push) or `suspect` (numbered at or below what the poll
 * read, but not an entry it read: perhaps a number given out again after a restore, so poll now).
 */
export type PushVerdict = 'new' | 'known' | 'suspect';

/** How many entries read by the poll are remembered to recognise their late pushes. */
const READ_KEPT = 1000;
/** Most pushed sequence numbers kept ahead of the poll; past that they are forgotten (worst case a repeated call). */
const PUSHED_KEPT = 10_000;

/**
 * What the feed has read and delivered, from its start or its last restart.
 *
 * @example
 * ```ts
 * declare const rows: ChangeFeedEntry[] // a poll's read from cursor.readFrom on
 * const cursor = new FeedCursor()
 * cursor.startAt(41)
 * if (cursor.lost(rows)) cursor.startAt(0) // read the end of the feed again and start there
 * else for (const row of rows) if (cursor.take(row)) console.log(row.clientId)
 * ```
 */
export class FeedCursor {
  /** Highest sequence number delivered by the poll. */
  #last = 0;
  /** The entry at #last, once a poll has read it: a later poll checks that it is still there. */
  #lastEntry: ChangeFeedEntry | undefined;
  /** Sequence numbers above #last already delivered by push, so the poll does not repeat them. */
  readonly #pushed = new Set<number>();
  /** The client ID of each entry the poll read lately (the last READ_KEPT), to tell a late push from a number given out again. */
  readonly #read = new Map<number, string>();

  /** Highest sequence number delivered by the poll. */
  get last(): number {
    return this.#last;
  }

  /** Where the next read of the feed starts: just below the entry at {@link last}, to see that it is still there. */
  get readFrom(): number {
    return Math.max(this.#last - 1, 0);
  }

  /**
   * Starts from `seq`, the current end of the feed, forgetting everything read or pushed before: at the
   * feed's start, and again after {@link lost}.
   */
  startAt(seq: number): void {
    this.#last = seq;
    this.#lastEntry = undefined;
    this.#pushed.clear();
    this.#read.clear();
  }

  /**
   * Whether the entry at {@link last} is gone, or another entry has its sequence number, in `rows` read
   * from {@link readFrom}: the database was restored from a backup, or a standby that lacked the last
   * transactions took over, and sequence numbers are given out again from below it. New changes would
   * be skipped as already read. (Entries older than an hour are deleted when a change is appended, so
   * after an hour without changes this also answers true once: the feed then starts over for nothing
   * worse than a `'*'`.)
   */
  lost(rows: readonly ChangeFeedEntry[]): boolean {
    if (this.#last === 0) return false;
    const entry = rows.find((row) => row.seq === this.#last);
    if (entry === undefined) return true;
    const known = this.#lastEntry;
    return known !== undefined && (known.clientId !== entry.clientId || known.changedAt !== entry.changedAt);
  }

  /**
   * Records one row a poll read, in `seq` order, after {@link lost} answered false for its read.
   * @returns whether to announce its change: a new entry not already delivered by push.
   */
  take(row: ChangeFeedEntry): boolean {
    if (row.seq <= this.#last) {
      // The entry at #last, first read (after the start or a restart): from now on it is checked.
      if (row.seq === this.#last) this.#lastEntry ??= row;
      return false;
    }
    this.#last = row.seq;
    this.#lastEntry = row;
    this.#read.set(row.seq, row.clientId);
    if (this.#read.size > READ_KEPT) this.#read.delete(this.#read.keys().next().value!);
    return !this.#pushed.delete(row.seq);
  }

  /** After a poll: forgets the pushes it has caught up with (their entries were not read, or are gone). */
  settle(): void {
    for (const seq of this.#pushed) if (seq <= this.#last) this.#pushed.delete(seq);
  }

  /** Records a pushed change and says what it means (see {@link PushVerdict}). */
  push(seq: number, clientId: string): PushVerdict {
    if (seq <= this.#last) {
      // Read already by the poll (the usual race), or, after a database restore, a number given out
      // again, which only the poll notices (the entry at #last is gone): then it should look now.
      return this.#read.get(seq) === clientId ? 'known' : 'suspect';
    }
    if (this.#pushed.has(seq)) return 'known';
    if (this.#pushed.size >= PUSHED_KEPT) this.#pushed.clear(); // bound memory; worst case a repeated call
    this.#pushed.add(seq);
    return 'new';
  }
}
