/**
 * @module feed-loop
 * One poll loop of the change feed plus its push channel, from start() to stop(): reads the feed every
 * `pollIntervalMs`, listens for pushes, announces `'*'` when changes may have been missed, and reports
 * how changes arrive (`push`, `polling`, `reconnecting`, `failing`), and starts over with `'*'` when
 * its {@link FeedCursor} (feed-cursor.ts) finds the entry it read last gone (a restored database). It
 * is the one place that tracks that state: it reports it once when started, then only real changes,
 * never one state twice in a row.
 */
import type { ChangeFeedState } from '../store/account-store.js';
import { callStore } from '../runtime/call-store.js';
import { FeedCursor, type ChangeFeedEntry } from './feed-cursor.js';
import { FeedWatchdog } from './feed-watchdog.js';

/**
 * A push channel for changes, such as PostgreSQL `LISTEN`. Payloads are `"<seq>:<clientId>"`.
 *
 * @example
 * ```ts
 * declare const notifications: ChangeNotifications // e.g. PostgreSQL LISTEN on the store's channel
 * const stop = await notifications.listen((payload) => console.log(payload), (error) => console.error(error))
 * ```
 */
export interface ChangeNotifications {
  /**
   * Starts listening. Rejects when it cannot start; afterwards reports a broken channel once through
   * `onError` (it then delivers nothing more, and the caller starts a new one).
   * @returns a function that stops listening and releases the connection.
   */
  listen(onPayload: (payload: string) => void, onError: (error: unknown) => void): Promise<() => Promise<void>>;
}

/**
 * What a change feed reads and how often.
 *
 * @example
 * ```ts
 * declare const readLatestSeq: () => Promise<number>
 * declare const readSince: ChangeFeedOptions['readSince']
 * const options: ChangeFeedOptions = { readLatestSeq, readSince, pollIntervalMs: 200, onError: console.error }
 * ```
 */
export interface ChangeFeedOptions {
  /** The highest sequence number in the feed (0 when empty). */
  readLatestSeq(): Promise<number>;
  /** Feed rows with `seq > after`, in `seq` order, at most `limit`. */
  readSince(after: number, limit: number): Promise<ChangeFeedEntry[]>;
  readonly pollIntervalMs: number;
  readonly notifications?: ChangeNotifications | undefined;
  /** Told about poll, push and listener failures; never throws. */
  readonly onError: (error: unknown) => void;
}

/**
 * The client ID passed to listeners when changes may have been missed (the feed or the push channel
 * failed): "everything may have changed", drop every cached account.
 *
 * @example
 * ```ts
 * const cache = new Map<string, unknown>()
 * await store.watch!((clientId) => (clientId === ALL_ACCOUNTS ? cache.clear() : cache.delete(clientId)))
 * ```
 */
export const ALL_ACCOUNTS = '*';

const POLL_BATCH = 500;
/**
 * Longest a poll may wait for the database before it is abandoned (counted as a failure) and the next
 * one starts, on a fresh connection if the old one silently died.
 */
export const POLL_DEADLINE_MS = 750;
/**
 * How much longer than `pollIntervalMs` the feed may go without a successful poll. A poll that started
 * at time `s` and succeeded has delivered every change committed before `s`; when no later poll has
 * succeeded by `s + pollIntervalMs + POLL_GRACE_MS`, listeners get `'*'`. A poll that succeeds only
 * after that long from its own start (a slow database) does not end the outage: only a poll that
 * answers in time does. So a change is delivered, or every cache told to stop trusting itself, within
 * `pollIntervalMs + POLL_GRACE_MS` of its commit (400 ms by default), whatever happens to the push
 * channel or the database.
 */
export const POLL_GRACE_MS = 200;
/** Longest the first read of the feed may take before the start fails (a watcher may try again). */
const START_DEADLINE_MS = 5000;
/**
 * Longest the start waits for the push channel. Well under the default `storeTimeout` (2000 ms), so
 * that a push channel that does not answer never makes an instance's first readiness check fail.
 */
const FIRST_LISTEN_WAIT_MS = 1000;
const MAX_BATCHES_PER_POLL = 20;
/**
 * Most reads of the feed in flight at once. A read abandoned at its deadline may still hold a
 * connection until the store gives up on it: one such read does not hold up the next poll (on a fresh
 * connection, when the old one silently died), but a database that stalls every read (a lock on the
 * feed's table) makes the loop wait instead of taking one more connection each poll.
 */
const MAX_READS_IN_FLIGHT = 2;
const LISTEN_RETRY_MIN_MS = 500;
const LISTEN_RETRY_MAX_MS = 30_000;

/** One poll loop plus push channel, from start() to stop(). */
export class FeedLoop {
  readonly #options: ChangeFeedOptions;
  readonly #emit: (clientId: string) => void;
  readonly #onState: (state: ChangeFeedState) => void;
  /** The state last reported, so that only changes are. */
  #reported: ChangeFeedState | undefined;
  /** Whether the push channel is connected. */
  #pushing = false;
  /** What has been read and pushed, and whether the next read or push agrees with it. */
  readonly #cursor = new FeedCursor();
  #failing = false;
  #stopped = false;
  #pollTimer: NodeJS.Timeout | undefined;
  /** A poll is scheduled and not yet started (none is running). */
  #pollWaiting = false;
  #listenTimer: NodeJS.Timeout | undefined;
  #listenRetryMs = LISTEN_RETRY_MIN_MS;
  #stopListening: (() => Promise<void>) | undefined;
  /** Reads of the feed in flight, counting those abandoned at their deadline (see MAX_READS_IN_FLIGHT). */
  #reading = 0;
  /** Announces `'*'` `pollIntervalMs + POLL_GRACE_MS` after the start of the last successful read. */
  readonly #watchdog: FeedWatchdog;

  constructor(options: ChangeFeedOptions, emit: (clientId: string) => void, onState: (state: ChangeFeedState) => void) {
    this.#options = options;
    this.#emit = emit;
    this.#onState = onState;
    this.#watchdog = new FeedWatchdog(options.pollIntervalMs + POLL_GRACE_MS, () => this.#stale());
  }

  async start(): Promise<void> {
    // A deadline, so that a connection that went silent cannot hold the start (and every watcher
    // waiting on it) for as long as TCP takes to give up: the start fails, and the next watch retries.
    this.#cursor.startAt(await callStore(() => this.#options.readLatestSeq(), START_DEADLINE_MS, 'change feed start'));
    if (this.#stopped) return;
    // The feed starts from that read, however long it took: nothing before it can have been missed,
    // so the watchdog's limit counts from now.
    this.#watchdog.readJustNow();
    this.#schedulePoll();
    // Waited for, briefly, so that watch() resolves with notifications live. #listen never rejects (a
    // failed attempt, or one that does not answer within the push channel's own deadline, is reported
    // to onError and retried, and the poll covers the gap); one that is slow to answer goes on after
    // the wait, and the feed reports `reconnecting` until it does.
    let waited: NodeJS.Timeout | undefined;
    await Promise.race([this.#listen(), new Promise<void>((resolve) => (waited = setTimeout(resolve, FIRST_LISTEN_WAIT_MS)))]);
    clearTimeout(waited);
    this.#report(); // the first state, when #listen did not report it (no push channel, or still connecting)
  }

  /**
   * How changes are delivered now: `failing` (the feed cannot be read), else `push` or `reconnecting`
   * with a push channel, `polling` without. Once started, it is the state last reported: whatever
   * changes it reports the change in the same turn.
   */
  get state(): ChangeFeedState {
    if (this.#failing) return 'failing';
    if (!this.#options.notifications) return 'polling';
    return this.#pushing ? 'push' : 'reconnecting';
  }

  /** Reports the state if it changed since the last report; called after anything that may change it. */
  #report(): void {
    const state = this.state;
    if (this.#stopped || state === this.#reported) return;
    this.#reported = state;
    this.#onState(state);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#pollTimer);
    clearTimeout(this.#listenTimer);
    this.#watchdog.stop();
    await this.#releasePushChannel();
  }

  /** Stops the push channel, if one is open; what that throws goes to onError. */
  async #releasePushChannel(): Promise<void> {
    const stopListening = this.#stopListening;
    this.#stopListening = undefined;
    await stopListening?.().catch(this.#options.onError);
  }

  #schedulePoll(): void {
    if (this.#stopped) return;
    // A chain of timeouts, not an interval: polls never overlap, and a slow database slows the loop.
    this.#pollWaiting = true;
    this.#pollTimer = setTimeout(() => {
      this.#pollWaiting = false;
      void this.#poll();
    }, this.#options.pollIntervalMs);
    this.#pollTimer.unref();
  }

  /** Polls now instead of at the scheduled time, unless a poll is running (polls never overlap). */
  #pollNow(): void {
    if (this.#stopped || !this.#pollWaiting) return;
    clearTimeout(this.#pollTimer);
    this.#pollWaiting = false;
    void this.#poll();
  }

  #stale(): void {
    this.#options.onError(new Error(`The change feed was not read for ${this.#options.pollIntervalMs + POLL_GRACE_MS} ms`));
    if (!this.#failing) this.#emit(ALL_ACCOUNTS); // once per outage, like a failed poll
    this.#failing = true;
    this.#report();
  }

  async #poll(): Promise<void> {
    if (this.#reading >= MAX_READS_IN_FLIGHT) {
      // The watchdog goes on counting: the feed turns `failing` if this lasts.
      this.#schedulePoll();
      return;
    }
    const read = this.#watchdog.begin();
    let complete = false; // read up to the end of the feed, not stopped by MAX_BATCHES_PER_POLL
    try {
      for (let batch = 0; batch < MAX_BATCHES_PER_POLL && !complete; batch++) {
        // From the entry read last on, to see that it is still there.
        const rows = await callStore(() => this.#readSince(this.#cursor.readFrom), POLL_DEADLINE_MS, 'change feed poll');
        if (this.#stopped) return;
        if (this.#cursor.lost(rows)) {
          await this.#restart();
          complete = true;
          break;
        }
        for (const row of rows) if (this.#cursor.take(row)) this.#emit(row.clientId);
        complete = rows.length < POLL_BATCH;
      }
      this.#cursor.settle();
    } catch (error) {
      complete = false;
      this.#options.onError(error);
      // Changes are delayed (not lost: the poll resumes where it was), but caches must not trust
      // themselves meanwhile. Once per outage.
      if (!this.#failing && !this.#stopped) this.#emit(ALL_ACCOUNTS);
      this.#failing = true;
    } finally {
      // Only a fresh, complete read ends an outage: one that answered after the watchdog's limit, or
      // stopped at MAX_BATCHES_PER_POLL, has not delivered every change in time.
      if (this.#watchdog.end(read, complete)) this.#failing = false;
      this.#report();
      this.#schedulePoll();
    }
  }

  /**
   * Starts the feed over from its current end, after {@link FeedCursor.lost}: every change up to
   * there is announced as `'*'` (listeners drop everything and read anew), later ones as usual.
   */
  async #restart(): Promise<void> {
    const latest = await callStore(() => this.#options.readLatestSeq(), POLL_DEADLINE_MS, 'change feed poll');
    if (this.#stopped) return;
    this.#options.onError(new Error(`The change feed's entry ${this.#cursor.last} is gone (a database restored, or another server took over): reading it again from its end`));
    this.#cursor.startAt(latest);
    this.#emit(ALL_ACCOUNTS);
  }

  #readSince(after: number): Promise<ChangeFeedEntry[]> {
    const reading = this.#options.readSince(after, POLL_BATCH);
    this.#reading++;
    const done = (): void => void this.#reading--;
    reading.then(done, done);
    return reading;
  }

  async #listen(): Promise<void> {
    const notifications = this.#options.notifications;
    if (!notifications || this.#stopped) return;
    let broken = false;
    const onError = (error: unknown): void => {
      if (broken) return;
      broken = true;
      this.#pushing = false;
      this.#report();
      this.#options.onError(error);
      void this.#releasePushChannel();
      // Pushes may have been lost: the poll still delivers them, but say so at once.
      if (!this.#stopped) this.#emit(ALL_ACCOUNTS);
      this.#scheduleListen();
    };
    try {
      const stopListening = await notifications.listen((payload) => this.#onPush(payload), onError);
      if (this.#stopped || broken) {
        await stopListening().catch(this.#options.onError);
        return;
      }
      this.#stopListening = stopListening;
      this.#listenRetryMs = LISTEN_RETRY_MIN_MS;
      this.#pushing = true;
      this.#report();
    } catch (error) {
      // A channel that broke while connecting may have told onError first (pg emits 'error', then
      // rejects the query): that already reported it and scheduled the one retry.
      if (broken) return;
      broken = true;
      this.#options.onError(error);
      this.#report();
      this.#scheduleListen();
    }
  }

  #scheduleListen(): void {
    if (this.#stopped) return;
    this.#listenTimer = setTimeout(() => void this.#listen(), this.#listenRetryMs);
    this.#listenTimer.unref();
    this.#listenRetryMs = Math.min(this.#listenRetryMs * 2, LISTEN_RETRY_MAX_MS);
  }

  #onPush(payload: string): void {
    if (this.#stopped) return;
    const separator = payload.indexOf(':');
    const seq = Number(payload.slice(0, separator));
    const clientId = payload.slice(separator + 1);
    if (separator < 0 || !Number.isSafeInteger(seq)) {
      this.#emit(payload); // not ours to dedupe: deliver as is, the poll may repeat it
      return;
    }
    const verdict = this.#cursor.push(seq, clientId);
    // A number the poll has passed but not read there: perhaps given out again after a database
    // restore, which only the poll notices (the entry it read last is gone), so it looks now.
    if (verdict === 'suspect') this.#pollNow();
    else if (verdict === 'new') this.#emit(clientId);
  }
}
