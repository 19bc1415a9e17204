/**
 * @module change-feed
 * Turns the `account_changes` table (polled) and an optional push channel (PostgreSQL `LISTEN`) into
 * calls of `watch()` listeners, without ever throwing into the caller or the event loop. The polling
 * and the push channel themselves are the {@link FeedLoop}'s (feed-loop.ts); this module fans them out.
 */
import type { AccountChangeListener, ChangeFeedState, WatchOptions } from '../store/account-store.js';
import { FeedLoop, type ChangeFeedOptions } from './feed-loop.js';

export { ALL_ACCOUNTS } from './feed-loop.js';

export type { ChangeFeedEntry } from './feed-cursor.js';
export type { ChangeFeedOptions, ChangeNotifications } from './feed-loop.js';
export { POLL_DEADLINE_MS, POLL_GRACE_MS } from './feed-loop.js';

/**
 * Fans the change feed out to listeners. One poll loop (and one push connection) serves every
 * listener of a store; it starts with the first listener and stops with the last.
 *
 * @example
 * ```ts
 * declare const readLatestSeq: () => Promise<number> // the store's reads of its change table
 * declare const readSince: (after: number, limit: number) => Promise<ChangeFeedEntry[]>
 * const cache = new Map<string, unknown>()
 * const feed = new ChangeFeed({ readLatestSeq, readSince, pollIntervalMs: 200, onError: () => {} })
 * const stop = await feed.watch((clientId) => cache.delete(clientId))
 * ```
 */
export class ChangeFeed {
  readonly #options: ChangeFeedOptions;
  readonly #listeners = new Set<Watcher>();
  #run: { readonly loop: FeedLoop; readonly started: Promise<void> } | undefined;
  #closed = false;

  constructor(options: ChangeFeedOptions) {
    this.#options = options;
  }

  /**
   * Adds a listener, starting the loop from the current end of the feed. `options.onStateChange` is
   * told the feed's state once watching has started, then every change the loop reports (the loop
   * reports only changes, so a watcher never hears one state twice in a row).
   */
  async watch(listener: AccountChangeListener, options?: WatchOptions): Promise<() => Promise<void>> {
    if (this.#closed) throw new Error('The account store is closed');
    const entry: Watcher = { listener, onStateChange: options?.onStateChange?.bind(options), started: false }; // its own identity, so one function can be added twice
    this.#listeners.add(entry);
    if (!this.#run) {
      const loop = new FeedLoop(this.#options, (clientId) => this.#emit(clientId), (state) => this.#emitState(state));
      this.#run = { loop, started: loop.start() };
    }
    const run = this.#run;
    try {
      await run.started;
      if (!this.#listeners.has(entry)) throw new Error('The account store is closed'); // closed while starting
      // From here on it hears every change the loop reports; what the loop reported before (while it
      // was starting) is summed up by its current state.
      entry.started = true;
      this.#tell(entry, run.loop.state);
    } catch (error) {
      this.#listeners.delete(entry);
      if (this.#run === run) {
        this.#run = undefined; // the next watch() starts afresh
        await run.loop.stop();
      }
      throw error;
    }
    return async () => {
      this.#listeners.delete(entry);
      await this.#stopIfIdle();
    };
  }

  /**
   * Stops the loop and forgets every listener. A listener still watching (another user of the same
   * store object, such as a second instance) hears of no change from now on: its `onStateChange` is
   * told `failing` first, so that it stops trusting what it cached, as when the feed cannot be read.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const watchers = [...this.#listeners];
    const wasFailing = this.#run?.loop.state === 'failing';
    this.#listeners.clear();
    // A watcher whose watch() has not started yet is refused instead (the store is closed).
    if (!wasFailing) for (const entry of watchers) if (entry.started) this.#tell(entry, 'failing');
    await this.#stopIfIdle();
  }

  async #stopIfIdle(): Promise<void> {
    const run = this.#run;
    if (!run || this.#listeners.size > 0) return;
    this.#run = undefined;
    await run.loop.stop();
  }

  #emitState(state: ChangeFeedState): void {
    for (const entry of [...this.#listeners]) if (entry.started) this.#tell(entry, state);
  }

  #tell(entry: Watcher, state: ChangeFeedState): void {
    try {
      entry.onStateChange?.(state);
    } catch (error) {
      this.#options.onError(error);
    }
  }

  #emit(clientId: string): void {
    for (const { listener } of [...this.#listeners]) {
      try {
        listener(clientId);
      } catch (error) {
        this.#options.onError(error);
      }
    }
  }
}

/** A listener of {@link ChangeFeed.watch}. */
interface Watcher {
  readonly listener: AccountChangeListener;
  readonly onStateChange: ((state: ChangeFeedState) => void) | undefined;
  /** Whether its watch() has started: it has been told the state and now hears every change. */
  started: boolean;
}
