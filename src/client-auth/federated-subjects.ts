/**
 * @module federated-subjects
 * Which accounts trust an outside token's issuer and subject: the store's `findFederatedClients`,
 * remembered for as long as account status is cached, and forgotten whenever any account changes
 * (a credential added to another account makes the pair ambiguous at once). Only answers that name an
 * account are remembered: a pair nobody trusts is asked of the store again, so a new credential works
 * on its first use.
 */
import { LRUCache } from 'lru-cache';
import type { CallObserver } from '../runtime/call-store.js';
import type { AccountCache } from '../runtime/account-cache.js';
import type { FederatedCredentialStore } from '../store/credential-kinds.js';
import { callStore } from '../runtime/call-store.js';

/** At most this many client IDs are asked for: two already make the pair ambiguous. */
const LOOKUP_LIMIT = 2;

interface Remembered {
  readonly clientIds: readonly string[];
  readonly until: number;
}

/** See the module description. One per token endpoint. */
export class FederatedSubjects {
  readonly #remembered = new LRUCache<string, Remembered>({ max: 10_000 });
  readonly #inflight = new Map<string, Promise<readonly string[]>>();

  constructor(
    private readonly parts: {
      readonly store: FederatedCredentialStore;
      readonly accounts: AccountCache;
      readonly storeTimeout: number;
      readonly storeCalls?: CallObserver;
      /** A monotonic millisecond clock. */
      readonly clock?: { now(): number };
    },
  ) {
    parts.accounts.onInvalidate(() => this.forget());
  }

  /** The client IDs (none, one, or two when ambiguous) of the accounts holding a live credential for exactly this pair. */
  clientIds(issuer: string, subject: string): Promise<readonly string[]> {
    const key = `${issuer}\n${subject}`;
    const now = (this.parts.clock ?? performance).now();
    const remembered = this.#remembered.get(key);
    if (remembered && remembered.until > now) return Promise.resolve(remembered.clientIds);
    const inflight = this.#inflight.get(key);
    if (inflight) return inflight;
    const { store, storeTimeout, storeCalls, accounts } = this.parts;
    const ttl = accounts.ttl;
    const lookup = callStore(() => store.findFederatedClients(issuer, subject, LOOKUP_LIMIT), storeTimeout, 'findFederatedClients', storeCalls).then(
      (clientIds) => {
        if (this.#inflight.get(key) === lookup && clientIds.length > 0) this.#remembered.set(key, { clientIds, until: now + ttl });
        return clientIds;
      },
    );
    this.#inflight.set(key, lookup);
    const settle = (): void => {
      if (this.#inflight.get(key) === lookup) this.#inflight.delete(key);
    };
    lookup.then(settle, settle);
    return lookup;
  }

  /** Forgets every remembered answer (an account changed) and detaches the lookups in flight. */
  forget(): void {
    this.#remembered.clear();
    this.#inflight.clear();
  }
}
