/**
 * @module expiring-credentials
 * The `credential.expiring` event: a credential was used to obtain a token while it expires within
 * {@link CREDENTIAL_EXPIRING_LEAD_TIME} seconds, so whoever runs the client still has time to rotate.
 * Raised on the token path, where the credential is in hand, at most once per credential on each
 * instance (a fleet of N instances may raise it up to N times); nothing is written and no timer runs.
 */
import type { AccountRecord } from '../store/account-store.js';
import { findOfKind, type CredentialKindName } from '../store/credential-kinds.js';
import type { OperationalEventInput } from './operational-events.js';

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
