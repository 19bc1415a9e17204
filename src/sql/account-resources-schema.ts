/**
 * @module account-resources-schema
 * The migration that lets the SQL store keep the resources an account's tokens may be for
 * (RFC 8707 resource indicators, `accounts.resources`; docs/resources.md).
 */
import { sql, type RawBuilder } from 'kysely';

/**
 * Adds the nullable column `accounts.resources` (a JSON array of strings). Adding a nullable column
 * without a default rewrites no row on SQLite or PostgreSQL, so it applies to a database of any size
 * in one short transaction; existing accounts read `NULL` as no resources, so their tokens stay for
 * the server's audience, as before.
 *
 * @example
 * ```ts
 * // Appended after the migrations before it, in src/sql/schema.ts:
 * const latest: number = ACCOUNT_RESOURCES_MIGRATION.version // 7
 * ```
 */
export const ACCOUNT_RESOURCES_MIGRATION = {
  version: 7,
  name: 'account resources',
  statements: (table: (name: 'accounts') => RawBuilder<unknown>): RawBuilder<unknown>[] => [
    sql`alter table ${table('accounts')} add column resources text`,
  ],
} as const;
