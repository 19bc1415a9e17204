/**
 * @module revoked-token-cache
 * Each instance's copy of the store's token deny-list, so the bearer check and introspection refuse a
 * revoked token with one `Map` lookup instead of a store read per request.
 *
 * Freshness, as for the account cache: the list is read once at start-up; after that, while the store
 * announces changes (`watch`, and its change feed is not failing), each revocation arrives as a change
 * key and is added at once, so the list stays current without reading the store. When announcements
 * may have been missed (`'*'`: the feed failed or the push channel broke) the list is no longer trusted
 * until it is read again; without `watch` a read is trusted for 500 ms. A lookup the list cannot answer
 * waits for one shared read (started after the lookup arrived, or after the last `'*'`), and a failed
 * read fails the lookup (503): a revoked token is never admitted for want of the list.
 *
 * Revocation is final, so entries are only ever added, and dropped once the token has expired (its
 * `exp` plus the clock tolerance), checked at most once a minute. Entries are filed by the minute they
 * expire in, so a check visits those minutes (at most one per minute of the longest lifetime) and the
 * entries that expired, never the whole list.
 *
 * Whether a token expired is judged on the wall clock, which can step back (an NTP correction of a
 * clock that ran ahead): an entry dropped, or never read, because the clock said its token had expired
 * would let that token in again once the clock is set right. So the list remembers the latest wall time
 * up to which it may lack entries (the moment of its last trusted read, raised by every drop), and a
 * check whose clock is earlier than that does not trust the list: the list is read again first.
 */
import type { AccountStore } from '../store/account-store.js';
import { WATCHLESS_TTL_MS } from './account-cache.js';
import { callStore, type CallObserver } from './call-store.js';
import { parseRevokedTokenChangeKey } from '../store/revoked-token-change.js';

const PRUNE_EVERY_MS = 60_000;

/** One read of the whole list; `startedAt` on the monotonic clock. */
interface Load {
  readonly startedAt: number;
  /** A `'*'` arrived while it ran: what it read may miss a revocation, so it is not trusted. */
  stale: boolean;
  readonly promise: Promise<void>;
}

/** See the module description. */
export class RevokedTokenCache {
  readonly #store: AccountStore;
  readonly #supported: boolean;
  readonly #timeout: number;
  readonly #observer: CallObserver | undefined;
  readonly #clock: { now(): number };
  readonly #now: () => Date;
  readonly #toleranceMs: number;
  readonly #announcing: () => boolean;
  /** Token ID → when the entry may be dropped (wall clock ms: `exp` plus the tolerance). */
  readonly #entries = new Map<string, number>();
  /** Minute (of the wall clock) an entry expires in → the token IDs expiring then. */
  readonly #expiring = new Map<number, string[]>();
  /** Start (monotonic) of the last read that is trusted; `undefined` when none is. */
  #trustedFrom: number | undefined;
  #inflight: Load | undefined;
  #nextPrune = 0;
  /**
   * Wall-clock ms before which the list may lack entries: it holds every entry of the store kept past
   * this instant (from the start of its last trusted read, raised by every drop). `undefined` before the first read.
   */
  #horizon: number | undefined;

  constructor(options: {
    store: AccountStore;
    storeTimeout: number;
    /** Seconds of leeway on `exp`: an entry outlives its token's `exp` by this much. */
    clockTolerance: number;
    now: () => Date;
    /** Whether the store's change announcements are arriving (the account cache knows). */
    announcing: () => boolean;
    observer?: CallObserver;
    clock?: { now(): number };
  }) {
    this.#store = options.store;
    this.#supported = typeof options.store.listRevokedTokens === 'function';
    this.#timeout = options.storeTimeout;
    this.#observer = options.observer;
    this.#now = options.now;
    this.#toleranceMs = options.clockTolerance * 1000;
    this.#announcing = options.announcing;
    this.#clock = options.clock ?? performance;
  }

  /** Reads the list; called at start-up, after the store's announcements are subscribed to. */
  start(): Promise<void> {
    return this.#supported ? this.#load() : Promise.resolve();
  }

  /** Hears every change key of the store (the account cache's invalidations): revocations and `'*'`. */
  onChange(key: string): void {
    if (key === '*') {
      this.#trustedFrom = undefined;
      if (this.#inflight) this.#inflight.stale = true;
      return;
    }
    const revoked = parseRevokedTokenChangeKey(key);
    if (revoked) this.#add(revoked.tokenId, revoked.expiresAt);
  }

  /**
   * Synchronous answer: `true` when the token is on the list, `false` when the list is fresh and it is
   * not, `undefined` when only a read of the list can tell (then use {@link isRevoked}). `now` (the
   * instance's wall clock, in ms) is the time the token was judged unexpired at: when the clock has
   * stepped back before entries were dropped, the list is not trusted until it is read again.
   */
  check(tokenId: string, now?: number): boolean | undefined {
    if (this.#entries.has(tokenId)) return true;
    if (!this.#supported) return false;
    if (!this.#fresh()) return undefined;
    if (now !== undefined && this.#horizon !== undefined && now < this.#horizon) {
      // The clock went back: entries of tokens it called expired may be missing. Read the list anew.
      this.#trustedFrom = undefined;
      if (this.#inflight) this.#inflight.stale = true;
      return undefined;
    }
    return false;
  }

  /**
   * Whether the token is revoked, reading the list first when it is not fresh.
   * @throws {StoreUnavailableError} the store failed or timed out (→ 503)
   */
  async isRevoked(tokenId: string): Promise<boolean> {
    const known = this.check(tokenId);
    if (known !== undefined) return known;
    await this.#load();
    return this.#entries.has(tokenId);
  }

  #fresh(): boolean {
    if (this.#trustedFrom === undefined) return false;
    return this.#announcing() || this.#clock.now() - this.#trustedFrom < WATCHLESS_TTL_MS;
  }

  #add(tokenId: string, expiresAt: number): void {
    const until = expiresAt + this.#toleranceMs;
    if (this.#entries.get(tokenId) !== until) {
      this.#entries.set(tokenId, until);
      const minute = Math.ceil(until / PRUNE_EVERY_MS);
      const due = this.#expiring.get(minute);
      if (due) due.push(tokenId);
      else this.#expiring.set(minute, [tokenId]);
    }
    this.#prune();
  }

  #load(): Promise<void> {
    const now = this.#clock.now();
    const joinable = this.#inflight && !this.#inflight.stale && now - this.#inflight.startedAt < WATCHLESS_TTL_MS;
    if (joinable) return this.#inflight!.promise;
    const read = this.#now().getTime() - this.#toleranceMs;
    const load: Load = {
      startedAt: now,
      stale: false,
      promise: callStore(() => this.#store.listRevokedTokens!(new Date(read)), this.#timeout, 'listRevokedTokens', this.#observer).then(
        (records) => {
          const trusted = !load.stale && (this.#trustedFrom === undefined || load.startedAt > this.#trustedFrom);
          // It read every entry whose `expiresAt` plus the tolerance is after its wall time. Set before
          // the entries go in: adding them may prune, on a clock that moved on, and that raises it again.
          if (trusted) this.#horizon = read + this.#toleranceMs;
          for (const record of records) this.#add(record.tokenId, record.expiresAt.getTime());
          if (trusted) this.#trustedFrom = load.startedAt;
        },
      ),
    };
    this.#inflight = load;
    void load.promise.then(
      () => this.#settle(load),
      () => this.#settle(load),
    );
    return load.promise;
  }

  #settle(load: Load): void {
    if (this.#inflight === load) this.#inflight = undefined;
  }

  #prune(): void {
    const now = this.#now().getTime();
    if (now < this.#nextPrune && now >= this.#nextPrune - PRUNE_EVERY_MS) return;
    this.#nextPrune = now + PRUNE_EVERY_MS;
    // Entries that end by now may be dropped: a check on an earlier clock must read the list again.
    this.#horizon = this.#horizon === undefined ? now : Math.max(this.#horizon, now);
    for (const [minute, tokenIds] of this.#expiring) {
      if (minute * PRUNE_EVERY_MS > now) continue;
      this.#expiring.delete(minute);
      // An entry heard again with a later expiry is filed under that later minute too, and kept till then.
      for (const tokenId of tokenIds) if ((this.#entries.get(tokenId) ?? Infinity) <= now) this.#entries.delete(tokenId);
    }
  }

  /** How many token IDs are on this instance's list. */
  get size(): number {
    return this.#entries.size;
  }
}
