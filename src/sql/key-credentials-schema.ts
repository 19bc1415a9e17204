/**
 * @module key-credentials-schema
 * The tables of key-pair credentials in the SQL store (`client_keys`, `used_assertion_ids`) and the
 * self-contained migration that adds them to a database that already holds accounts.
 */
import { sql, type RawBuilder } from 'kysely';
import type { EpochMillis, NullableEpochMillis } from './column-types.js';
import type { ExpiresAtColumn } from './credential-expiry-schema.js';
import { createCredentialTable } from './credential-table-schema.js';

/**
 * `client_keys`: every public key of every account, live and revoked. At most one live key per
 * account and thumbprint (a partial unique index).
 *
 * @example
 * ```ts
 * const live = await db.selectFrom('client_keys').select(['id', 'thumbprint']).where('revoked_at', 'is', null).execute()
 * ```
 */
export interface ClientKeysTable {
  id: string;
  client_id: string;
  /** RFC 7638 SHA-256 thumbprint, base64url. */
  thumbprint: string;
  /** The public JWK as JSON text (public members only). */
  public_jwk: string;
  created_at: EpochMillis;
  last_used_at: NullableEpochMillis;
  revoked_at: NullableEpochMillis;
  /** When the key expires (schema version 8); `NULL`: never. */
  expires_at: ExpiresAtColumn;
}

/**
 * `used_assertion_ids`: the IDs of client assertions already used, until the assertions expire. The
 * key is a SHA-256 digest of the issuer and the assertion ID, so any ID fits an index entry.
 *
 * @example
 * ```ts
 * await db.deleteFrom('used_assertion_ids').where('expires_at', '<=', Date.now()).execute()
 * ```
 */
export interface UsedAssertionIdsTable {
  digest: string;
  expires_at: EpochMillis;
}

/**
 * The migration that adds key-pair credentials: a table of public keys beside `secrets` and a table of
 * used assertion IDs. It only creates tables and indexes, so it applies to a database of any size,
 * with accounts in it, in one short transaction.
 *
 * @example
 * ```ts
 * import { sql } from 'kysely'
 *
 * // What migrating to version 2 runs on SQLite, in the migration's transaction (PostgreSQL qualifies the tables with the schema).
 * for (const statement of KEY_CREDENTIALS_MIGRATION.statements((name) => sql.id(name))) await statement.execute(trx)
 * ```
 */
export const KEY_CREDENTIALS_MIGRATION = {
  version: 2,
  name: 'key-pair credentials and used assertion IDs',
  statements: (table: (name: 'accounts' | 'client_keys' | 'used_assertion_ids') => RawBuilder<unknown>): RawBuilder<unknown>[] => [
    ...createCredentialTable(table, 'client_keys', ['thumbprint text not null', 'public_jwk text not null'], '      '),
    // A live key is registered once per account, whoever adds it at the same time.
    sql`create unique index client_keys_live_thumbprint_idx on ${table('client_keys')} (client_id, thumbprint) where revoked_at is null`,
    sql`create table ${table('used_assertion_ids')} (digest text primary key, expires_at bigint not null)`,
    sql`create index used_assertion_ids_expires_at_idx on ${table('used_assertion_ids')} (expires_at)`,
  ],
} as const;
