/**
 * @module account-policy-schema
 * The migration that lets the SQL store keep an account's token policy: its access token lifetime
 * and whether its tokens must be DPoP-bound (RFC 9449 §5.2; docs/account-policy.md).
 */
import { sql, type RawBuilder } from 'kysely';

/**
 * Adds the nullable columns `accounts.access_token_lifetime` (seconds) and
 * `accounts.dpop_bound_access_tokens` (1 or 0). Adding nullable columns without a default rewrites no
 * row on SQLite or PostgreSQL, so it applies to a database of any size in one short transaction;
 * existing accounts read `NULL` as the server's lifetime and as tokens that need no DPoP proof, as before.
 *
 * @example
 * ```ts
 * // Appended after the migrations before it, in src/sql/schema.ts:
 * const latest: number = ACCOUNT_POLICY_MIGRATION.version // 9
 * ```
 */
export const ACCOUNT_POLICY_MIGRATION = {
  version: 9,
  name: 'account token policy',
  statements: (table: (name: 'accounts') => RawBuilder<unknown>): RawBuilder<unknown>[] => [
    sql`alter table ${table('accounts')} add column access_token_lifetime integer`,
    sql`alter table ${table('accounts')} add column dpop_bound_access_tokens integer`,
  ],
} as const;
