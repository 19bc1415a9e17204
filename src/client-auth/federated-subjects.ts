/**
 * @module federated-subjects
 * Which accounts trust an outside token's issuer and subject: the store's lookup of the candidate
 * accounts of the federated method (federated-method.ts), remembered per pair, shared by concurrent
 * requests, and forgotten when any account changes. Framework-free.
 */
import { LRUCache } from 'lru-cache';
import type { AccountCache } from '../runtime/account-cache.js';
import { callStore } from '../runtime/call-store.js';
import type { CallObserver } from '../runtime/call-store.js';
import type { FederatedCredentialStore } from '../store/credential-kinds.js';

/** At most this many client IDs are asked for: two already make the pair ambiguous. */
const LOOKUP_LIMIT = 2;

type Remembered = { readonly clientIds: readonly string[]; readonly until: number };

/**
 * Which accounts trust an outside token's issuer and subject: the store's `findFederatedClients`,
 * remembered for as long as account status is cached, and forgotten whenever any account changes
 * (a credential added to another account makes the pair ambiguous at once). Only answers that name
 * exactly one account are remembered: a pair nobody trusts is asked of the store again, so a new
 * credential works on its first use, and so is an ambiguous one, so it is served as soon as all but
 * one of its credentials have expired. One per token endpoint.
 *
 * @example
 * ```ts
 * declare const parts: ConstructorParameters<typeof FederatedSubjects>[0] // the store, the account cache, the store timeout
 * const subjects = new FederatedSubjects(parts)
 * const [clientId, ambiguous] = await subjects.clientIds('https://token.actions.githubusercontent.com', 'repo:acme/api:ref:refs/heads/main')
 * ```
 */
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

  /**
   * The client IDs (none, one, or two when ambiguous) of the accounts holding a live credential for
   * exactly this pair; of several, only those whose credential is not past its expiry at `at` (asked
   * of the store again only then).
   */
  clientIds(issuer: string, subject: string, at?: Date): Promise<readonly string[]> {
    const key = `${issuer}\n${subject}`;
    const now = (this.parts.clock ?? performance).now();
    const remembered = this.#remembered.get(key);
    if (remembered && remembered.until > now) return Promise.resolve(remembered.clientIds);
    const inflight = this.#inflight.get(key);
    if (inflight) return inflight;
    const { store, storeTimeout, storeCalls, accounts } = this.parts;
    const ttl = accounts.ttl;
    const find = (live?: Date): Promise<string[]> =>
      callStore(() => store.findFederatedClients(issuer, subject, LOOKUP_LIMIT, live), storeTimeout, 'findFederatedClients', storeCalls);
    // Expired credentials count only when all are: then the one account is named, and its check says
    // `expired_credential`. When several accounts trust the pair, those past their expiry are left out.
    const lookup = find()
      .then((clientIds) => (clientIds.length > 1 && at !== undefined ? find(at).then((unexpired) => (unexpired.length > 0 ? unexpired : clientIds)) : clientIds))
      .then((clientIds) => {
        if (this.#inflight.get(key) === lookup && clientIds.length === 1) this.#remembered.set(key, { clientIds, until: now + ttl });
        return clientIds;
      });
    this.#inflight.set(key, lookup);
    const settle = (): void => {
      if (this.#inflight.get(key) === lookup) this.#inflight.delete(key);
    };
    lookup.then(settle, settle);
    return lookup;
  }

  /**
   * Forgets the remembered answer for one issuer and subject, or every one when none is named (an
   * account changed), and detaches the lookups in flight for them.
   */
  forget(issuer?: string, subject?: string): void {
    if (issuer !== undefined && subject !== undefined) {
      const key = `${issuer}\n${subject}`;
      this.#remembered.delete(key);
      this.#inflight.delete(key);
      return;
    }
    this.#remembered.clear();
    this.#inflight.clear();
  }
}
