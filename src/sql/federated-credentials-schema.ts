/**
 * @module federated-credentials-schema
 * The table of federated credentials in the SQL store (`federated_credentials`) and the self-contained
 * migration that adds it to a database that already holds accounts.
 */
import { sql, type ColumnType, type RawBuilder } from 'kysely';
import type { EpochMillis, NullableEpochMillis } from './column-types.js';
import type { ExpiresAtColumn } from './credential-expiry-schema.js';
import { createCredentialTable } from './credential-table-schema.js';

/**
 * `federated_credentials`: every federated credential of every account, live and revoked: the outside
 * issuer, the one subject it vouches for, and the audience its tokens must carry (`NULL` for the
 * checking server's issuer identifier). At most one live credential per account, issuer, subject and
 * audience (partial unique indexes).
 *
 * @example
 * ```ts
 * const trusted = await db
 *   .selectFrom('federated_credentials')
 *   .select('client_id')
 *   .where('issuer', '=', 'https://token.actions.githubusercontent.com')
 *   .where('subject', '=', 'repo:acme/billing:ref:refs/heads/main')
 *   .where('revoked_at', 'is', null)
 *   .execute()
 * ```
 */
export interface FederatedCredentialsTable {
  id: string;
  client_id: string;
  issuer: string;
  subject: string;
  audience: string | null;
  jwks_uri: string | null;
  created_at: EpochMillis;
  last_used_at: NullableEpochMillis;
  revoked_at: NullableEpochMillis;
  /**
   * The claim conditions as a JSON object of claim names and exact values (schema version 10); `NULL`
   * (a credential from before version 10, or one without conditions) is none.
   */
  claims: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the credential expires (schema version 8); `NULL`: never. */
  expires_at: ExpiresAtColumn;
}

/**
 * The migration that adds federated credentials: a table beside `secrets` and `client_keys`. It only
 * creates a table and indexes, so it applies to a database of any size, with accounts in it, in one
 * short transaction.
 *
 * @example
 * ```ts
 * // Appended after the migrations before it, in src/sql/schema.ts:
 * const latest: number = FEDERATED_CREDENTIALS_MIGRATION.version // 4
 * ```
 */
export const FEDERATED_CREDENTIALS_MIGRATION = {
  version: 4,
  name: 'federated credentials',
  statements: (table: (name: 'accounts' | 'federated_credentials') => RawBuilder<unknown>): RawBuilder<unknown>[] => [
    ...createCredentialTable(table, 'federated_credentials', ['issuer text not null', 'subject text not null', 'audience text', 'jwks_uri text'], '      '),
    // The token endpoint's lookup of an outside token's (iss, sub): live credentials only.
    sql`create index federated_credentials_trust_idx on ${table('federated_credentials')} (issuer, subject) where revoked_at is null`,
    // A live trust is registered once per account, whoever adds it at the same time. Two indexes rather
    // than one over coalesce(audience, ...): a NULL audience (the default) is its own value, never
    // confused with any string, and NULLs would never collide in a plain unique index.
    sql`create unique index federated_credentials_live_trust_idx on ${table('federated_credentials')} (client_id, issuer, subject, audience)
      where revoked_at is null and audience is not null`,
    sql`create unique index federated_credentials_live_default_audience_idx on ${table('federated_credentials')} (client_id, issuer, subject)
      where revoked_at is null and audience is null`,
  ],
} as const;
