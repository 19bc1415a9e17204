/**
 * @module records
 * The account query and the conversions between SQL rows and the store's records: integer timestamps
 * ⇄ `Date`, JSON scopes ⇄ arrays.
 */
import type { Kysely } from 'kysely';
import type { AccountRecord, NewSecretRecord, RevokedTokenRecord, SecretRecord } from '../store/account-store.js';
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
 * An account joined (left join) with one of its secrets; the secret columns are null when it has none.
 *
 * @example
 * ```ts
 * const accounts = toAccountRecords(rows satisfies AccountSecretRow[])
 * ```
 */
export interface AccountSecretRow {
  client_id: string;
  name: string;
  client_account_id: string | null;
  scopes: string;
  enabled: DbInteger;
  created_at: DbInteger;
  secret_id: string | null;
  secret_hash: string | null;
  secret_created_at: DbInteger | null;
  secret_last_used_at: DbInteger | null;
  secret_revoked_at: DbInteger | null;
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
 * The `secrets` columns of a secret being added.
 *
 * @example
 * ```ts
 * await trx.insertInto('secrets').values(secretValues('svc_1', secret)).execute()
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
 * Folds joined account/secret rows into records, keeping the row order (accounts oldest first, each
 * account's secrets oldest first).
 *
 * @example
 * ```ts
 * const accounts = toAccountRecords(await selectAccountRows(db).execute())
 * ```
 */
export function toAccountRecords(rows: readonly AccountSecretRow[]): AccountRecord[] {
  const accounts = new Map<string, { row: AccountSecretRow; secrets: SecretRecord[] }>();
  for (const row of rows) {
    let entry = accounts.get(row.client_id);
    if (!entry) {
      entry = { row, secrets: [] };
      accounts.set(row.client_id, entry);
    }
    if (row.secret_id !== null && row.secret_hash !== null && row.secret_created_at !== null) {
      entry.secrets.push(
        toSecretRecord({
          id: row.secret_id,
          hash: row.secret_hash,
          created_at: row.secret_created_at,
          last_used_at: row.secret_last_used_at,
          revoked_at: row.secret_revoked_at,
        }),
      );
    }
  }
  return [...accounts.values()].map(({ row, secrets }) => ({
    clientId: row.client_id,
    name: row.name,
    clientAccountId: row.client_account_id,
    scopes: parseScopes(row.scopes),
    enabled: toNumber(row.enabled) !== 0,
    createdAt: toDate(row.created_at),
    secrets,
  }));
}

/**
 * Selects accounts with their secrets as one left join (one snapshot, one round trip), accounts oldest
 * first and each account's secrets oldest first. Feed the rows to {@link toAccountRecords}.
 *
 * @example
 * ```ts
 * const [account] = toAccountRecords(await selectAccountRows(db).where('a.client_id', '=', clientId).execute())
 * ```
 */
export function selectAccountRows(db: Kysely<Database>) {
  return db
    .selectFrom('accounts as a')
    .leftJoin('secrets as s', 's.client_id', 'a.client_id')
    .select(['a.client_id', 'a.name', 'a.client_account_id', 'a.scopes', 'a.enabled', 'a.created_at'])
    .select(['s.id as secret_id', 's.hash as secret_hash', 's.created_at as secret_created_at'])
    .select(['s.last_used_at as secret_last_used_at', 's.revoked_at as secret_revoked_at'])
    .orderBy('a.created_at')
    .orderBy('a.client_id')
    .orderBy('s.created_at')
    .orderBy('s.id');
}

/**
 * The number of live (unrevoked) secrets of an account.
 *
 * @example
 * ```ts
 * if ((await countLiveSecrets(trx, clientId)) >= maxLiveSecrets) return 'limit_reached'
 * ```
 */
export async function countLiveSecrets(db: Kysely<Database>, clientId: string): Promise<number> {
  const { live } = await db
    .selectFrom('secrets')
    .select((eb) => eb.fn.countAll().as('live'))
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return toNumber(live);
}

/**
 * A deny-list row as read from `revoked_tokens`.
 *
 * @example
 * ```ts
 * const row: RevokedTokenRow = { token_id: '0f6a1c2e', client_id: 'esa_4fT0', revoked_at: 1736933400123, expires_at: 1736937000000 }
 * ```
 */
export interface RevokedTokenRow {
  token_id: string;
  client_id: string | null;
  revoked_at: DbInteger;
  expires_at: DbInteger;
}

/**
 * Maps a `revoked_tokens` row to a {@link RevokedTokenRecord}.
 *
 * @example
 * ```ts
 * const entries = (await db.selectFrom('revoked_tokens').selectAll().execute()).map(toRevokedTokenRecord)
 * ```
 */
export function toRevokedTokenRecord(row: RevokedTokenRow): RevokedTokenRecord {
  return { tokenId: row.token_id, clientId: row.client_id, revokedAt: toDate(row.revoked_at), expiresAt: toDate(row.expires_at) };
}
