/**
 * @module revoked-tokens-schema
 * The token deny-list's table in the SQL store (`revoked_tokens`) and the self-contained migration
 * that adds it to a database that already holds accounts.
 */
import { sql, type RawBuilder } from 'kysely';
import type { EpochMillis } from './column-types.js';

/**
 * `revoked_tokens`: the deny-list of revoked access tokens, by token ID (`jti`); the token itself is never
 * stored. Rows whose `expires_at` has passed are deleted by later revocations. Indexed by expiry (what
 * instances read) and by client and expiry (what a client's cap counts).
 *
 * @example
 * ```ts
 * const live = await db.selectFrom('revoked_tokens').select('token_id').where('expires_at', '>', Date.now()).execute()
 * ```
 */
export interface RevokedTokensTable {
  token_id: string;
  client_id: string | null;
  revoked_at: EpochMillis;
  expires_at: EpochMillis;
}

/**
 * The migration that adds the token deny-list. It only creates a table and an index, so it applies to
 * a database of any size, with accounts in it, in one short transaction.
 *
 * @example
 * ```ts
 * // Appended after the migrations before it, in src/sql/schema.ts:
 * const latest: number = REVOKED_TOKENS_MIGRATION.version // 3
 * ```
 */
export const REVOKED_TOKENS_MIGRATION = {
  version: 3,
  name: 'revoked tokens',
  statements: (table: (name: 'revoked_tokens') => RawBuilder<unknown>): RawBuilder<unknown>[] => [
    sql`create table ${table('revoked_tokens')} (
      token_id text primary key,
      client_id text,
      revoked_at bigint not null,
      expires_at bigint not null)`,
    sql`create index revoked_tokens_expires_at_idx on ${table('revoked_tokens')} (expires_at)`,
  ],
} as const;

/**
 * The migration that indexes the deny-list by client and expiry, so the cap on one client's live
 * entries (`maxRevokedTokensPerClient`) is counted from the index alone, whatever the table's size.
 *
 * @example
 * ```ts
 * // Appended after the migrations before it, in src/sql/schema.ts:
 * const latest: number = REVOKED_TOKENS_CLIENT_INDEX_MIGRATION.version // 6
 * ```
 */
export const REVOKED_TOKENS_CLIENT_INDEX_MIGRATION = {
  version: 6,
  name: 'revoked tokens by client',
  statements: (table: (name: 'revoked_tokens') => RawBuilder<unknown>): RawBuilder<unknown>[] => [
    sql`create index revoked_tokens_client_id_idx on ${table('revoked_tokens')} (client_id, expires_at)`,
  ],
} as const;
