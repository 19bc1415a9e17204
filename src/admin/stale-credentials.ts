/**
 * @module stale-credentials
 * The credentials that need an operator's attention: live (unrevoked) ones that expire soon or have
 * expired, and live ones nobody has used for a while. What the admin API's `listStaleCredentials`,
 * the router's `GET /stale-credentials` and the CLI's `credentials stale` show.
 */
import type { AccountRecord } from '../store/account-store.js';
import { CREDENTIAL_KINDS, credentialsOf, type CredentialKindName } from '../store/credential-kinds.js';
import { AdminError } from './admin-errors.js';
import { parseDuration } from './credential-expiry.js';

/**
 * What {@link AdminApi.listStaleCredentials} looks for; give one or both. Durations are seconds, or
 * text such as `'14d'`, `'12h'`, `'30m'`, `'4s'`.
 *
 * @example
 * ```ts
 * import type { StaleCredentialCriteria } from 'express-service-accounts'
 *
 * const weekly: StaleCredentialCriteria = { expiringWithin: '14d', unusedFor: '30d' }
 * for (const credential of await sa.admin.listStaleCredentials(weekly)) console.log(credential.clientId, credential.id, credential.reasons)
 * ```
 */
export interface StaleCredentialCriteria {
  /** Credentials that expire within this long from now, or have expired (and are not revoked). */
  expiringWithin?: number | string;
  /** Credentials last used (or, never used, created) at least this long ago. */
  unusedFor?: number | string;
  /** Only the credentials of this client account's accounts (your customer or tenant). */
  clientAccountId?: string;
}

/**
 * Why a credential is listed: it `expired` already (it is refused, yet not revoked), is `expiring`
 * within the period asked, or is `unused` for the period asked.
 *
 * @example
 * ```ts
 * import type { StaleReason } from 'express-service-accounts'
 *
 * const urgent: StaleReason[] = ['expired', 'expiring']
 * ```
 */
export type StaleReason = 'expired' | 'expiring' | 'unused';

/**
 * A live (unrevoked) credential that matched {@link StaleCredentialCriteria}.
 *
 * @example
 * ```ts
 * import type { StaleCredential } from 'express-service-accounts'
 *
 * const line = (credential: StaleCredential): string =>
 *   `${credential.name} (${credential.clientId}): ${credential.kind} ${credential.id} ${credential.reasons.join(', ')}`
 * ```
 */
export interface StaleCredential {
  readonly clientId: string;
  /** The account's name. */
  readonly name: string;
  readonly clientAccountId: string | null;
  readonly kind: CredentialKindName;
  readonly id: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
  readonly expiresAt: Date | null;
  readonly reasons: readonly StaleReason[];
}

function durationOf(field: string, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  const seconds = parseDuration(value);
  if (seconds === undefined) throw new AdminError('invalid_input', `${field} must be a whole number of seconds, or of days, hours, minutes or seconds such as 14d, 12h, 30m or 4s`);
  return seconds;
}

/**
 * The live credentials of `accounts` that match `criteria` at `now`, accounts in their order and each
 * account's credentials by kind (secrets, keys, federated credentials), oldest first. Throws
 * `invalid_input` for a malformed duration or when neither criterion is given.
 *
 * @example
 * ```ts
 * const due = findStaleCredentials(await store.listAccounts(), { expiringWithin: '14d' }, new Date())
 * ```
 */
export function findStaleCredentials(accounts: readonly AccountRecord[], criteria: StaleCredentialCriteria, now: Date): StaleCredential[] {
  const { expiringWithin, unusedFor } = (typeof criteria === 'object' && criteria !== null ? criteria : {}) as StaleCredentialCriteria;
  const within = durationOf('expiringWithin', expiringWithin);
  const unused = durationOf('unusedFor', unusedFor);
  if (within === undefined && unused === undefined) throw new AdminError('invalid_input', 'give expiringWithin, unusedFor or both');
  const at = now.getTime();
  const found: StaleCredential[] = [];
  for (const account of accounts) {
    for (const { kind } of Object.values(CREDENTIAL_KINDS)) {
      for (const credential of credentialsOf(account, kind)) {
        if (credential.revokedAt !== null) continue;
        const expiresAt = credential.expiresAt ?? null;
        const reasons: StaleReason[] = [];
        if (within !== undefined && expiresAt !== null) {
          if (expiresAt.getTime() <= at) reasons.push('expired');
          else if (expiresAt.getTime() <= at + within * 1000) reasons.push('expiring');
        }
        if (unused !== undefined && (credential.lastUsedAt ?? credential.createdAt).getTime() <= at - unused * 1000) reasons.push('unused');
        if (reasons.length === 0) continue;
        found.push({
          clientId: account.clientId,
          name: account.name,
          clientAccountId: account.clientAccountId,
          kind,
          id: credential.id,
          createdAt: credential.createdAt,
          lastUsedAt: credential.lastUsedAt,
          expiresAt,
          reasons,
        });
      }
    }
  }
  return found;
}
