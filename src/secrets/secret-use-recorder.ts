/**
 * @module secret-use-recorder
 * Records the last use of each credential (secret, public key or federated credential) without a store write on every
 * request: at most one write per credential per minute per process, off the request path. A failed
 * write only loses a timestamp.
 */
import { LRUCache } from 'lru-cache';
import type { AccountStore } from '../store/account-store.js';
import { CREDENTIAL_KINDS, type CredentialKindName } from '../store/credential-kinds.js';
import { callStore } from '../runtime/call-store.js';
import type { CallObserver } from '../runtime/call-store.js';

/** How often, at most, one secret's `lastUsedAt` is written. */
export const SECRET_USE_WRITE_INTERVAL_MS = 60_000;

export class SecretUseRecorder {
  readonly #written = new LRUCache<string, number>({ max: 50_000 });

  constructor(
    private readonly store: AccountStore,
    private readonly timeout: number,
    private readonly observer?: CallObserver,
  ) {}

  /** Records a use of the secret, key or federated credential `credentialId` (`kind` says which). */
  record(clientId: string, kind: CredentialKindName, credentialId: string, at: Date): void {
    const last = this.#written.get(credentialId);
    if (last !== undefined && at.getTime() - last < SECRET_USE_WRITE_INTERVAL_MS) return;
    this.#written.set(credentialId, at.getTime());
    const { store } = this;
    const method = CREDENTIAL_KINDS[kind].recordUse;
    const recordUse = store[method]?.bind(store);
    // A store that predates the kind cannot have authenticated with it; nothing to write.
    if (!recordUse) return;
    const write = callStore(() => recordUse(clientId, credentialId, at), this.timeout, method, this.observer);
    write.catch(() => {
      this.#written.delete(credentialId);
    });
  }
}
