/**
 * @module credential-use
 * What follows when a credential (secret, public key or federated credential) was used, for every
 * kind alike:
 * - its last use is recorded ({@link CredentialUseRecorder}) without a store write on every request:
 *   at most one write per credential per minute per process, off the request path. A failed write
 *   only loses a timestamp.
 * - the `credential.expiring` event ({@link ExpiringCredentialNotices}): a credential was used to
 *   obtain a token while it expires within {@link CREDENTIAL_EXPIRING_LEAD_TIME} seconds, so whoever
 *   runs the client still has time to rotate. Raised on the token path, where the credential is in
 *   hand, at most once per credential on each instance (a fleet of N instances may raise it up to N
 *   times); nothing is written and no timer runs.
 */
import { LRUCache } from 'lru-cache';
import type { AccountRecord, AccountStore } from '../store/account-store.js';
import { CREDENTIAL_KINDS, findOfKind, type CredentialKindName } from '../store/credential-kinds.js';
import { callStore } from '../runtime/call-store.js';
import type { CallObserver } from '../runtime/call-store.js';
import type { OperationalEventInput } from '../observability/operational-events.js';

/** How often, at most, one credential's `lastUsedAt` is written. */
export const CREDENTIAL_USE_WRITE_INTERVAL_MS = 60_000;

/**
 * Records the last use of each credential, at most once a minute per credential (see the module
 * description).
 *
 * @example
 * ```ts
 * const recorder = new CredentialUseRecorder(store, 2000)
 * recorder.record(clientId, 'secret', secretId, new Date())
 * ```
 */
export class CredentialUseRecorder {
  readonly #written = new LRUCache<string, number>({ max: 50_000 });

  constructor(
    private readonly store: AccountStore,
    private readonly timeout: number,
    private readonly observer?: CallObserver,
  ) {}

  /** Records a use of the secret, key or federated credential `credentialId` (`kind` says which). */
  record(clientId: string, kind: CredentialKindName, credentialId: string, at: Date): void {
    const last = this.#written.get(credentialId);
    if (last !== undefined && at.getTime() - last < CREDENTIAL_USE_WRITE_INTERVAL_MS) return;
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

/**
 * How long before its expiry a credential used for a token raises `credential.expiring`: 14 days, in
 * seconds.
 *
 * @example
 * ```ts
 * import { CREDENTIAL_EXPIRING_LEAD_TIME } from 'express-service-accounts'
 *
 * const days = CREDENTIAL_EXPIRING_LEAD_TIME / 86_400 // 14
 * ```
 */
export const CREDENTIAL_EXPIRING_LEAD_TIME = 14 * 86_400;

/** The most credentials remembered as announced; past it the memory starts afresh (an event may then repeat). */
const MAX_REMEMBERED = 10_000;

/**
 * Announces each credential that obtains a token within the lead time of its expiry, once.
 *
 * @example
 * ```ts
 * const notices = new ExpiringCredentialNotices(runtime.event)
 * notices.used(account, { kind: 'secret', id: secretId }, new Date())
 * ```
 */
export class ExpiringCredentialNotices {
  readonly #announced = new Set<string>();
  readonly #event: (event: OperationalEventInput) => void;

  constructor(event: (event: OperationalEventInput) => void) {
    this.#event = event;
  }

  /** Called with each credential that obtained a token: announces it when it expires within the lead time, first time only. */
  used(account: AccountRecord, credential: { readonly kind: CredentialKindName; readonly id: string }, now: Date): void {
    const expiresAt = findOfKind(account, credential.kind, credential.id)?.expiresAt;
    if (expiresAt == null || expiresAt.getTime() - now.getTime() > CREDENTIAL_EXPIRING_LEAD_TIME * 1000) return;
    if (this.#announced.has(credential.id)) return;
    if (this.#announced.size >= MAX_REMEMBERED) this.#announced.clear();
    this.#announced.add(credential.id);
    this.#event({
      type: 'credential.expiring',
      clientId: account.clientId,
      name: account.name,
      kind: credential.kind,
      credentialId: credential.id,
      expiresAt,
    });
  }
}
