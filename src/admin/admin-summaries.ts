/**
 * @module admin-summaries
 * What the admin API returns: accounts, secrets, public keys and federated credentials as shown to
 * operators, never a hash, and a secret's value only in the result of the call that created it.
 */
import type { AccountRecord, KeyRecord, SecretRecord } from '../store/account-store.js';
import { federatedOf, keysOf } from '../store/credential-kinds.js';
import { summarizeFederated, type FederatedCredentialSummary } from './federated-summaries.js';

export type { StaleCredential } from './stale-credentials.js';
export type { CreatedFederatedCredential, FederatedCredentialSummary, RevokedFederatedCredential } from './federated-summaries.js';

/**
 * A new secret: `value` is shown this once.
 *
 * @example
 * ```ts
 * import type { CreatedSecret } from 'express-service-accounts'
 *
 * // Rotation, step 1: a second secret for the client to switch to (docs/rotation.md).
 * const secret: CreatedSecret = await sa.admin.addSecret(clientId)
 * console.log(`new secret ${secret.id}: ${secret.value}`) // shown this once: only its hash is stored
 * ```
 */
export interface CreatedSecret {
  readonly id: string;
  readonly value: string;
  /** When it stops working on its own; `null`: never. */
  readonly expiresAt: Date | null;
}

/**
 * Result of {@link AdminApi.createAccount}.
 *
 * @example
 * ```ts
 * import type { CreatedAccount } from 'express-service-accounts'
 *
 * // A provisioning script: the secret's value is returned this once, never stored or shown again.
 * const account: CreatedAccount = await sa.admin.createAccount({ name: 'procurement-portal', scopes: ['jobs:write'] })
 * console.log(JSON.stringify({ client_id: account.clientId, client_secret: account.secret.value }))
 * ```
 */
export interface CreatedAccount {
  readonly clientId: string;
  readonly name: string;
  readonly clientAccountId: string | null;
  readonly scopes: readonly string[];
  /** The resources its tokens may be for (RFC 8707); empty: the server's audience. */
  readonly resources: readonly string[];
  /** Its tokens' lifetime in seconds; `null`: the server's `tokenLifetime` (docs/account-policy.md). */
  readonly accessTokenLifetime: number | null;
  /** Whether its tokens must be DPoP-bound (RFC 9449 §5.2). */
  readonly dpopBoundAccessTokens: boolean;
  readonly secret: CreatedSecret;
}

/**
 * A secret as listed: no value, no hash.
 *
 * @example
 * ```ts
 * import type { SecretSummary } from 'express-service-accounts'
 *
 * // Live secrets nobody has used for 90 days: candidates for revocation.
 * const cutoff = Date.now() - 90 * 24 * 60 * 60 * 1000
 * const account = await sa.admin.getAccount(clientId)
 * const stale: SecretSummary[] = (account?.secrets ?? []).filter(
 *   (secret) => secret.revokedAt === null && (secret.lastUsedAt ?? secret.createdAt).getTime() < cutoff,
 * )
 * ```
 */
export interface SecretSummary {
  readonly id: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
  readonly revokedAt: Date | null;
  /** When it stops working on its own; `null`: never. */
  readonly expiresAt: Date | null;
}

/**
 * A public key as listed: its ID, thumbprint and dates.
 *
 * @example
 * ```ts
 * import type { KeySummary } from 'express-service-accounts'
 *
 * // Which registered key is this one? Compare RFC 7638 thumbprints (jose's calculateJwkThumbprint).
 * declare const thumbprint: string
 * const account = await sa.admin.getAccount(clientId)
 * const match: KeySummary | undefined = account?.keys.find((key) => key.thumbprint === thumbprint)
 * ```
 */
export interface KeySummary {
  readonly id: string;
  /** RFC 7638 SHA-256 JWK thumbprint of the public key, base64url. */
  readonly thumbprint: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
  readonly revokedAt: Date | null;
  /** When it stops working on its own; `null`: never. */
  readonly expiresAt: Date | null;
}

/**
 * Result of {@link AdminApi.addKey}: the key's ID (carried by the tokens it obtains) and thumbprint.
 *
 * @example
 * ```ts
 * import { readFileSync } from 'node:fs'
 * import type { CreatedKey } from 'express-service-accounts'
 *
 * const key: CreatedKey = await sa.admin.addKey(clientId, readFileSync('public.pem', 'utf8'))
 * console.log(`registered key ${key.id} (thumbprint ${key.thumbprint})`)
 * ```
 */
export interface CreatedKey {
  readonly id: string;
  readonly thumbprint: string;
  readonly createdAt: Date;
  /** When it stops working on its own; `null`: never. */
  readonly expiresAt: Date | null;
}

/**
 * Result of {@link AdminApi.revokeKey}.
 *
 * @example
 * ```ts
 * import type { RevokedKey } from 'express-service-accounts'
 *
 * // Assertions signed by the key are refused, and so are the tokens it obtained, on every instance within a second.
 * declare const keyId: string
 * const revoked: RevokedKey = await sa.admin.revokeKey(clientId, keyId)
 * console.log(`${revoked.clientId}: key ${revoked.keyId} revoked at ${revoked.revokedAt.toISOString()}`)
 * ```
 */
export interface RevokedKey {
  readonly clientId: string;
  readonly keyId: string;
  readonly revokedAt: Date;
}

/**
 * An account as listed.
 *
 * @example
 * ```ts
 * import type { AccountSummary } from 'express-service-accounts'
 *
 * const accounts: AccountSummary[] = await sa.admin.listAccounts()
 * for (const account of accounts) {
 *   const live = account.secrets.filter((secret) => secret.revokedAt === null).length
 *   console.log(`${account.clientId} ${account.name}: ${account.enabled ? 'enabled' : 'disabled'}, ${live} live secret(s)`)
 * }
 * ```
 */
export interface AccountSummary {
  readonly clientId: string;
  readonly name: string;
  readonly clientAccountId: string | null;
  readonly enabled: boolean;
  readonly scopes: readonly string[];
  /** The resources its tokens may be for (RFC 8707, docs/resources.md); empty: the server's audience. */
  readonly resources: readonly string[];
  /** Its tokens' lifetime in seconds; `null`: the server's `tokenLifetime` (docs/account-policy.md). */
  readonly accessTokenLifetime: number | null;
  /** Whether its tokens must be DPoP-bound (RFC 9449 §5.2): a token request without a DPoP proof is refused. */
  readonly dpopBoundAccessTokens: boolean;
  readonly createdAt: Date;
  readonly secrets: readonly SecretSummary[];
  /** Its public keys (key-pair credentials), live and revoked, oldest first. */
  readonly keys: readonly KeySummary[];
  /** Its federated credentials (trust in an outside issuer for one subject), live and revoked, oldest first. */
  readonly federated: readonly FederatedCredentialSummary[];
}

/**
 * Result of {@link AdminApi.revokeSecret}.
 *
 * @example
 * ```ts
 * import type { RevokedSecret } from 'express-service-accounts'
 *
 * // Tokens issued against the secret are refused on every instance within a second.
 * const revoked: RevokedSecret = await sa.admin.revokeSecret(clientId, secretId)
 * console.log(`${revoked.clientId}: secret ${revoked.secretId} revoked at ${revoked.revokedAt.toISOString()}`)
 * ```
 */
export interface RevokedSecret {
  readonly clientId: string;
  readonly secretId: string;
  readonly revokedAt: Date;
}

/**
 * Result of {@link AdminApi.revokeToken}: the token's ID and when it was (first) revoked.
 *
 * @example
 * ```ts
 * import type { RevokedToken } from 'express-service-accounts'
 *
 * // The token ID from an audit line (`tokenId` of a token.issued event, or `req.serviceAccount.tokenId`).
 * const revoked: RevokedToken = await sa.admin.revokeToken('0f6a1c2e-58b4-4f59-9a57-2c1d6a1c9e3b')
 * console.log(`token ${revoked.tokenId} revoked at ${revoked.revokedAt.toISOString()}`)
 * ```
 */
export interface RevokedToken {
  readonly tokenId: string;
  readonly revokedAt: Date;
}

/**
 * Result of {@link AdminApi.setResources}.
 *
 * @example
 * ```ts
 * import type { AccountResources } from 'express-service-accounts'
 *
 * const changed: AccountResources = await sa.admin.setResources(clientId, ['https://billing.example.com'])
 * console.log(`${changed.clientId}: tokens for ${changed.resources.join(', ')}`)
 * ```
 */
export interface AccountResources {
  readonly clientId: string;
  readonly resources: readonly string[];
}

/**
 * Result of {@link AdminApi.setPolicy}: the account's token policy after the change.
 *
 * @example
 * ```ts
 * import type { AccountPolicy } from 'express-service-accounts'
 *
 * const policy: AccountPolicy = await sa.admin.setPolicy(clientId, { accessTokenLifetime: 900 })
 * console.log(`${policy.clientId}: ${policy.accessTokenLifetime ?? 'default'} s, DPoP ${policy.dpopBoundAccessTokens ? 'required' : 'optional'}`)
 * ```
 */
export interface AccountPolicy {
  readonly clientId: string;
  /** Seconds; `null`: the server's `tokenLifetime`. */
  readonly accessTokenLifetime: number | null;
  readonly dpopBoundAccessTokens: boolean;
}

/**
 * Result of {@link AdminApi.disableAccount} and {@link AdminApi.enableAccount}.
 *
 * @example
 * ```ts
 * import type { AccountStatus } from 'express-service-accounts'
 *
 * // Its tokens are refused (`invalid_token`, "disabled") until the account is enabled again.
 * const status: AccountStatus = await sa.admin.disableAccount(clientId)
 * console.log(`${status.clientId} enabled: ${status.enabled}`) // enabled: false
 * ```
 */
export interface AccountStatus {
  readonly clientId: string;
  readonly enabled: boolean;
}

function summarizeSecret(secret: SecretRecord): SecretSummary {
  return { id: secret.id, createdAt: secret.createdAt, lastUsedAt: secret.lastUsedAt, revokedAt: secret.revokedAt, expiresAt: secret.expiresAt ?? null };
}

function summarizeKey(key: KeyRecord): KeySummary {
  return { id: key.id, thumbprint: key.thumbprint, createdAt: key.createdAt, lastUsedAt: key.lastUsedAt, revokedAt: key.revokedAt, expiresAt: key.expiresAt ?? null };
}

/**
 * An account as listed: its fields, its secrets' IDs and dates (without their hashes), its keys'
 * IDs, thumbprints and dates, and its federated credentials. `issuer`, when known, is shown as the
 * audience of a federated credential stored without one.
 *
 * @example
 * ```ts
 * const summaries = (await store.listAccounts()).map((account) => summarizeAccount(account, 'https://api.example.com'))
 * ```
 */
export function summarizeAccount(account: AccountRecord, issuer?: string): AccountSummary {
  return {
    clientId: account.clientId,
    name: account.name,
    clientAccountId: account.clientAccountId,
    enabled: account.enabled,
    scopes: [...account.scopes],
    resources: [...(account.resources ?? [])],
    accessTokenLifetime: account.accessTokenLifetime ?? null,
    dpopBoundAccessTokens: account.dpopBoundAccessTokens ?? false,
    createdAt: account.createdAt,
    secrets: account.secrets.map(summarizeSecret),
    keys: keysOf(account).map(summarizeKey),
    federated: federatedOf(account).map((credential) => summarizeFederated(credential, issuer)),
  };
}
