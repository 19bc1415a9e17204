/**
 * @module client-account-index-schema
 * The migration that indexes accounts by client account, so one client account's list
 * (`listAccounts({ clientAccountId })`, what the admin router asks for an administrator of one client
 * account) reads that client account's rows only, however many accounts others hold.
 */
import { sql, type RawBuilder } from 'kysely';

/**
 * Adds the index `accounts (client_account_id, created_at, client_id)`: the filter and the list's
 * order in one. It creates an index only, so it applies to a database of any size in one short
 * transaction (writes to `accounts` wait while it is built: a few milliseconds per thousand accounts).
 *
 * @example
 * ```ts
 * // Appended after the migrations before it, in src/sql/schema.ts:
 * const latest: number = CLIENT_ACCOUNT_INDEX_MIGRATION.version // 11
 * ```
 */
export const CLIENT_ACCOUNT_INDEX_MIGRATION = {
  version: 11,
  name: 'accounts by client account',
  statements: (table: (name: 'accounts') => RawBuilder<unknown>): RawBuilder<unknown>[] => [
    sql`create index accounts_client_account_id_idx on ${table('accounts')} (client_account_id, created_at, client_id)`,
  ],
} as const;
