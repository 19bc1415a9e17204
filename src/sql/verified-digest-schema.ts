/**
 * @module verified-digest-schema
 * The migration that lets the SQL store keep, beside each secret's bcrypt hash, the digest that proves
 * to every instance of a deployment that a value already passed bcrypt (`secrets.verified_digest`,
 * docs/security.md "Paying bcrypt once per secret").
 */
import { sql, type RawBuilder } from 'kysely';

/**
 * Adds the nullable column `secrets.verified_digest`. Adding a nullable column without a default
 * rewrites no row on SQLite or PostgreSQL, so it applies to a database of any size, with accounts in
 * it, in one short transaction; existing secrets start without a digest and get one at their next
 * check.
 *
 * @example
 * ```ts
 * // Appended after the migrations before it, in src/sql/schema.ts:
 * const latest: number = VERIFIED_DIGEST_MIGRATION.version // 5
 * ```
 */
export const VERIFIED_DIGEST_MIGRATION = {
  version: 5,
  name: 'verified secret digests',
  statements: (table: (name: 'secrets') => RawBuilder<unknown>): RawBuilder<unknown>[] => [
    sql`alter table ${table('secrets')} add column verified_digest text`,
  ],
} as const;
