/**
 * @module dpop-replay
 * Single use of DPoP proofs (RFC 9449 §11.1), keyed by the proof key's thumbprint and the proof's
 * `jti` (never by signature: ECDSA signatures are malleable), written after every other check passed.
 * By default per instance, in a bounded map where each client gets a share, and no live entry is ever
 * evicted (full: 503 and an operational event); or, opt-in, one `SET NX PX` on the limiter's Redis per
 * proof, single use across instances (Redis down: 503).
 *
 * A share is a client's, not a key's: a client makes up DPoP keys at will and gets a token bound to
 * each, so shares per key would let one client take the whole cache with ten keys. The client is the
 * service account's client account (a tenant's administrator can create accounts at will), or, for an
 * account without one, the service account itself.
 */
import { StoreUnavailableError, TemporarilyUnavailableError } from '../errors.js';
import type { OperationalEventInput } from '../observability/operational-events.js';

/**
 * Records a proof's first use: `true` the first time, `false` for a replay; throws (503) when it cannot
 * tell. `owner` is whose share the proof counts in ({@link replayOwnerOf}).
 */
export interface DpopReplayGuard {
  firstUse(owner: string, jkt: string, jti: string, nowMs: number): boolean | Promise<boolean>;
}

/**
 * Whose share of the replay cache an account's proofs count in: its client account, or the account
 * itself when it has none.
 *
 * @example
 * ```ts
 * replayOwnerOf({ clientId: 'esa_4fT0', clientAccountId: 'acme' }) // 'a:acme'
 * replayOwnerOf({ clientId: 'esa_4fT0', clientAccountId: null })   // 'c:esa_4fT0'
 * ```
 */
export function replayOwnerOf(account: { readonly clientId: string; readonly clientAccountId: string | null }): string {
  return account.clientAccountId === null ? `c:${account.clientId}` : `a:${account.clientAccountId}`;
}

/**
 * The per-instance cache. Every entry lives `windowMs` (as long as its proof could be accepted), so
 * insertion order is expiry order and expired entries are dropped from the head.
 */
export class MemoryReplayCache implements DpopReplayGuard {
  readonly #entries = new Map<string, { readonly owner: string; readonly expiresAt: number }>();
  readonly #perOwner = new Map<string, number>();
  readonly #share: number;
  /** When the oldest entry expires (the map's head): nothing to sweep before then. */
  #headExpiry = Number.POSITIVE_INFINITY;
  #reported = false;

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly event: (event: OperationalEventInput) => void,
  ) {
    this.#share = Math.max(1, Math.floor(max / 10));
  }

  /** Live entries. */
  get size(): number {
    return this.#entries.size;
  }

  #sweep(nowMs: number): void {
    if (nowMs < this.#headExpiry) return;
    this.#headExpiry = Number.POSITIVE_INFINITY;
    for (const [id, entry] of this.#entries) {
      if (entry.expiresAt > nowMs) {
        this.#headExpiry = entry.expiresAt;
        return;
      }
      this.#entries.delete(id);
      const left = (this.#perOwner.get(entry.owner) ?? 1) - 1;
      if (left > 0) this.#perOwner.set(entry.owner, left);
      else this.#perOwner.delete(entry.owner);
    }
  }

  #full(scope: 'cache' | 'client', nowMs: number): never {
    if (!this.#reported) {
      this.#reported = true;
      this.event({ type: 'dpop_replay_cache.full', scope, entries: this.#entries.size });
    }
    const oldest = this.#entries.values().next().value;
    const retryAfterSeconds = oldest ? Math.max(1, (oldest.expiresAt - nowMs) / 1000) : 1;
    throw new TemporarilyUnavailableError({ retryAfterSeconds, cause: new Error(`DPoP replay cache full (${scope})`) });
  }

  firstUse(owner: string, jkt: string, jti: string, nowMs: number): boolean {
    this.#sweep(nowMs);
    const id = `${jkt} ${jti}`;
    if (this.#entries.has(id)) return false;
    if (this.#entries.size >= this.max) this.#full('cache', nowMs);
    const count = this.#perOwner.get(owner) ?? 0;
    if (count >= this.#share) this.#full('client', nowMs);
    this.#record(id, owner, count, nowMs + this.windowMs);
    return true;
  }

  #record(id: string, owner: string, count: number, expiresAt: number): void {
    if (this.#entries.size === 0) this.#headExpiry = expiresAt;
    this.#entries.set(id, { owner, expiresAt });
    this.#perOwner.set(owner, count + 1);
    this.#reported = false;
  }
}

/** The ioredis command strict mode sends. */
interface RedisSet {
  set(key: string, value: string, px: 'PX', ms: number, nx: 'NX'): Promise<unknown>;
}

/** Strict mode: one `SET key 1 PX window NX` per proof on the limiter's ioredis client (its `keyPrefix` applies). */
export class RedisReplayGuard implements DpopReplayGuard {
  constructor(
    private readonly redis: unknown,
    private readonly windowMs: number,
    private readonly timeoutMs: number,
  ) {}

  firstUse(_owner: string, jkt: string, jti: string, _nowMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreUnavailableError(`DPoP replay check timed out after ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    const set = (this.redis as RedisSet).set(`dpop-jti:${jkt}:${jti}`, '1', 'PX', this.windowMs, 'NX').then(
      (answer) => answer === 'OK',
      (err: unknown) => {
        throw new StoreUnavailableError('DPoP replay check failed: Redis did not answer', { cause: err });
      },
    );
    return Promise.race([set, timeout]).finally(() => clearTimeout(timer));
  }
}
