/**
 * @module init-store
 * Store start-up shared by an instance and the standalone admin API: `store.init()` (which may migrate
 * a schema) with a deadline of its own, run once, and run again by the next caller after a failure.
 */
import type { AccountStore } from '../store/account-store.js';
import { callStore, type CallObserver } from './call-store.js';

/**
 * Start-up calls (`init()`, which may migrate a schema; subscribing to the store's changes; the first
 * read of the deny-list) get at least this long, whatever `storeTimeout` says: `storeTimeout` bounds
 * what a request waits for, and no request is answered by a start-up call alone.
 */
const MIN_STARTUP_TIMEOUT_MS = 30_000;

/** The deadline of a start-up call: `storeTimeout`, or {@link MIN_STARTUP_TIMEOUT_MS} if that is longer. */
export function startupTimeout(storeTimeout: number): number {
  return Math.max(storeTimeout, MIN_STARTUP_TIMEOUT_MS);
}

/** Runs the store's `init()`, if it has one, with the start-up deadline ({@link startupTimeout}). */
export async function initStore(store: AccountStore, storeTimeout: number, observer?: CallObserver): Promise<void> {
  if (store.init) await callStore(() => store.init!(), startupTimeout(storeTimeout), 'init', observer);
}

/**
 * Wraps `task` so it runs once: every caller shares the same run (and its result); after a failure
 * the next caller starts a new one. Also what the SQL stores start their schema and pool with.
 */
export function onceUntilSuccess<T>(task: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () => {
    running ??= task().catch((err: unknown) => {
      running = undefined;
      throw err;
    });
    return running;
  };
}
