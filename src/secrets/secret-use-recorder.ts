/**
 * @module secret-use-recorder
 * Records the last use of each credential (secret, public key or federated credential) without a store write on every
 * request: at most one write per credential per minute per process, off the request path. A failed
 * write only loses a timestamp.
 */
import { LRUCache } from 'lru-cache';
import type { AccountStore } from '../store/account-store.js';
import { callStore } from '../runtime/call-store.js';
import type { CallObserver } from '../observability/dependency-monitor.js';

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
  record(clientId: string, kind: 'secret' | 'key' | 'federated', credentialId: string, at: Date): void {
    const last = this.#written.get(credentialId);
    if (last !== undefined && at.getTime() - last < SECRET_USE_WRITE_INTERVAL_MS) return;
    this.#written.set(credentialId, at.getTime());
    const { store } = this;
    const write =
      kind === 'secret'
        ? callStore(() => store.recordSecretUse(clientId, credentialId, at), this.timeout, 'recordSecretUse', this.observer)
        : kind === 'key'
          ? store.recordKeyUse
            ? callStore(() => store.recordKeyUse!(clientId, credentialId, at), this.timeout, 'recordKeyUse', this.observer)
            : Promise.resolve()
          : store.recordFederatedCredentialUse
            ? callStore(() => store.recordFederatedCredentialUse!(clientId, credentialId, at), this.timeout, 'recordFederatedCredentialUse', this.observer)
            : Promise.resolve();
    write.catch(() => {
      this.#written.delete(credentialId);
    });
  }
}
