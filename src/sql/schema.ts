/**
 * @module schema
 * The typed tables of the SQL store and its versioned, idempotent migrations, applied under a lock so
 * that several processes can initialise the same empty database at once.
 */
import { type ColumnType, type Generated, type Kysely, sql, type RawBuilder } from 'kysely';
import type { EpochMillis, NullableEpochMillis, SqlDialectName } from './column-types.js';
import { runWriteTransaction } from './write-transaction.js';
import { KEY_CREDENTIALS_MIGRATION, type ClientKeysTable, type UsedAssertionIdsTable } from './key-credentials-schema.js';
import { REVOKED_TOKENS_CLIENT_INDEX_MIGRATION, REVOKED_TOKENS_MIGRATION, type RevokedTokensTable } from './revoked-tokens-schema.js';
import { FEDERATED_CREDENTIALS_MIGRATION, type FederatedCredentialsTable } from './federated-credentials-schema.js';
import { VERIFIED_DIGEST_MIGRATION } from './verified-digest-schema.js';
import { ACCOUNT_RESOURCES_MIGRATION } from './account-resources-schema.js';
import { ACCOUNT_POLICY_MIGRATION } from './account-policy-schema.js';
import { FEDERATED_CLAIMS_MIGRATION } from './federated-claims-schema.js';
import { CLIENT_ACCOUNT_INDEX_MIGRATION } from './client-account-index-schema.js';
import { CREDENTIAL_EXPIRY_MIGRATION, type ExpiresAtColumn } from './credential-expiry-schema.js';
import { createCredentialTable } from './credential-table-schema.js';

export type { EpochMillis, NullableEpochMillis, SqlDialectName } from './column-types.js';

/**
 * `accounts`: one row per service account.
 *
 * @example
 * ```ts
 * const accounts = await db.selectFrom('accounts').selectAll().where('enabled', '=', 1).execute()
 * ```
 */
export interface AccountsTable {
  client_id: string;
  name: string;
  client_account_id: string | null;
  /** JSON array of scope strings, in the order they were given. */
  scopes: string;
  /**
   * JSON array of the resources its tokens may be for (schema version 7), in the order they were
   * given; `NULL` (an account from before version 7) is none.
   */
  resources: ColumnType<string | null, string | null | undefined, string | null>;
  /** Its access tokens' lifetime in seconds (schema version 9); `NULL`: the server's `tokenLifetime`. */
  access_token_lifetime: ColumnType<number | null, number | null | undefined, number | null>;
  /** 1 when its tokens must be DPoP-bound (RFC 9449 §5.2, schema version 9); 0 or `NULL`: not required. */
  dpop_bound_access_tokens: ColumnType<number | null, number | null | undefined, number | null>;
  /** 1 = enabled, 0 = disabled (an integer on both dialects, so both behave the same). */
  enabled: number;
  created_at: EpochMillis;
}

/**
 * `secrets`: every secret (hash only) of every account, live and revoked.
 *
 * @example
 * ```ts
 * const live = await db.selectFrom('secrets').select('id').where('revoked_at', 'is', null).execute()
 * ```
 */
export interface SecretsTable {
  id: string;
  client_id: string;
  hash: string;
  created_at: EpochMillis;
  last_used_at: NullableEpochMillis;
  revoked_at: NullableEpochMillis;
  /** The secret's `verifiedDigest` (schema version 5); `NULL` until a value passed bcrypt. */
  verified_digest: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the secret expires (schema version 8); `NULL`: never. */
  expires_at: ExpiresAtColumn;
}

/**
 * `account_changes`: the change feed that `watch()` polls. One row per mutation, trimmed after an hour.
 *
 * @example
 * ```ts
 * let last = 0 // the highest seq this process has read
 * const rows = await db.selectFrom('account_changes').select(['seq', 'client_id']).where('seq', '>', last).execute()
 * ```
 */
export interface AccountChangesTable {
  /** Autoincrement (SQLite) / `bigserial` (PostgreSQL); `pg` returns it as a string. */
  seq: Generated<number | string>;
  client_id: string;
  changed_at: EpochMillis;
}

/**
 * `account_store_migrations`: the schema versions applied so far.
 *
 * @example
 * ```ts
 * const applied = await db.selectFrom('account_store_migrations').select('version').execute()
 * ```
 */
export interface MigrationsTable {
  version: number;
  name: string;
  applied_at: EpochMillis;
}

/**
 * The tables of the SQL account store, for `Kysely<Database>`.
 *
 * @example
 * ```ts
 * import BetterSqlite3 from 'better-sqlite3'
 * import { Kysely, SqliteDialect } from 'kysely'
 * import { KyselyAccountStore } from './sql-account-store.js'
 *
 * const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3('accounts.db') }) })
 * const store = new KyselyAccountStore(db, { dialect: 'sqlite' })
 * ```
 */
export interface Database {
  accounts: AccountsTable;
  secrets: SecretsTable;
  client_keys: ClientKeysTable;
  federated_credentials: FederatedCredentialsTable;
  used_assertion_ids: UsedAssertionIdsTable;
  account_changes: AccountChangesTable;
  revoked_tokens: RevokedTokensTable;
  account_store_migrations: MigrationsTable;
}

/**
 * Where the tables live: the dialect and, on PostgreSQL, the schema.
 *
 * @example
 * ```ts
 * await migrateToLatest(db, { dialect: 'postgres', schema: 'service_accounts' } satisfies SchemaLocation)
 * ```
 */
export interface SchemaLocation {
  readonly dialect: SqlDialectName;
  /** PostgreSQL schema; ignored on SQLite. */
  readonly schema: string;
}

interface Migration {
  readonly version: number;
  readonly name: string;
  /** DDL statements, run in order inside the migration transaction. */
  statements(table: (name: keyof Database) => RawBuilder<unknown>, location: SchemaLocation): RawBuilder<unknown>[];
}

/**
 * Key namespace of every advisory lock this library takes on PostgreSQL (first half of the two-int key).
 *
 * @example
 * ```ts
 * import { sql } from 'kysely'
 *
 * await sql`select pg_advisory_xact_lock(hashtext(${ADVISORY_LOCK_NAMESPACE}), hashtext(${'public:migrations'}))`.execute(trx)
 * ```
 */
export const ADVISORY_LOCK_NAMESPACE = 'express-service-accounts';

// Never edit a released migration: append a new one with the next version.
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'accounts, secrets and change feed',
    statements: (t, { dialect }) => [
      sql`create table ${t('accounts')} (
        client_id text primary key,
        name text not null,
        client_account_id text,
        scopes text not null,
        enabled integer not null default 1,
        created_at bigint not null)`,
      sql`create index accounts_created_at_idx on ${t('accounts')} (created_at)`,
      ...createCredentialTable(t, 'secrets', ['hash text not null'], '        '),
      // AUTOINCREMENT: SQLite must never reuse a sequence number, even after the feed was trimmed empty.
      dialect === 'postgres'
        ? sql`create table ${t('account_changes')} (seq bigserial primary key, client_id text not null, changed_at bigint not null)`
        : sql`create table ${t('account_changes')} (seq integer primary key autoincrement, client_id text not null, changed_at bigint not null)`,
      sql`create index account_changes_changed_at_idx on ${t('account_changes')} (changed_at)`,
    ],
  },
  KEY_CREDENTIALS_MIGRATION,
  REVOKED_TOKENS_MIGRATION,
  FEDERATED_CREDENTIALS_MIGRATION,
  VERIFIED_DIGEST_MIGRATION,
  REVOKED_TOKENS_CLIENT_INDEX_MIGRATION,
  ACCOUNT_RESOURCES_MIGRATION,
  CREDENTIAL_EXPIRY_MIGRATION,
  ACCOUNT_POLICY_MIGRATION,
  FEDERATED_CLAIMS_MIGRATION,
  CLIENT_ACCOUNT_INDEX_MIGRATION,
];

/**
 * The version of every migration, in the order they apply: what `account_store_migrations` holds
 * once a database is migrated to the latest schema.
 *
 * @example
 * ```ts
 * const applied = new Set([1, 2, 3]) // the versions account_store_migrations lists
 * const complete = SCHEMA_VERSIONS.every((version) => applied.has(version))
 * ```
 */
export const SCHEMA_VERSIONS: readonly number[] = MIGRATIONS.map((migration) => migration.version);

/**
 * The schema version {@link migrateToLatest} brings a database to.
 *
 * @example
 * ```ts
 * const { version } = await db.selectFrom('account_store_migrations').select((eb) => eb.fn.max('version').as('version')).executeTakeFirstOrThrow()
 * const location: SchemaLocation = { dialect: 'postgres', schema: 'service_accounts' }
 * if (version !== LATEST_SCHEMA_VERSION) await migrateToLatest(db, location)
 * ```
 */
export const LATEST_SCHEMA_VERSION = Math.max(...SCHEMA_VERSIONS);

/**
 * Applies the migrations a database lacks, in one transaction, under a lock: a PostgreSQL transaction
 * advisory lock keyed by the schema, or an SQLite `BEGIN IMMEDIATE` write lock. A second process that
 * arrives meanwhile waits, then finds everything applied. Safe to call any number of times.
 *
 * Why not Kysely's `Migrator`: its SQLite migration lock is a no-op that only guards one connection of
 * one process, so two processes starting on one new SQLite file (the CLI and a server, or several
 * servers) could both run the first migration; and databases created by earlier versions already
 * record their schema version in `account_store_migrations`, which `Migrator` would not read.
 *
 * @example
 * ```ts
 * await migrateToLatest(db, { dialect: 'postgres', schema: 'service_accounts' })
 * ```
 */
export async function migrateToLatest(db: Kysely<Database>, location: SchemaLocation): Promise<void> {
  await migrateTo(db, location, LATEST_SCHEMA_VERSION);
}

/**
 * {@link migrateToLatest}, stopping after schema version `version`: how tests build a database as an
 * earlier release left it.
 *
 * @example
 * ```ts
 * await migrateTo(db, { dialect: 'sqlite', schema: 'public' }, 1) // the schema before key credentials
 * ```
 */
export async function migrateTo(db: Kysely<Database>, location: SchemaLocation, version: number): Promise<void> {
  await runWriteTransaction(db, location.dialect, async (trx) => {
    const table = (name: keyof Database): RawBuilder<unknown> =>
      location.dialect === 'postgres' ? sql.id(location.schema, name) : sql.id(name);
    if (location.dialect === 'postgres') {
      await sql`select pg_advisory_xact_lock(hashtext(${ADVISORY_LOCK_NAMESPACE}), hashtext(${`${location.schema}:migrations`}))`.execute(trx);
      await createSchemaIfMissing(trx, location.schema);
    }
    await sql`create table if not exists ${table('account_store_migrations')} (
      version integer primary key, name text not null, applied_at bigint not null)`.execute(trx);
    const applied = await sql<{ version: number }>`select version from ${table('account_store_migrations')}`.execute(trx);
    const done = new Set(applied.rows.map((row) => Number(row.version)));
    for (const migration of MIGRATIONS) {
      if (done.has(migration.version) || migration.version > version) continue;
      for (const statement of migration.statements(table, location)) await statement.execute(trx);
      await sql`insert into ${table('account_store_migrations')} (version, name, applied_at)
        values (${migration.version}, ${migration.name}, ${Date.now()})`.execute(trx);
    }
  });
}

async function createSchemaIfMissing(trx: Kysely<Database>, schema: string): Promise<void> {
  // Checked first: `create schema if not exists` still needs the CREATE privilege on the database.
  const found = await sql<{ one: number }>`select 1 as one from pg_namespace where nspname = ${schema}`.execute(trx);
  if (found.rows.length === 0) await sql`create schema ${sql.id(schema)}`.execute(trx);
}
