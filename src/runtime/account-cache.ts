/**
 * @module account-cache
 * A per-instance cache of account records (status and secret hashes) shared by the token endpoint and
 * the bearer check, so a protected request does not need a store round trip.
 *
 * Freshness: when the store announces changes (`watch`), entries live `statusCacheTtl` and are dropped
 * as soon as a change is announced; without `watch`, and while the store reports that its change feed
 * is `failing` (announcements may be missed), entries live at most 500 ms, and the feed starting to
 * fail drops every entry. Changes made through this instance drop the entry at once. Lifetimes count
 * from the moment the store read *began*, not from when its answer arrived, so a slow store cannot
 * stretch them.
 *
 * Guarantee. Call a request's arrival the moment it consults the cache (`peek()` or `get()`; the token
 * endpoint and the bearer check do so at or after the request reached the server). A request that
 * arrives at time `t`:
 * - is never answered from a store read that began before an invalidation of its client ID (or `'*'`)
 *   that happened before `t`. An invalidation drops the entry and detaches the read in flight, so
 *   `get()` starts a fresh read instead of joining it, and the detached read's answer is never cached;
 * - is never answered from a store read that began more than the entry lifetime before `t` (500 ms
 *   without `watch`, `statusCacheTtl` with it; 0 means every request reads the store itself), whether
 *   that read's answer is cached or still in flight.
 * With a store whose reads see every change committed before they begin, a revocation (or disable) is
 * therefore never missed by a request that arrives more than 500 ms after it was committed (without
 * `watch`) or after this instance learned of it (with `watch`: its own admin call, or the store's
 * announcement), however slow the store's answers are. The 1-second bound holds on arrival.
 *
 * A request that arrived *before* the invalidation and joined a read that finishes after it is answered
 * from that read, even if the answer is sent after the revocation. This is deliberate: the request was
 * concurrent with the revocation, and admitting it is the outcome it would have had had it been served
 * at once (the read it joined began before the request arrived and after any earlier invalidation), so
 * every answer is consistent with one order of requests and revocations. Re-reading for it would add a
 * store round trip and still race with writing the response. The detached read's answer is not cached,
 * so no later request sees it.
 *
 * Concurrent misses for one client ID share one store read. Invalidating one client ID leaves reads
 * for other client IDs in flight and cacheable; `'*'` detaches all of them. `peek()`, on every
 * protected request, is one `Map` lookup and one clock read: the bookkeeping above costs only on a miss.
 *
 * Bound: at most `max` entries; when full, the entry stored longest ago goes first. An entry lives at most
 * its lifetime and an account in use is stored again once it expires, so (lifetimes being alike) the
 * entry stored longest ago is the one closest to expiring anyway: evicting it costs at most one early
 * store read, and a hit needs none of an LRU's reordering on every request.
 */
import type { AccountRecord, AccountStore, ChangeFeedState } from '../store/account-store.js';
import { StoreUnavailableError } from '../errors.js';
import { callStore, type CallObserver } from './call-store.js';

/** Cache lifetime when the store cannot announce changes: half of the 1-second revocation bound (docs/security.md). */
export const WATCHLESS_TTL_MS = 500;

/** What a lookup answers: the record, or `undefined` for an unknown client. */
interface Cached {
  readonly account: AccountRecord | undefined;
}

interface Entry {
  readonly cached: Cached;
  /** Last moment (cache clock) at which the entry is fresh. */
  readonly freshUntil: number;
}

/** One store read in flight; `startedAt` is on the cache's monotonic clock. */
interface Load {
  readonly startedAt: number;
  promise: Promise<AccountRecord | undefined>;
}

/** See the module description. */
export class AccountCache {
  readonly #store: AccountStore;
  readonly #timeout: number;
  readonly #watchedTtl: number;
  /** Insertion order is storage order: the first entry is the one stored longest ago. */
  readonly #entries = new Map<string, Entry>();
  readonly #max: number;
  readonly #clock: { now(): number };
  /** The read each client ID may join; an invalidation removes it (the read goes on, detached). */
  readonly #inflight = new Map<string, Load>();
  readonly #listeners = new Set<(clientId: string) => void>();
  readonly #observer: CallObserver | undefined;
  readonly #onFeedState: ((state: ChangeFeedState) => void) | undefined;
  #hits = 0;
  #misses = 0;
  #watching = false;
  /** The store reported that its change feed cannot be read: changes may go unannounced. */
  #feedFailing = false;
  #unwatch: (() => Promise<void>) | undefined;

  constructor(options: {
    store: AccountStore;
    storeTimeout: number;
    statusCacheTtl: number;
    max?: number;
    clock?: { now(): number };
    /** Sees every store call (metrics, spans, outage events). */
    observer?: CallObserver;
    /** Told how the store's change feed delivers changes, when the store reports it (only changes: see `WatchOptions`). */
    onFeedState?: (state: ChangeFeedState) => void;
  }) {
    this.#store = options.store;
    this.#observer = options.observer;
    this.#onFeedState = options.onFeedState;
    this.#timeout = options.storeTimeout;
    this.#watchedTtl = options.statusCacheTtl;
    this.#max = options.max ?? 50_000;
    // One monotonic millisecond clock (`performance` unless a test injects one) measures entry lifetimes
    // and read ages, read on each lookup: no timer is ever scheduled per request.
    this.#clock = options.clock ?? performance;
  }

  /** How long, in milliseconds, what is read now may be used: the lifetime of an entry stored now. */
  get ttl(): number {
    return this.#ttl;
  }

  get #ttl(): number {
    // While the store says its change feed cannot be read, announcements may be missed: cache as if
    // the store could not watch at all, so a revocation still reaches this instance within 1 second.
    return this.#watching && !this.#feedFailing ? this.#watchedTtl : Math.min(this.#watchedTtl, WATCHLESS_TTL_MS);
  }

  /** Subscribes to the store's change announcements, if it makes any. */
  async start(): Promise<void> {
    if (!this.#store.watch || this.#unwatch) return;
    // Set when this attempt gave up: a watch that starts after its deadline must change nothing.
    let abandoned = false;
    const options = {
      onStateChange: (state: ChangeFeedState): void => {
        if (abandoned) return;
        const wasFailing = this.#feedFailing;
        this.#feedFailing = state === 'failing';
        // Changes may have gone unannounced since the feed stopped: entries cached under the longer
        // lifetime cannot be trusted for it any more.
        if (this.#feedFailing && !wasFailing) this.invalidate('*');
        this.#onFeedState?.(state);
      },
    };
    const watching = Promise.resolve().then(() =>
      this.#store.watch!((clientId) => {
        if (!abandoned) this.invalidate(clientId);
      }, options),
    );
    try {
      this.#unwatch = await callStore(() => watching, this.#timeout, 'watch', this.#observer);
    } catch (error) {
      abandoned = true;
      // Stopped as soon as it starts, if it ever does; the next start() watches anew.
      void watching.then((unwatch) => unwatch()).catch(() => undefined);
      throw error;
    }
    this.#watching = true;
  }

  async stop(): Promise<void> {
    const unwatch = this.#unwatch;
    this.#unwatch = undefined;
    this.#watching = false;
    this.#entries.clear();
    this.#inflight.clear();
    if (unwatch) await unwatch();
  }

  /** Called with every client ID dropped from the cache ('*' for all). */
  onInvalidate(listener: (clientId: string) => void): void {
    this.#listeners.add(listener);
  }

  /** The cached record, if fresh: `{ account }` (account may be undefined = unknown client), else `undefined`. */
  peek(clientId: string): Cached | undefined {
    const entry = this.#fresh(clientId);
    if (entry === undefined) return undefined;
    this.#hits++;
    return entry.cached;
  }

  /** The entry if it is fresh; an expired one is dropped. */
  #fresh(clientId: string): Entry | undefined {
    const entry = this.#entries.get(clientId);
    if (entry === undefined) return undefined;
    if (this.#clock.now() <= entry.freshUntil) return entry;
    this.#entries.delete(clientId);
    return undefined;
  }

  #keep(clientId: string, account: AccountRecord | undefined, freshUntil: number): void {
    // Deleted first so that the entry moves to the end of the storage order.
    this.#entries.delete(clientId);
    this.#entries.set(clientId, { cached: { account }, freshUntil });
    if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!);
  }

  /** Whether the store's changes are being watched. */
  get watching(): boolean {
    return this.#watching;
  }

  /**
   * Whether the store's change announcements are arriving: watched, and the feed not reported failing.
   * A function of the cache itself, so the revoked-token cache can hold it and ask on every lookup.
   */
  readonly announcing = (): boolean => this.#watching && !this.#feedFailing;

  /** Lookups answered from the cache (`hits`) and by the store (`misses`) since start. */
  counts(): { hits: number; misses: number } {
    return { hits: this.#hits, misses: this.#misses };
  }

  /**
   * The account, from the cache when fresh, else from the store. Concurrent misses share one read,
   * unless it began before an invalidation of this client ID or longer ago than the entry lifetime.
   */
  get(clientId: string): Promise<AccountRecord | undefined> {
    const cached = this.#fresh(clientId);
    if (cached !== undefined) {
      this.#hits++;
      return Promise.resolve(cached.cached.account);
    }
    this.#misses++;
    const now = this.#clock.now();
    const pending = this.#inflight.get(clientId);
    if (pending && now - pending.startedAt < this.#ttl) return pending.promise;
    return this.#load(clientId, now);
  }

  #load(clientId: string, startedAt: number): Promise<AccountRecord | undefined> {
    const load: Load = { startedAt, promise: Promise.resolve(undefined) };
    load.promise = callStore(() => this.#store.findAccount(clientId), this.#timeout, 'findAccount', this.#observer)
      .then((account) => {
        const problem = account === undefined ? undefined : accountShapeProblem(account);
        if (problem !== undefined) throw new StoreUnavailableError(`The store's findAccount returned ${problem}`);
        // Detached (an invalidation since it began, or a newer read): what it read may be stale, or older
        // than the newer read's answer. Do not cache it.
        if (this.#inflight.get(clientId) !== load) return account;
        // The lifetime counts from the start of the read, so the entry gets what is left of it (rounded
        // down). Nothing left, or a TTL of 0, means no caching.
        const now = this.#clock.now();
        const left = Math.floor(this.#ttl - (now - startedAt));
        if (left >= 1) this.#keep(clientId, account, now + left);
        return account;
      })
      .finally(() => {
        if (this.#inflight.get(clientId) === load) this.#inflight.delete(clientId);
      });
    this.#inflight.set(clientId, load);
    return load.promise;
  }

  /** Drops one account ('*': every account) so the next read goes to the store, and detaches its read in flight. */
  invalidate(clientId: string): void {
    if (clientId === '*') {
      this.#entries.clear();
      this.#inflight.clear();
    } else {
      this.#entries.delete(clientId);
      this.#inflight.delete(clientId);
    }
    for (const listener of this.#listeners) listener(clientId);
  }
}

/*
 * What every account record a store hands back must look like at the least, checked when it is read: a
 * host's own store that returns a record of another shape (a column read as `null`, a list stored as
 * text) fails the read like an outage (503), instead of a 500 from deep inside a check, a hung request
 * or a crash.
 */
const isList = (value: unknown): boolean => Array.isArray(value);
const isOptionalList = (value: unknown): boolean => value === undefined || Array.isArray(value);
const isText = (value: unknown): boolean => typeof value === 'string';

/** Each field the checks read, and the types it may have. */
const FIELDS: ReadonlyArray<readonly [string, (field: unknown) => boolean]> = [
  ['clientId', isText],
  ['name', isText],
  ['clientAccountId', (field) => field === null || typeof field === 'string'],
  ['scopes', isList],
  ['resources', isOptionalList],
  ['enabled', (field) => typeof field === 'boolean'],
  ['secrets', isList],
  ['keys', isOptionalList],
  ['federated', isOptionalList],
];

/**
 * Why `value` cannot be an account record (the first field of the wrong type), or `undefined` when its
 * fields have the types the token checks rely on. Only types are checked, once per store read.
 *
 * @example
 * ```ts
 * accountShapeProblem(account) // undefined: a record as the store interface describes it
 * accountShapeProblem({ ...account, scopes: null }) // 'an account record whose scopes is null'
 * ```
 */
export function accountShapeProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'something that is not an account record';
  const account = value as Record<string, unknown>;
  for (const [name, valid] of FIELDS) {
    if (!valid(account[name])) return `an account record whose ${name} is ${account[name] === null ? 'null' : typeof account[name]}`;
  }
  return undefined;
}
