/**
 * @module issuer-key-sets
 * Caches and refreshes outside issuers' public keys, and verifies their tokens with them.
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
 * as unusable, and a token costs a few signature checks at most (candidate-keys.ts).
 *
 * Fetching is written here (key-set.ts, fetch-json-document.ts) rather than left to jose's
 * `createRemoteJWKSet`: jose 5's remote key set has no size limit, follows redirects to any host,
 * ignores the response's max-age and does not do discovery. Key selection is ours (key-set.ts,
 * bounded by candidate-keys.ts: jose 5's local key set tries every key matching a token without
 * `kid`); signature and claim checks are jose's `jwtVerify`, with only asymmetric algorithms allowed
 * (key-set.ts).
 */
import type { JWTVerifyOptions, JWTVerifyResult } from 'jose';
import { LRUCache } from 'lru-cache';
import { FederatedKeysUnavailableError } from '../errors.js';
import type { ResolvedFederationConfig } from './federation-options.js';
import { KeySet, keySetSource, loadKeySet, verifiableAlgorithms, verifyWithKeySet, type KeySetSource } from './key-set.js';

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
 * The keys of the outside issuers federated credentials trust, and the one place their tokens are
 * verified. Call {@link IssuerKeySets.verify} only for an issuer a live credential names: it fetches
 * that issuer's keys when it has none (never for an issuer outside `federation.allowedIssuers`).
 *
 * @example
 * ```ts
 * const keySets = new IssuerKeySets({ settings: config.federation, now: () => new Date() })
 * const verified = await keySets.verify(token, { issuer: 'https://token.actions.githubusercontent.com' }, {
 *   audience: 'https://api.example.com',
 *   subject: 'repo:acme/billing:ref:refs/heads/main',
 * })
 * if (verified === undefined) console.log('not a valid token from that issuer')
 * ```
 */
export class IssuerKeySets {
  readonly #settings: ResolvedFederationConfig;
  readonly #now: () => Date;
  readonly #observer: IssuerKeySetsObserver | undefined;
  /** The inline JWK Sets of the configured issuers, by issuer. */
  readonly #inline = new Map<string, KeySet>();
  readonly #sources = new LRUCache<string, SourceState>({ max: MAX_SOURCES });

  constructor(options: IssuerKeySetsOptions) {
    this.#settings = options.settings;
    this.#now = options.now;
    this.#observer = options.observer;
    for (const [issuer, keys] of this.#settings.issuers) {
      if (keys.jwks !== undefined) this.#inline.set(issuer, new KeySet(keys.jwks));
    }
  }

  /**
   * Verifies `token` as one of `source.issuer`'s: its signature with the issuer's keys (asymmetric
   * algorithms only, whatever `options.algorithms` says), its `iss` equal to `source.issuer`, and the
   * claims `options` asks for (at `options.currentDate`, by default the injected clock's now).
   *
   * Resolves to `undefined` when the token is not valid: its issuer is not among
   * `federation.allowedIssuers` (nothing is fetched), a bad signature or claim, or no key of the
   * issuer's matches it (after one refetch, when the refresh interval allows it). Rejects with a
   * `FederatedKeysUnavailableError` (503 with `Retry-After`) only when keys are needed and cannot be
   * fetched. `onRefused` gets jose's error when a key made the signature but a claim failed.
   *
   * @example
   * ```ts
   * import { FederatedKeysUnavailableError } from '../errors.js'
   *
   * const keySets = new IssuerKeySets({ settings: config.federation, now: () => new Date() })
   * try {
   *   const verified = await keySets.verify(token, { issuer: 'https://kubernetes.default.svc', jwksUri: null }, { audience: issuer })
   *   console.log(verified?.payload.sub)
   * } catch (err) {
   *   if (err instanceof FederatedKeysUnavailableError) console.log(`retry in ${err.retryAfterSeconds} s`)
   * }
   * ```
   */
  async verify(token: string, source: FederatedKeySource, options: JWTVerifyOptions, onRefused?: (error: unknown) => void): Promise<JWTVerifyResult | undefined> {
    // federation.allowedIssuers: no key is ever fetched for another issuer, whatever a credential names.
    if (this.#settings.allowedIssuers !== undefined && !this.#settings.allowedIssuers.has(source.issuer)) return undefined;
    // A token that could never verify causes no fetch.
    const algorithms = verifiableAlgorithms(token, options.algorithms);
    if (algorithms === undefined) return undefined;
    const verifyOptions: JWTVerifyOptions = { ...options, algorithms, issuer: source.issuer, currentDate: options.currentDate ?? this.#now() };

    const inline = this.#inline.get(source.issuer);
    if (inline !== undefined) return (await verifyWithKeySet(token, inline, verifyOptions, onRefused)).result;

    const fetched = keySetSource(source.issuer, source.jwksUri, this.#settings);
    // A URL our policy refuses (plain http without allowHttpLoopback) is never fetched: no key, no token.
    if (fetched === undefined) return undefined;
    const key = `${fetched.discovery ? 'discovery' : 'jwks'} ${fetched.issuer} ${fetched.url}`;
    let state = this.#sources.get(key);
    if (state === undefined) {
      state = {};
      this.#sources.set(key, state);
    }

    const keys = await this.#usableKeys(fetched, state);
    const first = await verifyWithKeySet(token, keys.keySet, verifyOptions, onRefused);
    if (!first.mayBeRotated) return first.result;

    // An unknown key ID, or no kid and no cached key made the signature (the issuer rotated its
    // keys, or a made-up token): one refetch per interval.
    if (state.refreshing === undefined && !this.#mayAttempt(state)) {
      if (state.lastError !== undefined) throw this.#unavailable(fetched, state);
      return undefined;
    }
    await this.#refresh(fetched, state);
    if (state.lastError !== undefined || state.keys === undefined) throw this.#unavailable(fetched, state);
    return (await verifyWithKeySet(token, state.keys.keySet, verifyOptions, onRefused)).result;
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

