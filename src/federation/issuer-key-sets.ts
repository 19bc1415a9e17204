/**
 * @module issuer-key-sets
 * Caches and refreshes outside issuers' public keys, and hands them to the one verifying a token
 * (the federated method, which decides which keys are tried on it, and tells whether the issuer may
 * have rotated them).
 *
 * Only the issuers of `federation.allowedIssuers` have keys, when it is set. An issuer's keys come
 * from an inline JWK Set configured for it (never fetched), else from a JWK Set URL or OpenID
 * Connect discovery (key-set.ts, both documents within one `fetchTimeout`). Fetched keys are
 * cached per key source for the response's max-age within the configured bounds, and shared by
 * concurrent requests (one fetch). Stale keys keep verifying while a refresh runs in the background,
 * so an issuer that is down is no outage as long as its cached keys verify the token; they are never
 * used more than 24 hours after their last successful fetch. A token whose key is unknown (a `kid` the
 * cached set lacks, or no `kid` and no cached key made its signature) causes one refetch per refresh
 * interval per source at most, and so does a failed fetch: a flood of made-up key IDs or a dead
 * issuer cannot turn into a flood of requests. A set of more than `MAX_KEYS_PER_SET` keys is refused
 * as unusable.
 *
 * Fetching is written here (key-set.ts, fetch-json-document.ts) rather than left to jose's
 * `createRemoteJWKSet`: jose 5's remote key set has no size limit, follows redirects to any host,
 * ignores the response's max-age and does not do discovery. Which keys suit an algorithm is
 * key-set.ts's; which are tried on a token is the caller's (jose 5's local key set would try every
 * key matching a token without `kid`).
 */
import { LRUCache } from 'lru-cache';
import { FederatedKeysUnavailableError } from '../errors.js';
import type { ResolvedFederationConfig } from './federation-options.js';
import { KeySet, keySetSource, loadKeySet, type KeySetSource } from './key-set.js';
import { SourceShares } from './source-shares.js';

/** Fetched keys are never used longer than this after their last successful fetch. */
const MAX_KEY_AGE_MS = 24 * 60 * 60 * 1000;

/** Key sources kept at most (least recently used dropped first): memory stays bounded. */
const MAX_SOURCES = 1000;

/**
 * Told when an issuer's keys stop being fetchable and when they are again: once per change, not per
 * request, so it can feed an event and a metric.
 *
 * @example
 * ```ts
 * const observer: IssuerKeySetsObserver = {
 *   unavailable: (issuer, error) => console.warn(`keys of ${issuer} unavailable: ${error.message}`),
 *   recovered: (issuer, downtimeMs) => console.info(`keys of ${issuer} back after ${downtimeMs} ms`),
 * }
 * ```
 */
export interface IssuerKeySetsObserver {
  /** A key source started failing (the first failed fetch after a success, or the first fetch). */
  unavailable(issuer: string, error: Error): void;
  /** A failing key source was fetched again; `downtimeMs` since its first failed attempt. */
  recovered(issuer: string, downtimeMs: number): void;
  /** Any fetch of a key source failed (every one, for the metric). */
  fetchFailed?(issuer: string): void;
}

/**
 * What {@link IssuerKeySets} is built from.
 *
 * @example
 * ```ts
 * import { resolveFederation } from './federation-options.js'
 *
 * const options: IssuerKeySetsOptions = { settings: resolveFederation({}), now: () => new Date() }
 * ```
 */
export interface IssuerKeySetsOptions {
  readonly settings: ResolvedFederationConfig;
  /** The clock every cache decision reads. */
  readonly now: () => Date;
  readonly observer?: IssuerKeySetsObserver;
}

/**
 * Whose keys verify a token: the issuer, and the JWK Set URL its credential names, if any.
 *
 * @example
 * ```ts
 * const source: FederatedKeySource = { issuer: 'https://token.actions.githubusercontent.com', jwksUri: null }
 * ```
 */
export interface FederatedKeySource {
  readonly issuer: string;
  readonly jwksUri?: string | null;
  /**
   * The client account of the credential that names this source, if any: such an owner keeps at most
   * its share of sources in the cache (see source-shares.ts). Sources of credentials without a client
   * account (made by an operator) are bounded by the cache alone.
   */
  readonly owner?: string | null;
}

/**
 * What verifying a token with one key set gave: the caller's result, or `undefined` with whether the
 * issuer may have rotated its keys since the set was fetched (no key of the set has the token's `kid`,
 * or, for a token without `kid`, none of the keys tried made its signature): then they are fetched
 * again, once per refresh interval at most.
 *
 * @example
 * ```ts
 * const notFound: KeySetVerification<string> = { result: undefined, mayBeRotated: true }
 * ```
 */
export interface KeySetVerification<R> {
  readonly result: R | undefined;
  readonly mayBeRotated: boolean;
}

interface CachedKeys {
  readonly keySet: KeySet;
  /** Injected-clock milliseconds of the successful fetch. */
  readonly fetchedAt: number;
  /** Until when (injected-clock milliseconds) they are used without a refresh. */
  readonly freshUntil: number;
}

/** One key source's cache and fetch state. */
interface SourceState {
  keys?: CachedKeys;
  /** The fetch under way, shared by everyone who needs it. */
  refreshing?: Promise<void>;
  lastAttemptAt?: number;
  /** Whether the last fetch failed, and why. */
  lastError?: Error;
  /** When the current run of failures began (for `recovered`). */
  failingSince?: number;
}

/**
 * The keys of the outside issuers federated credentials trust. Call {@link IssuerKeySets.verify} only
 * for an issuer a live credential names: it fetches that issuer's keys when it has none (never for an
 * issuer outside `federation.allowedIssuers`).
 *
 * @example
 * ```ts
 * import type { KeySet } from './key-set.js'
 *
 * declare function verifyWith(keySet: KeySet): Promise<KeySetVerification<string>> // tries a few of its keys on the token
 * const keySets = new IssuerKeySets({ settings: config.federation, now: () => new Date() })
 * const subject = await keySets.verify({ issuer: 'https://token.actions.githubusercontent.com' }, verifyWith)
 * if (subject === undefined) console.log('not a valid token from that issuer')
 * ```
 */
export class IssuerKeySets {
  readonly #settings: ResolvedFederationConfig;
  readonly #now: () => Date;
  readonly #observer: IssuerKeySetsObserver | undefined;
  /** The inline JWK Sets of the configured issuers, by issuer. */
  readonly #inline = new Map<string, KeySet>();
  readonly #sources = new LRUCache<string, SourceState>({ max: MAX_SOURCES, dispose: (_state, key) => this.#shares.forget(key) });
  /** Which client accounts hold which cached sources: one cannot push out another's. */
  readonly #shares = new SourceShares((key) => this.#sources.delete(key));

  constructor(options: IssuerKeySetsOptions) {
    this.#settings = options.settings;
    this.#now = options.now;
    this.#observer = options.observer;
    for (const [issuer, keys] of this.#settings.issuers) {
      if (keys.jwks !== undefined) this.#inline.set(issuer, new KeySet(keys.jwks));
    }
  }

  /** The clock every cache decision reads (and the time a token is verified at, unless told otherwise). */
  now(): Date {
    return this.#now();
  }

  /**
   * Verifies a token of `source.issuer` by `verifyWith`, given the issuer's keys: the inline JWK Set
   * configured for it, else the cached or freshly fetched one; and once more with keys fetched again
   * when `verifyWith` says the issuer may have rotated them (once per refresh interval at most).
   *
   * Resolves to `verifyWith`'s result, or `undefined` when the token is not valid: its issuer is not
   * among `federation.allowedIssuers` or its keys' URL may not be fetched (nothing is fetched), or no
   * key of the issuer's verified it. Rejects with a `FederatedKeysUnavailableError` (503 with
   * `Retry-After`) only when keys are needed and cannot be fetched.
   *
   * How many of a set's keys are tried on one token is `verifyWith`'s to bound: the federated method
   * verifies only through the bounded key-try loop (client-auth/key-tries.ts, by `verifyIssuerToken`
   * in client-auth/federated-method.ts), and a new caller must do the same.
   *
   * @example
   * ```ts
   * import { FederatedKeysUnavailableError } from '../errors.js'
   * import type { KeySet } from './key-set.js'
   *
   * declare function verifyWith(keySet: KeySet): Promise<KeySetVerification<string>>
   * const keySets = new IssuerKeySets({ settings: config.federation, now: () => new Date() })
   * try {
   *   console.log(await keySets.verify({ issuer: 'https://kubernetes.default.svc', jwksUri: null }, verifyWith))
   * } catch (err) {
   *   if (err instanceof FederatedKeysUnavailableError) console.log(`retry in ${err.retryAfterSeconds} s`)
   * }
   * ```
   */
  async verify<R>(source: FederatedKeySource, verifyWith: (keySet: KeySet) => Promise<KeySetVerification<R>>): Promise<R | undefined> {
    // federation.allowedIssuers: no key is ever fetched for another issuer, whatever a credential names.
    if (this.#settings.allowedIssuers !== undefined && !this.#settings.allowedIssuers.has(source.issuer)) return undefined;

    const inline = this.#inline.get(source.issuer);
    if (inline !== undefined) return (await verifyWith(inline)).result;

    const fetched = keySetSource(source.issuer, source.jwksUri, this.#settings);
    // A URL our policy refuses (plain http without allowHttpLoopback) is never fetched: no key, no token.
    if (fetched === undefined) return undefined;
    const key = `${fetched.discovery ? 'discovery' : 'jwks'} ${fetched.issuer} ${fetched.url}`;
    let state = this.#sources.get(key);
    if (state === undefined) {
      state = {};
      this.#sources.set(key, state);
    }
    this.#shares.hold(key, source.owner ?? '');

    const keys = await this.#usableKeys(fetched, state);
    const first = await verifyWith(keys.keySet);
    if (!first.mayBeRotated) return first.result;

    // An unknown key ID, or no kid and no cached key made the signature (the issuer rotated its
    // keys, or a made-up token): one refetch per interval.
    if (state.refreshing === undefined && !this.#mayAttempt(state)) {
      if (state.lastError !== undefined) throw this.#unavailable(fetched, state);
      return undefined;
    }
    await this.#refresh(fetched, state);
    if (state.lastError !== undefined || state.keys === undefined) throw this.#unavailable(fetched, state);
    return (await verifyWith(state.keys.keySet)).result;
  }

  /** Whether a fetch may start now: none yet, or the last one began a refresh interval ago. */
  #mayAttempt(state: SourceState, now = this.#now().getTime()): boolean {
    return state.lastAttemptAt === undefined || now - state.lastAttemptAt >= this.#settings.refreshInterval * 1000;
  }

  /**
   * Keys to verify with: the cached ones while they are under 24 hours old (refreshed in the
   * background once stale), else freshly fetched ones. Throws when there are none to be had.
   */
  async #usableKeys(source: KeySetSource, state: SourceState): Promise<CachedKeys> {
    const now = this.#now().getTime();
    const cached = state.keys;
    if (cached !== undefined && now - cached.fetchedAt < MAX_KEY_AGE_MS) {
      if (now >= cached.freshUntil && state.refreshing === undefined && (state.lastError === undefined || this.#mayAttempt(state, now))) {
        void this.#refresh(source, state);
      }
      return cached;
    }
    if (state.refreshing === undefined && state.lastError !== undefined && !this.#mayAttempt(state, now)) throw this.#unavailable(source, state);
    await this.#refresh(source, state);
    const keys = state.keys;
    if (state.lastError !== undefined || keys === undefined || this.#now().getTime() - keys.fetchedAt >= MAX_KEY_AGE_MS) throw this.#unavailable(source, state);
    return keys;
  }

  /** Fetches a source's keys, or joins the fetch under way. Never rejects: the outcome is in `state`. */
  #refresh(source: KeySetSource, state: SourceState): Promise<void> {
    if (state.refreshing !== undefined) return state.refreshing;
    const startedAt = this.#now().getTime();
    state.lastAttemptAt = startedAt;
    const refreshing = loadKeySet(source, this.#settings)
      .then(
        ({ keySet, maxAge }) => {
          const at = this.#now().getTime();
          const { minCacheSeconds, maxCacheSeconds } = this.#settings;
          const seconds = Math.min(Math.max(maxAge ?? minCacheSeconds, minCacheSeconds), maxCacheSeconds);
          state.keys = { keySet, fetchedAt: at, freshUntil: at + Math.min(seconds * 1000, MAX_KEY_AGE_MS) };
          state.lastError = undefined;
          if (state.failingSince !== undefined) {
            const downtimeMs = Math.max(at - state.failingSince, 0);
            state.failingSince = undefined;
            this.#tell((observer) => observer.recovered(source.issuer, downtimeMs));
          }
        },
        (error: unknown) => {
          const failure = error instanceof Error ? error : new Error(String(error));
          state.lastError = failure;
          this.#tell((observer) => observer.fetchFailed?.(source.issuer));
          if (state.failingSince === undefined) {
            state.failingSince = startedAt;
            this.#tell((observer) => observer.unavailable(source.issuer, failure));
          }
        },
      )
      .finally(() => {
        state.refreshing = undefined;
      });
    state.refreshing = refreshing;
    return refreshing;
  }

  /** Calls the observer; its own failure is not ours to surface. */
  #tell(call: (observer: IssuerKeySetsObserver) => void): void {
    if (this.#observer === undefined) return;
    try {
      call(this.#observer);
    } catch {
      // An observer that throws must not turn a fetch outcome into an unhandled rejection.
    }
  }

  /** The 503 of keys that are needed and cannot be had, with the seconds until the next fetch may start. */
  #unavailable(source: KeySetSource, state: SourceState): FederatedKeysUnavailableError {
    const now = this.#now().getTime();
    const next = (state.lastAttemptAt ?? now) + this.#settings.refreshInterval * 1000;
    const retryAfterSeconds = Math.max(Math.ceil((next - now) / 1000), 1);
    const cause = state.lastError ?? new Error(`${source.url} has no usable keys`);
    return new FederatedKeysUnavailableError(source.issuer, `The keys of ${source.issuer} cannot be fetched: ${cause.message}`, retryAfterSeconds, { cause });
  }
}

