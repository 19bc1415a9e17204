/**
 * @module source-shares
 * Which client accounts hold which cached key sources of outside issuers. The cache of issuers' keys
 * is shared by every client account; whoever registers federated credentials (an administrator of one
 * client account, through the admin router) chooses their JWK Set URLs, so without shares one client
 * account could use more sources than the cache holds and push every other client account's issuers
 * out: their next token request would wait for a fetch again. With shares, a client account keeps at
 * most {@link MAX_SOURCES_PER_OWNER} sources; past that its own least recently used one leaves the
 * cache, unless another client account (or a credential without one) holds it too.
 */
import { LRUCache } from 'lru-cache';

/** Key sources one client account keeps in the cache at most. */
export const MAX_SOURCES_PER_OWNER = 100;
/** Client accounts whose recent sources are tracked at most. */
export const MAX_OWNERS = 10_000;

/**
 * The holders of each cached source, and each client account's recently used sources.
 *
 * @example
 * ```ts
 * const cache = new Map<string, unknown>()
 * const shares = new SourceShares((key) => cache.delete(key))
 * shares.hold('jwks https://idp.example.com https://idp.example.com/keys', 'acme') // acme's, one of its 100
 * shares.hold('discovery https://token.actions.githubusercontent.com', '') // no client account: no share
 * ```
 */
export class SourceShares {
  /** The holders of each source; `''` for credentials without a client account. */
  readonly #holders = new Map<string, Set<string>>();
  /** Each client account's recently used sources, least recently used dropped first. */
  readonly #owned = new LRUCache<string, LRUCache<string, true>>({
    max: MAX_OWNERS,
    dispose: (sources, owner) => {
      for (const key of sources.keys()) this.#release(key, owner);
    },
  });

  /** @param drop removes a source that no holder keeps any longer from the cache. */
  constructor(private readonly drop: (key: string) => void) {}

  /**
   * Counts `key` among `owner`'s recent sources; the owner's least recently used one beyond its share
   * is released. Owner `''` (credentials without a client account) has no share: it releases nothing,
   * and what it holds leaves only as the least recently used of the whole cache.
   */
  hold(key: string, owner: string): void {
    // Counted as a holder first: making room below (another owner's sources, this owner's oldest)
    // must never drop the source being held now.
    let holders = this.#holders.get(key);
    if (holders === undefined) this.#holders.set(key, (holders = new Set()));
    holders.add(owner);
    if (owner !== '') {
      let sources = this.#owned.get(owner);
      if (sources === undefined) {
        sources = new LRUCache<string, true>({
          max: MAX_SOURCES_PER_OWNER,
          dispose: (_held, dropped, reason) => {
            if (reason === 'evict') this.#release(dropped, owner);
          },
        });
        this.#owned.set(owner, sources);
      }
      sources.set(key, true);
    }
  }

  /** The cache dropped `key` by itself (its least recently used): nobody holds it any longer. */
  forget(key: string): void {
    this.#holders.delete(key);
  }

  /** `owner` no longer holds `key`: the source leaves the cache when no holder is left. */
  #release(key: string, owner: string): void {
    const holders = this.#holders.get(key);
    if (holders === undefined || !holders.delete(owner) || holders.size > 0) return;
    this.#holders.delete(key);
    this.drop(key);
  }
}
