/**
 * @module federated-claims-schema
 * The migration that lets the SQL store keep the claim conditions of federated credentials
 * (`federated_credentials.claims`; docs/federated-credentials.md#claim-conditions).
 */
import { sql, type RawBuilder } from 'kysely';

/**
 * Adds the nullable column `federated_credentials.claims` (a JSON object of claim names and the exact
 * values required). Adding a nullable column without a default rewrites no row on SQLite or
 * PostgreSQL, so it applies to a database of any size in one short transaction; existing credentials
 * read `NULL` as no conditions, so they trust exactly what they trusted before.
 *
 * @example
 * ```ts
 * // Appended after the migrations before it, in src/sql/schema.ts:
 * const latest: number = FEDERATED_CLAIMS_MIGRATION.version // 10
 * ```
 */
export const FEDERATED_CLAIMS_MIGRATION = {
  version: 10,
  name: 'federated credential claim conditions',
  statements: (table: (name: 'federated_credentials') => RawBuilder<unknown>): RawBuilder<unknown>[] => [
    sql`alter table ${table('federated_credentials')} add column claims text`,
  ],
} as const;
