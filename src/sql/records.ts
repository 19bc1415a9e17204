/**
 * @module records
 * The account query and the conversions between SQL rows and the store's records: integer timestamps
 * ⇄ `Date`, JSON scopes ⇄ arrays, JSON public keys ⇄ JWK objects.
 */
import { type Kysely, sql } from 'kysely';
import type { AccountRecord, KeyRecord, NewSecretRecord, PublicKeyJwk, SecretRecord } from '../store/account-store.js';
import type { Database } from './schema.js';

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
 * const row: SecretRow = { id: 'sec_1', hash, created_at: 1736933400123, last_used_at: null, revoked_at: null }
 * ```
 */
export interface SecretRow {
  id: string;
  hash: string;
  created_at: DbInteger;
  last_used_at: DbInteger | null;
  revoked_at: DbInteger | null;
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
}

/**
 * An account joined (left join) with one of its credentials, a secret or a key; the credential
 * columns are null when it has none. `credential_material` is a secret's hash or a key's JWK.
 *
 * @example
 * ```ts
 * const rows: AccountCredentialRow[] = await selectAccountRows(db).execute()
 * const withoutCredentials = rows.filter((row) => row.credential_id === null).map((row) => row.client_id)
 * ```
 */
export interface AccountCredentialRow {
  client_id: string;
  name: string;
  client_account_id: string | null;
  scopes: string;
  enabled: DbInteger;
  created_at: DbInteger;
  credential_kind: string | null;
  credential_id: string | null;
  credential_material: string | null;
  credential_thumbprint: string | null;
  credential_created_at: DbInteger | null;
  credential_last_used_at: DbInteger | null;
  credential_revoked_at: DbInteger | null;
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

function parseScopes(text: string): string[] {
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
 * toSecretRecord({ id: 'sec_1', hash, created_at: 1736933400123, last_used_at: null, revoked_at: null })
 * ```
 */
export function toSecretRecord(row: SecretRow): SecretRecord {
  return {
    id: row.id,
    hash: row.hash,
    createdAt: toDate(row.created_at),
    lastUsedAt: toNullableDate(row.last_used_at),
    revokedAt: toNullableDate(row.revoked_at),
  };
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
 * toKeyRecord({ id: 'esak_a1B2c3D4e5F6g7H8', thumbprint, public_jwk: JSON.stringify(jwk), created_at: 1736933400123, last_used_at: null, revoked_at: null })
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
  };
}

/**
 * The `secrets` columns of a secret being added.
 *
 * @example
 * ```ts
 * const secret: NewSecretRecord = { id: secretId, hash, createdAt: new Date() }
 * await trx.insertInto('secrets').values(secretValues(clientId, secret)).execute()
 * ```
 */
export function secretValues(clientId: string, secret: NewSecretRecord) {
  return {
    id: secret.id,
    client_id: clientId,
    hash: secret.hash,
    created_at: secret.createdAt.getTime(),
    last_used_at: null,
    revoked_at: null,
  };
}

/**
 * Folds joined account/credential rows into records, keeping the row order (accounts oldest first,
 * each account's secrets and keys oldest first).
 *
 * @example
 * ```ts
 * const accounts = toAccountRecords(await selectAccountRows(db).execute())
 * ```
 */
export function toAccountRecords(rows: readonly AccountCredentialRow[]): AccountRecord[] {
  const accounts = new Map<string, { row: AccountCredentialRow; secrets: SecretRecord[]; keys: KeyRecord[] }>();
  for (const row of rows) {
    let entry = accounts.get(row.client_id);
    if (!entry) {
      entry = { row, secrets: [], keys: [] };
      accounts.set(row.client_id, entry);
    }
    const { credential_id: id, credential_material: material, credential_created_at: createdAt } = row;
    if (id === null || material === null || createdAt === null) continue;
    const dates = { created_at: createdAt, last_used_at: row.credential_last_used_at, revoked_at: row.credential_revoked_at };
    if (row.credential_kind === 'secret') entry.secrets.push(toSecretRecord({ id, hash: material, ...dates }));
    else if (row.credential_kind === 'key' && row.credential_thumbprint !== null) {
      entry.keys.push(toKeyRecord({ id, thumbprint: row.credential_thumbprint, public_jwk: material, ...dates }));
    }
  }
  return [...accounts.values()].map(({ row, secrets, keys }) => ({
    clientId: row.client_id,
    name: row.name,
    clientAccountId: row.client_account_id,
    scopes: parseScopes(row.scopes),
    enabled: toNumber(row.enabled) !== 0,
    createdAt: toDate(row.created_at),
    secrets,
    keys,
  }));
}

/**
 * Selects accounts with their credentials, secrets and keys, as one left join on their union (one
 * snapshot, one round trip), accounts oldest first and each account's credentials oldest first. Feed
 * the rows to {@link toAccountRecords}.
 *
 * @example
 * ```ts
 * const [account] = toAccountRecords(await selectAccountRows(db).where('a.client_id', '=', clientId).execute())
 * ```
 */
export function selectAccountRows(db: Kysely<Database>) {
  const credentials = db
    .selectFrom('secrets')
    .select([sql<string>`'secret'`.as('kind'), 'client_id', 'id', 'hash as material', sql<string | null>`null`.as('thumbprint')])
    .select(['created_at', 'last_used_at', 'revoked_at'])
    .unionAll(
      db
        .selectFrom('client_keys')
        .select([sql<string>`'key'`.as('kind'), 'client_id', 'id', 'public_jwk as material', 'thumbprint'])
        .select(['created_at', 'last_used_at', 'revoked_at']),
    );
  return db
    .selectFrom('accounts as a')
    .leftJoin(credentials.as('c'), 'c.client_id', 'a.client_id')
    .select(['a.client_id', 'a.name', 'a.client_account_id', 'a.scopes', 'a.enabled', 'a.created_at'])
    .select(['c.kind as credential_kind', 'c.id as credential_id', 'c.material as credential_material'])
    .select(['c.thumbprint as credential_thumbprint', 'c.created_at as credential_created_at'])
    .select(['c.last_used_at as credential_last_used_at', 'c.revoked_at as credential_revoked_at'])
    .orderBy('a.created_at')
    .orderBy('a.client_id')
    .orderBy('c.created_at')
    .orderBy('c.id');
}

/**
 * The number of live (unrevoked) credentials of an account, secrets and keys together: what the cap
 * of `addSecret` and `addKey` counts.
 *
 * @example
 * ```ts
 * declare const cap: AddKeyOptions // what addKey (or addSecret) received
 * // In the write transaction, after locking the account's row:
 * const full = (await countLiveCredentials(trx, clientId)) >= cap.maxLiveCredentials // then store nothing: 'limit_reached'
 * ```
 */
export async function countLiveCredentials(db: Kysely<Database>, clientId: string): Promise<number> {
  const count = async (table: 'secrets' | 'client_keys'): Promise<number> => {
    const { live } = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('live'))
      .where('client_id', '=', clientId)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    return toNumber(live);
  };
  return (await count('secrets')) + (await count('client_keys'));
}
