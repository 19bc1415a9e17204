/**
 * @module credential-expiry-schema
 * The migration that lets the SQL store keep when credentials expire (`expires_at` on `secrets`,
 * `client_keys` and `federated_credentials`; docs/rotation.md).
 */
import { sql, type ColumnType, type RawBuilder } from 'kysely';

/**
 * The `expires_at` column every credential table has from schema version 8: milliseconds since the
 * epoch, `NULL` for a credential that never expires (every credential from before version 8).
 *
 * @example
 * ```ts
 * const soon = await db.selectFrom('secrets').select('id').where('expires_at', '<=', Date.now() + 14 * 86_400_000).execute()
 * ```
 */
export type ExpiresAtColumn = ColumnType<number | string | null, number | null | undefined, number | null>;

/**
 * Adds the nullable column `expires_at` to the three credential tables. Adding a nullable column
 * without a default rewrites no row on SQLite or PostgreSQL, so it applies to a database of any size
 * in one short transaction; existing credentials read `NULL` as never expiring, as before.
 *
 * @example
 * ```ts
 * // Appended after the migrations before it, in src/sql/schema.ts:
 * const latest: number = CREDENTIAL_EXPIRY_MIGRATION.version // 8
 * ```
 */
export const CREDENTIAL_EXPIRY_MIGRATION = {
  version: 8,
  name: 'credential expiry',
  statements: (table: (name: 'secrets' | 'client_keys' | 'federated_credentials') => RawBuilder<unknown>): RawBuilder<unknown>[] => [
    sql`alter table ${table('secrets')} add column expires_at bigint`,
    sql`alter table ${table('client_keys')} add column expires_at bigint`,
    sql`alter table ${table('federated_credentials')} add column expires_at bigint`,
  ],
} as const;
