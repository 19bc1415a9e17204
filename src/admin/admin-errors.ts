/**
 * @module admin-errors
 * Errors of the admin API (and so of the CLI). They carry a stable `code` to switch on. Messages
 * echo an ID a caller typed only when it has the form of an ID, never anything else (a secret pasted
 * by mistake, whole or in part): they reach logs and the CLI's stderr.
 */
import { isClientIdShape, isFederatedCredentialId, isKeyId, isSecretId } from '../credentials/generate-credentials.js';
import { quotePresented } from '../credentials/redact-secrets.js';

/**
 * Stable codes of {@link AdminError}.
 *
 * @example
 * ```ts
 * import type { AdminErrorCode } from 'express-service-accounts'
 *
 * // An admin endpoint of your own, mapping refusals to HTTP statuses.
 * function statusOf(code: AdminErrorCode): number {
 *   switch (code) {
 *     case 'invalid_input':
 *       return 400
 *     case 'account_not_found':
 *     case 'secret_not_found':
 *     case 'key_not_found':
 *     case 'federated_credential_not_found':
 *       return 404
 *     case 'secret_limit_reached':
 *     case 'credential_limit_reached':
 *     case 'key_already_registered':
 *     case 'federated_credential_already_registered':
 *       return 409
 *     case 'not_supported':
 *       return 501
 *   }
 * }
 * ```
 */
export type AdminErrorCode =
  | 'invalid_input'
  | 'account_not_found'
  | 'secret_not_found'
  | 'secret_limit_reached'
  | 'key_not_found'
  | 'key_already_registered'
  | 'federated_credential_not_found'
  | 'federated_credential_already_registered'
  | 'credential_limit_reached'
  /** The account store cannot hold what was asked (a host's own store may leave optional features out; the message names what it lacks). */
  | 'not_supported';

/**
 * A refused admin operation. Store failures are not AdminErrors: they reject with the store's error.
 *
 * @example
 * ```ts
 * import { AdminError } from 'express-service-accounts'
 *
 * try {
 *   await sa.admin.addSecret(clientId)
 * } catch (err) {
 *   if (!(err instanceof AdminError) || err.code !== 'secret_limit_reached') throw err
 *   console.error(err.message) // "... already has 5 live secrets and 0 live keys (the limit is 5 ...); revoke one first"
 * }
 * ```
 */
export class AdminError extends Error {
  constructor(
    readonly code: AdminErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AdminError';
  }
}

/**
 * The `account_not_found` error for a client ID.
 *
 * @example
 * ```ts
 * if (!account) throw accountNotFound(clientId)
 * ```
 */
export function accountNotFound(clientId: unknown): AdminError {
  const message = 'No service account has';
  if (typeof clientId === 'string' && isClientIdShape(clientId)) return new AdminError('account_not_found', `${message} client ID ${JSON.stringify(clientId)}`);
  const shape = 'client IDs look like esa_ and 24 letters or digits, as create printed them';
  if (clientId === '') return new AdminError('account_not_found', `${message} an empty client ID (${shape})`);
  if (typeof clientId === 'string' && PLACEHOLDER_LIKE.test(clientId)) {
    return new AdminError('account_not_found', `${message} client ID ${JSON.stringify(clientId)}: it is not a client ID (${shape})`);
  }
  const hidden = typeof clientId === 'string' ? ', not shown in case it is a secret' : '';
  return new AdminError('account_not_found', `${message} this client ID, which is not one: ${quotePresented(clientId, false)}${hidden} (${shape})`);
}

/**
 * A value that cannot hold a usable piece of a secret, so a message may show it: short, without
 * `esas_`, without a run of 12 or more letters and digits (a secret's random part is 50 of them).
 * Placeholders left in a command (`CLIENT_ID`, `esa_4fT0...`, `<client-id>`) are of this kind.
 */
const PLACEHOLDER_LIKE = /^(?!.*esas_)(?!.*[0-9a-z]{12})[\x20-\x7e]{1,32}$/i;

/**
 * The `secret_not_found` error for a secret ID of an account.
 *
 * @example
 * ```ts
 * const revoked = await store.revokeSecret(clientId, secretId, new Date())
 * if (!revoked) throw secretNotFound(clientId, secretId)
 * ```
 */
export function secretNotFound(clientId: string, secretId: unknown): AdminError {
  return credentialNotFound('secret_not_found', clientId, 'secret', secretId, isSecretId, 'secret IDs are 16 letters or digits, as list shows them');
}

/**
 * A `..._not_found` error for a credential ID of an account. A well-formed ID is quoted; so is a
 * placeholder left in a command (`SECRET_ID`, `esak_...`), which is then said not to be an ID, with the
 * shape of one; anything else is shown only by its fingerprint, in case it is a secret.
 */
function credentialNotFound(code: AdminErrorCode, clientId: string, what: string, id: unknown, isId: (value: string) => boolean, shape: string): AdminError {
  const message = `Service account ${clientId} has no ${what}`;
  if (typeof id === 'string' && isId(id)) return new AdminError(code, `${message} with ID ${JSON.stringify(id)}`);
  if (id === '') return new AdminError(code, `${message} with an empty ID (${shape})`);
  if (typeof id === 'string' && PLACEHOLDER_LIKE.test(id)) {
    return new AdminError(code, `${message} with ID ${JSON.stringify(id)}: it is not a ${what} ID (${shape})`);
  }
  const hidden = typeof id === 'string' ? ', not shown in case it is a secret' : '';
  return new AdminError(code, `${message} with this ID, which is not one: ${quotePresented(id, false)}${hidden} (${shape})`);
}

/** Live credentials of an account, by kind. */
export interface LiveCredentials {
  readonly secrets: number;
  readonly keys: number;
  readonly federated: number;
}

/**
 * The error for a credential refused by the cap on live credentials (secrets, keys and federated
 * credentials together): `secret_limit_reached` when adding a secret, `credential_limit_reached` when
 * adding a key or a federated credential. `live` is the account's count when known (another caller
 * may have taken the last place meanwhile).
 *
 * @example
 * ```ts
 * const live = { secrets: 3, keys: 1, federated: 1 }
 * const limit = 5
 * if (live.secrets + live.keys + live.federated >= limit) throw credentialLimitReached('secret_limit_reached', clientId, limit, live)
 * ```
 */
export function credentialLimitReached(
  code: 'secret_limit_reached' | 'credential_limit_reached',
  clientId: string,
  limit: number,
  live?: LiveCredentials,
): AdminError {
  const has = live ? liveText(live) : 'as many live credentials as allowed';
  return new AdminError(
    code,
    `Service account ${clientId} already has ${has} (the limit is ${limit} live credentials, secrets, keys and federated credentials together); revoke one first`,
  );
}

function liveText({ secrets, keys, federated }: LiveCredentials): string {
  // The count of federated credentials is named only when there are some, as older messages read.
  return federated === 0
    ? `${secrets} live secrets and ${keys} live keys`
    : `${secrets} live secrets, ${keys} live keys and ${federated} live federated credentials`;
}

/**
 * The `key_not_found` error for a key ID of an account.
 *
 * @example
 * ```ts
 * declare const keyId: string // as the caller typed it
 * const revoked = await store.revokeKey?.(clientId, keyId, new Date())
 * if (!revoked) throw keyNotFound(clientId, keyId)
 * ```
 */
export function keyNotFound(clientId: string, keyId: unknown): AdminError {
  return credentialNotFound('key_not_found', clientId, 'key', keyId, isKeyId, 'key IDs look like esak_ and 16 letters or digits, as list shows them');
}

/**
 * The `key_already_registered` error: one of the account's live keys, `keyId`, is this public key.
 *
 * @example
 * ```ts
 * declare const thumbprint: string // RFC 7638 thumbprint of the key being added
 * const existing = account.keys?.find((key) => key.revokedAt === null && key.thumbprint === thumbprint)
 * if (existing) throw keyAlreadyRegistered(account.clientId, existing.id)
 * ```
 */
export function keyAlreadyRegistered(clientId: string, keyId?: string): AdminError {
  const as = keyId === undefined ? '' : ` as ${keyId}`;
  return new AdminError('key_already_registered', `Service account ${clientId} already has this public key${as}, live`);
}

/**
 * The `federated_credential_not_found` error for a federated credential ID of an account.
 *
 * @example
 * ```ts
 * declare const credentialId: string // as the caller typed it
 * const revoked = await store.revokeFederatedCredential?.(clientId, credentialId, new Date())
 * if (!revoked) throw federatedCredentialNotFound(clientId, credentialId)
 * ```
 */
export function federatedCredentialNotFound(clientId: string, credentialId: unknown): AdminError {
  const shape = 'federated credential IDs look like esaf_ and 16 letters or digits, as list shows them';
  return credentialNotFound('federated_credential_not_found', clientId, 'federated credential', credentialId, isFederatedCredentialId, shape);
}

/**
 * The `federated_credential_already_registered` error: one of the account's live federated
 * credentials, `credentialId`, already trusts this issuer for this subject and audience.
 *
 * @example
 * ```ts
 * declare const issuer: string, subject: string, audience: string | null // of the credential being added
 * const twin = account.federated?.find((c) => c.revokedAt === null && c.issuer === issuer && c.subject === subject && c.audience === audience)
 * if (twin) throw federatedCredentialAlreadyRegistered(account.clientId, twin.id)
 * ```
 */
export function federatedCredentialAlreadyRegistered(clientId: string, credentialId?: string): AdminError {
  const as = credentialId === undefined ? '' : ` (${credentialId})`;
  return new AdminError(
    'federated_credential_already_registered',
    `Service account ${clientId} already has a live federated credential${as} for this issuer, subject and audience`,
  );
}
