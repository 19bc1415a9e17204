/**
 * @module init-store
 * Store start-up shared by an instance and the standalone admin API: `store.init()` (which may migrate
 * a schema) with a deadline of its own, run once, and run again by the next caller after a failure.
 */
import type { AccountStore } from '../store/account-store.js';
import { callStore, type CallObserver } from './call-store.js';

/** `init()` may migrate a schema: it gets at least this long, whatever `storeTimeout` says. */
const MIN_INIT_TIMEOUT_MS = 30_000;

/** Runs the store's `init()`, if it has one, with at least {@link MIN_INIT_TIMEOUT_MS}. */
export async function initStore(store: AccountStore, storeTimeout: number, observer?: CallObserver): Promise<void> {
  if (store.init) await callStore(() => store.init!(), Math.max(storeTimeout, MIN_INIT_TIMEOUT_MS), 'init', observer);
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
