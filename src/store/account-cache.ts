/**
 * @module account-cache
 * A per-instance cache of account records (status and secret hashes) shared by the token endpoint and
 * the bearer check, so a protected request does not need a store round trip.
 *
 * Freshness: when the store announces changes (`watch`), entries live `statusCacheTtl` and are dropped
 * as soon as a change is announced; without `watch`, entries live at most 500 ms. Changes made through
 * this instance drop the entry at once. Either way a revocation takes effect everywhere within 1 second.
 */
import { LRUCache } from 'lru-cache';
import type { AccountRecord, AccountStore } from './account-store.js';
import { callStore } from './call-store.js';

/** Cache lifetime when the store cannot announce changes: half of the contract's 1-second bound. */
export const WATCHLESS_TTL_MS = 500;

interface Entry {
  readonly account: AccountRecord | undefined;
}

/** See the module description. */
export class AccountCache {
  readonly #store: AccountStore;
  readonly #timeout: number;
  readonly #watchedTtl: number;
  readonly #entries: LRUCache<string, Entry>;
  readonly #inflight = new Map<string, Promise<AccountRecord | undefined>>();
  readonly #listeners = new Set<(clientId: string) => void>();
  #epoch = 0;
  #watching = false;
  #unwatch: (() => Promise<void>) | undefined;

  constructor(options: { store: AccountStore; storeTimeout: number; statusCacheTtl: number; max?: number }) {
    this.#store = options.store;
    this.#timeout = options.storeTimeout;
    this.#watchedTtl = options.statusCacheTtl;
    // ttlResolution 0: read the clock on each lookup instead of caching it behind a 1 ms timer, which
    // would schedule a timer per request whenever requests are more than 1 ms apart.
    this.#entries = new LRUCache<string, Entry>({ max: options.max ?? 50_000, ttlResolution: 0 });
  }

  get #ttl(): number {
    return this.#watching ? this.#watchedTtl : Math.min(this.#watchedTtl, WATCHLESS_TTL_MS);
  }

  /** Subscribes to the store's change announcements, if it makes any. */
  async start(): Promise<void> {
    if (!this.#store.watch || this.#unwatch) return;
    this.#unwatch = await callStore(() => this.#store.watch!((clientId) => this.invalidate(clientId)), this.#timeout, 'watch');
    this.#watching = true;
  }

  async stop(): Promise<void> {
    const unwatch = this.#unwatch;
    this.#unwatch = undefined;
    this.#watching = false;
    this.#entries.clear();
    if (unwatch) await unwatch();
  }

  /** Called with every client ID dropped from the cache ('*' for all). */
  onInvalidate(listener: (clientId: string) => void): void {
    this.#listeners.add(listener);
  }

  /** The cached record, if fresh: `{ account }` (account may be undefined = unknown client), else `undefined`. */
  peek(clientId: string): Entry | undefined {
    return this.#entries.get(clientId);
  }

  /** The account, from the cache when fresh, else from the store (concurrent misses share one call). */
  get(clientId: string): Promise<AccountRecord | undefined> {
    const cached = this.#entries.get(clientId);
    if (cached) return Promise.resolve(cached.account);
    const pending = this.#inflight.get(clientId);
    if (pending) return pending;
    const epoch = this.#epoch;
    const load = callStore(() => this.#store.findAccount(clientId), this.#timeout, 'findAccount')
      .then((account) => {
        // A change announced while loading may not be reflected in what we loaded: do not cache it.
        // A TTL of 0 means no caching (to lru-cache it would mean "never expires").
        const ttl = this.#ttl;
        if (epoch === this.#epoch && ttl > 0) this.#entries.set(clientId, { account }, { ttl });
        return account;
      })
      .finally(() => this.#inflight.delete(clientId));
    this.#inflight.set(clientId, load);
    return load;
  }

  /** Drops one account ('*': every account) so the next read goes to the store. */
  invalidate(clientId: string): void {
    this.#epoch++;
    if (clientId === '*') this.#entries.clear();
    else this.#entries.delete(clientId);
    for (const listener of this.#listeners) listener(clientId);
  }
}
