/**
 * @module federated-records
 * The records of federated credentials: an account's trust in one outside issuer (a Kubernetes cluster,
 * GitHub Actions, a SPIFFE trust domain, any OpenID Connect provider) for one exact subject. The
 * workload presents the token its platform gave it; nothing secret is stored. Types only, re-exported
 * by `account-store.ts`.
 */

/**
 * One federated credential of an account, as stored: tokens that `issuer` signed for exactly `subject`,
 * with `audience` among their audiences, authenticate the account.
 *
 * @example
 * ```ts
 * import type { FederatedCredentialRecord } from 'express-service-accounts'
 *
 * // In your own store: a row of your persistence layer as a record.
 * interface FederatedRow { id: string; issuer: string; subject: string; audience: string | null; jwks_uri: string | null; created_at: Date; last_used_at: Date | null; revoked_at: Date | null; claims: Record<string, string> | null }
 * const toFederatedRecord = (row: FederatedRow): FederatedCredentialRecord => ({
 *   id: row.id,
 *   issuer: row.issuer,
 *   subject: row.subject,
 *   audience: row.audience,
 *   jwksUri: row.jwks_uri,
 *   createdAt: row.created_at,
 *   lastUsedAt: row.last_used_at,
 *   revokedAt: row.revoked_at,
 *   ...(row.claims !== null && { claims: row.claims }),
 * })
 * ```
 */
export interface FederatedCredentialRecord {
  /** Public ID of the credential (`esaf_` and 16 letters or digits), shown by `list` and carried in tokens. */
  readonly id: string;
  /** The outside issuer's identifier, exactly as its tokens carry it in `iss` (an https URL). */
  readonly issuer: string;
  /** The one subject (`sub`) accepted, compared exactly: no patterns. */
  readonly subject: string;
  /**
   * The audience the outside token must carry in `aud`; `null` (the default) for the issuer identifier
   * of the server that checks the token, so the credential follows a change of that identifier.
   */
  readonly audience: string | null;
  /** Where the issuer's public keys are (a JWK Set URL), when not found through OpenID Connect discovery; else `null`. */
  readonly jwksUri: string | null;
  readonly createdAt: Date;
  /** Last successful client authentication with this credential, recorded at most once a minute. */
  readonly lastUsedAt: Date | null;
  /** When the credential was revoked; `null` while it is live. Revocation is final. */
  readonly revokedAt: Date | null;
  /**
   * Claim conditions: other claims the outside token must carry with exactly these values, all of
   * them (a top-level claim name, or a JSON Pointer such as `/kubernetes.io/namespace`; see
   * docs/federated-credentials.md#claim-conditions). Absent (a store from before claim conditions
   * may leave it out) or empty: none.
   */
  readonly claims?: Readonly<Record<string, string>>;
  /** When the credential stops working on its own, as a secret's `expiresAt`; `null` or absent: never. */
  readonly expiresAt?: Date | null;
}

/**
 * A federated credential to add: the core has already checked its fields and made its ID.
 *
 * @example
 * ```ts
 * import type { NewFederatedCredentialRecord } from 'express-service-accounts'
 *
 * const credential: NewFederatedCredentialRecord = {
 *   id: 'esaf_a1B2c3D4e5F6g7H8',
 *   issuer: 'https://token.actions.githubusercontent.com',
 *   subject: 'repo:acme/billing:ref:refs/heads/main',
 *   audience: null, // this server's issuer identifier
 *   jwksUri: null,
 *   createdAt: new Date(),
 *   claims: { repository_owner: 'acme', environment: 'production' }, // optional
 * }
 * ```
 */
export interface NewFederatedCredentialRecord extends Omit<FederatedCredentialRecord, 'lastUsedAt' | 'revokedAt'> {
  /**
   * The claim conditions (see {@link FederatedCredentialRecord.claims}), present only when there are
   * some. A store must keep them and give them back: the admin API refuses to register conditions
   * with a store that returns the credential without them.
   */
  readonly claims?: Readonly<Record<string, string>>;
  /** When it stops working on its own; `null` or absent: never (see `NewSecretRecord.expiresAt`). */
  readonly expiresAt?: Date | null;
}

/**
 * What {@link AccountStore.addFederatedCredential} resolves to: the stored credential; `undefined`
 * when the client ID is unknown; `'limit_reached'` when the account already has `maxLiveCredentials`
 * live credentials; or `'duplicate'` when a live federated credential of the account has the same
 * issuer, subject and audience (`null` equal to `null`). Nothing is stored in the last two cases.
 *
 * @example
 * ```ts
 * import type { AddFederatedCredentialResult, NewFederatedCredentialRecord } from 'express-service-accounts'
 *
 * declare const credential: NewFederatedCredentialRecord // checked, with its ID, by the core
 * const result: AddFederatedCredentialResult = await store.addFederatedCredential?.(clientId, credential, { maxLiveCredentials: 5 })
 * if (result === undefined) console.log('no such account')
 * else if (result === 'limit_reached') console.log('revoke a credential first')
 * else if (result === 'duplicate') console.log('that issuer and subject are already trusted')
 * else console.log(`stored ${result.id}`)
 * ```
 */
export type AddFederatedCredentialResult = FederatedCredentialRecord | 'limit_reached' | 'duplicate' | undefined;
