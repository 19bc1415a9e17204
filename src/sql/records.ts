/**
 * @module records
 * The conversions between SQL rows and the store's records: integer timestamps ⇄ `Date`, JSON scopes
 * ⇄ arrays, JSON public keys ⇄ JWK objects. The account query is account-rows.ts.
 */
import type { FederatedCredentialRecord, KeyRecord, PublicKeyJwk, SecretRecord } from '../store/account-store.js';

/**
 * An integer column as a driver returns it: `pg` gives `BIGINT` as a string.
 *
 * @example
 * ```ts
 * const millis: DbInteger = '1736933400123'
 * ```
 */
export type DbInteger = number | string | bigint;

/**
 * A secret row as read from `secrets`.
 *
 * @example
 * ```ts
 * const row: SecretRow = { id: 'sec_1', hash, created_at: 1736933400123, last_used_at: null, revoked_at: null, expires_at: null }
 * ```
 */
export interface SecretRow {
  id: string;
  hash: string;
  created_at: DbInteger;
  last_used_at: DbInteger | null;
  revoked_at: DbInteger | null;
  /** Absent when not selected. */
  verified_digest?: string | null;
  /** When it expires (schema version 8); `NULL`: never. */
  expires_at?: DbInteger | null;
}

/**
 * A key row as read from `client_keys`.
 *
 * @example
 * ```ts
 * const row: KeyRow = {
 *   id: 'esak_a1B2c3D4e5F6g7H8',
 *   thumbprint: 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k', // RFC 7638 thumbprint of the key below
 *   public_jwk: '{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}',
 *   created_at: 1736933400123,
 *   last_used_at: null,
 *   revoked_at: null,
 *   expires_at: null,
 * }
 * ```
 */
export interface KeyRow {
  id: string;
  thumbprint: string;
  public_jwk: string;
  created_at: DbInteger;
  last_used_at: DbInteger | null;
  revoked_at: DbInteger | null;
  /** When it expires (schema version 8); `NULL`: never. */
  expires_at?: DbInteger | null;
}

/**
 * Reads an integer column as a number. Timestamps and feed sequence numbers stay far below 2^53.
 *
 * @example
 * ```ts
 * toNumber('1736933400123') // 1736933400123
 * ```
 */
export function toNumber(value: DbInteger): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number)) throw new TypeError(`Expected an integer column, got ${String(value)}`);
  return number;
}

function toDate(value: DbInteger): Date {
  return new Date(toNumber(value));
}

function toNullableDate(value: DbInteger | null): Date | null {
  return value === null ? null : toDate(value);
}

/**
 * Serialises scopes for the `scopes` column: a JSON array keeps their order and any character.
 *
 * @example
 * ```ts
 * serializeScopes(['jobs:write', 'candidates:read']) // '["jobs:write","candidates:read"]'
 * ```
 */
export function serializeScopes(scopes: readonly string[]): string {
  return JSON.stringify(scopes);
}

/**
 * Reads the `resources` column back: a JSON array like the scopes column's; `NULL` (an account
 * created before schema version 7) is none.
 *
 * @example
 * ```ts
 * parseResources('["https://api.example.com"]') // ['https://api.example.com']
 * parseResources(null)                          // []
 * ```
 */
export function parseResources(text: string | null): string[] {
  if (text === null) return [];
  const value: unknown = JSON.parse(text);
  if (!Array.isArray(value) || !value.every((item): item is string => typeof item === 'string')) {
    throw new TypeError('Corrupt accounts.resources column: expected a JSON array of strings');
  }
  return value;
}

/**
 * Reads the `scopes` column back: the JSON array {@link serializeScopes} wrote.
 *
 * @example
 * ```ts
 * parseScopes('["jobs:write","candidates:read"]') // ['jobs:write', 'candidates:read']
 * ```
 */
export function parseScopes(text: string): string[] {
  const value: unknown = JSON.parse(text);
  if (!Array.isArray(value) || !value.every((scope): scope is string => typeof scope === 'string')) {
    throw new TypeError('Corrupt accounts.scopes column: expected a JSON array of strings');
  }
  return value;
}

/**
 * Maps a `secrets` row to a {@link SecretRecord}.
 *
 * @example
 * ```ts
 * toSecretRecord({ id: 'sec_1', hash, created_at: 1736933400123, last_used_at: null, revoked_at: null, expires_at: null })
 * ```
 */
export function toSecretRecord(row: SecretRow): SecretRecord {
  return {
    id: row.id,
    hash: row.hash,
    createdAt: toDate(row.created_at),
    lastUsedAt: toNullableDate(row.last_used_at),
    revokedAt: toNullableDate(row.revoked_at),
    // Present only for a credential that expires, as a store without expiry would return the record.
    ...(row.expires_at != null && { expiresAt: toDate(row.expires_at) }),
    // Present only when one was recorded, as a store without digests would return the record.
    ...(typeof row.verified_digest === 'string' && { verifiedDigest: row.verified_digest }),
  };
}

/**
 * A federated credential row as read from `federated_credentials`.
 *
 * @example
 * ```ts
 * const row: FederatedRow = {
 *   id: 'esaf_a1B2c3D4e5F6g7H8',
 *   issuer: 'https://token.actions.githubusercontent.com',
 *   subject: 'repo:acme/billing:ref:refs/heads/main',
 *   audience: null,
 *   jwks_uri: null,
 *   created_at: 1736933400123,
 *   last_used_at: null,
 *   revoked_at: null,
 *   claims: '{"repository_owner":"acme"}',
 *   expires_at: null,
 * }
 * ```
 */
export interface FederatedRow {
  id: string;
  issuer: string;
  subject: string;
  audience: string | null;
  jwks_uri: string | null;
  created_at: DbInteger;
  last_used_at: DbInteger | null;
  revoked_at: DbInteger | null;
  /** The claim conditions as JSON (schema version 10); `NULL` for none. */
  claims: string | null;
  /** When it expires (schema version 8); `NULL`: never. */
  expires_at?: DbInteger | null;
}

/**
 * Maps a `federated_credentials` row to a {@link FederatedCredentialRecord}.
 *
 * @example
 * ```ts
 * const record = toFederatedRecord({
 *   id: 'esaf_a1B2c3D4e5F6g7H8',
 *   issuer: 'https://kubernetes.default.svc',
 *   subject: 'system:serviceaccount:payments:exporter',
 *   audience: 'https://auth.example.com',
 *   jwks_uri: null,
 *   created_at: 1736933400123,
 *   last_used_at: null,
 *   revoked_at: null,
 *   claims: '{"/kubernetes.io/namespace":"payments"}',
 *   expires_at: null,
 * })
 * ```
 */
export function toFederatedRecord(row: FederatedRow): FederatedCredentialRecord {
  const claims = parseClaims(row.claims);
  return {
    id: row.id,
    issuer: row.issuer,
    subject: row.subject,
    audience: row.audience,
    jwksUri: row.jwks_uri,
    createdAt: toDate(row.created_at),
    lastUsedAt: toNullableDate(row.last_used_at),
    revokedAt: toNullableDate(row.revoked_at),
    ...(claims !== undefined && { claims }),
    // Present only for a credential that expires, as a store without expiry would return the record.
    ...(row.expires_at != null && { expiresAt: toDate(row.expires_at) }),
  };
}

/**
 * Writes claim conditions to the `claims` column: a JSON object, in the order given; `NULL` for none.
 *
 * @example
 * ```ts
 * serializeClaims({ repository_owner: 'acme' }) // '{"repository_owner":"acme"}'
 * serializeClaims(undefined)                   // null
 * ```
 */
export function serializeClaims(claims: Readonly<Record<string, string>> | undefined): string | null {
  return claims === undefined || Object.keys(claims).length === 0 ? null : JSON.stringify(claims);
}

/**
 * Reads the `claims` column back (see {@link serializeClaims}): `undefined` for `NULL` or an empty
 * object. Throws on anything but an object of strings, so a damaged row fails closed.
 *
 * @example
 * ```ts
 * parseClaims('{"environment":"production"}') // { environment: 'production' }
 * parseClaims(null)                          // undefined
 * ```
 */
export function parseClaims(text: string | null | undefined): Readonly<Record<string, string>> | undefined {
  if (text === null || text === undefined) return undefined;
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.values(value).every((item) => typeof item === 'string')) {
    throw new TypeError('Corrupt federated_credentials.claims column: expected a JSON object of strings');
  }
  return Object.keys(value).length === 0 ? undefined : Object.freeze(value as Record<string, string>);
}

/**
 * Maps a `client_keys` row to a {@link KeyRecord}.
 *
 * @example
 * ```ts
 * import { calculateJwkThumbprint } from 'jose'
 *
 * declare const jwk: PublicKeyJwk // a checked public key
 * const thumbprint = await calculateJwkThumbprint(jwk, 'sha256')
 * toKeyRecord({ id: 'esak_a1B2c3D4e5F6g7H8', thumbprint, public_jwk: JSON.stringify(jwk), created_at: 1736933400123, last_used_at: null, revoked_at: null, expires_at: null })
 * ```
 */
export function toKeyRecord(row: KeyRow): KeyRecord {
  return {
    id: row.id,
    thumbprint: row.thumbprint,
    publicKey: JSON.parse(row.public_jwk) as PublicKeyJwk,
    createdAt: toDate(row.created_at),
    lastUsedAt: toNullableDate(row.last_used_at),
    revokedAt: toNullableDate(row.revoked_at),
    // Present only for a credential that expires, as a store without expiry would return the record.
    ...(row.expires_at != null && { expiresAt: toDate(row.expires_at) }),
  };
}

