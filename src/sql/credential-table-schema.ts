/**
 * @module credential-table-schema
 * The statements that create a credential table (`secrets`, `client_keys`, `federated_credentials`),
 * written once for the migrations that added each: the columns every kind shares around the kind's
 * own, and the index of an account's credentials in the order they were created.
 */
import { sql, type RawBuilder } from 'kysely';

/** The tables that hold credentials: each has `id`, `client_id`, `created_at`, `last_used_at` and `revoked_at`. */
export type CredentialTableName = 'secrets' | 'client_keys' | 'federated_credentials';

/**
 * `create table` of a credential table and its index on `(client_id, created_at)`: `id`, `client_id`
 * (deleted with its account), the kind's `own` columns, then `created_at`, `last_used_at` and
 * `revoked_at`. A migration is never edited once released, and SQLite keeps the text of a `create
 * table` as it ran: `indent` is the one each released migration wrote its columns with, so every
 * schema version still runs (and stores) the same text.
 *
 * @example
 * ```ts
 * import { sql } from 'kysely'
 *
 * // What migration 2 runs first, on SQLite (PostgreSQL qualifies the tables with the schema):
 * const [createTable, createIndex] = createCredentialTable((name) => sql.id(name), 'client_keys', ['thumbprint text not null', 'public_jwk text not null'], '      ')
 * ```
 */
export function createCredentialTable<N extends CredentialTableName>(
  table: (name: 'accounts' | N) => RawBuilder<unknown>,
  name: N,
  own: readonly string[],
  indent: string,
): RawBuilder<unknown>[] {
  const columns = (definitions: readonly string[]) => sql.raw(definitions.map((definition) => `\n${indent}${definition}`).join(','));
  return [
    sql`create table ${table(name)} (${columns(['id text primary key', 'client_id text not null references '])}${table('accounts')} (client_id) on delete cascade,${columns([
      ...own,
      'created_at bigint not null',
      'last_used_at bigint',
      'revoked_at bigint',
    ])})`,
    sql`create index ${sql.raw(`${name}_client_id_idx`)} on ${table(name)} (client_id, created_at)`,
  ];
}
