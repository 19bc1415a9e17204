/**
 * @module key-records
 * The records of key-pair credentials: the public keys an account holds (the client keeps the private
 * halves) and what a store is given to add one. Types only, re-exported by `account-store.ts`.
 */

/**
 * A public key in JWK form (RFC 7517), holding exactly the public members that identify it (those of
 * its RFC 7638 thumbprint): an EC P-256 key, an RSA key of at least 2048 bits, or an Ed25519 key.
 * Never a private member.
 *
 * @example
 * ```ts
 * import type { PublicKeyJwk } from 'express-service-accounts'
 *
 * // The algorithms an assertion signed by this key may use follow from its type.
 * const algorithmsOf = (jwk: PublicKeyJwk): string[] =>
 *   jwk.kty === 'EC' ? ['ES256'] : jwk.kty === 'RSA' ? ['RS256', 'PS256'] : ['EdDSA']
 * ```
 */
export type PublicKeyJwk =
  | { readonly kty: 'EC'; readonly crv: 'P-256'; readonly x: string; readonly y: string }
  | { readonly kty: 'RSA'; readonly n: string; readonly e: string }
  | { readonly kty: 'OKP'; readonly crv: 'Ed25519'; readonly x: string };

/**
 * One public key of an account, as stored: a key-pair credential. The client proves itself by signing
 * with the private half, which never reaches the service.
 *
 * @example
 * ```ts
 * import type { KeyRecord } from 'express-service-accounts'
 *
 * // In your own store: a row of your persistence layer as a record (the JWK kept as JSON text).
 * interface KeyRow { id: string; thumbprint: string; public_jwk: string; created_at: Date; last_used_at: Date | null; revoked_at: Date | null }
 * const toKeyRecord = (row: KeyRow): KeyRecord => ({
 *   id: row.id,
 *   thumbprint: row.thumbprint,
 *   publicKey: JSON.parse(row.public_jwk),
 *   createdAt: row.created_at,
 *   lastUsedAt: row.last_used_at,
 *   revokedAt: row.revoked_at,
 * })
 * ```
 */
export interface KeyRecord {
  /** Public ID of the key (`esak_` and 16 letters or digits), shown by `list` and carried in tokens. */
  readonly id: string;
  /** RFC 7638 SHA-256 JWK thumbprint of the public key, base64url: the same key always has the same one. */
  readonly thumbprint: string;
  /** The public key, public members only. */
  readonly publicKey: PublicKeyJwk;
  readonly createdAt: Date;
  /** Last successful client authentication with this key, recorded at most once a minute. */
  readonly lastUsedAt: Date | null;
  /** When the key was revoked; `null` while it is live. Revocation is final. */
  readonly revokedAt: Date | null;
  /** When the key stops working on its own, as a secret's `expiresAt`; `null` or absent: never. */
  readonly expiresAt?: Date | null;
}

/**
 * A key to add: the core has already checked the public key, computed its thumbprint and made its ID.
 *
 * @example
 * ```ts
 * import type { AddKeyOptions, AddKeyResult, NewKeyRecord } from 'express-service-accounts'
 *
 * // `AccountStore.addKey` of your store receives the key ready to store, as data.
 * async function addKey(clientId: string, key: NewKeyRecord, options: AddKeyOptions): Promise<AddKeyResult> {
 *   console.log(`store ${key.id} (${key.publicKey.kty}, ${key.thumbprint}) for ${clientId}, up to ${options.maxLiveCredentials} live credentials`)
 *   return undefined // this sketch knows no account
 * }
 * ```
 */
export interface NewKeyRecord {
  readonly id: string;
  readonly thumbprint: string;
  readonly publicKey: PublicKeyJwk;
  readonly createdAt: Date;
  /** When it stops working on its own; `null` or absent: never (see `NewSecretRecord.expiresAt`). */
  readonly expiresAt?: Date | null;
}

/**
 * The cap {@link AccountStore.addKey} enforces.
 *
 * @example
 * ```ts
 * import type { AddKeyOptions } from 'express-service-accounts'
 *
 * // What the admin API passes with `maxSecretsPerAccount: 5`.
 * const options: AddKeyOptions = { maxLiveCredentials: 5 }
 * ```
 */
export interface AddKeyOptions {
  /**
   * Live (unrevoked) credentials, secrets, keys and federated credentials together, the account may hold. The store adds the
   * key only when the account has fewer than this, checked and inserted as one atomic step.
   */
  readonly maxLiveCredentials: number;
}

/**
 * What {@link AccountStore.addKey} resolves to: the stored key; `undefined` when the client ID is
 * unknown; `'limit_reached'` when the account already has `maxLiveCredentials` live credentials; or
 * `'duplicate'` when a live key of the account has the same thumbprint. Nothing is stored in the last two cases.
 *
 * @example
 * ```ts
 * import type { AddKeyResult, NewKeyRecord } from 'express-service-accounts'
 *
 * declare const newKey: NewKeyRecord // checked, with its ID and thumbprint, by the core
 * const result: AddKeyResult = await store.addKey?.(clientId, newKey, { maxLiveCredentials: 5 })
 * if (result === undefined) console.log('no such account')
 * else if (result === 'limit_reached') console.log('revoke a secret or a key first')
 * else if (result === 'duplicate') console.log('that key is already registered')
 * else console.log(`stored key ${result.id}`)
 * ```
 */
export type AddKeyResult = KeyRecord | 'limit_reached' | 'duplicate' | undefined;
