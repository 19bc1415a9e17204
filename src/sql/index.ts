/**
 * @module sql
 * `express-service-accounts/sql`: the SQLite and PostgreSQL account stores. `better-sqlite3` and `pg`
 * are optional peer dependencies, loaded only when a store of their kind is first used.
 *
 * @example
 * ```ts
 * import { openAccountStore } from 'express-service-accounts/sql'
 * const store = openAccountStore('sqlite:./.data/service-accounts.db')
 * ```
 */
export { ALL_ACCOUNTS } from './change-feed.js';
export type { ChangeFeedEntry, ChangeNotifications } from './change-feed.js';
export { openAccountStore, parseAccountStoreUrl } from './open-account-store.js';
export type { AccountStoreLocation, OpenAccountStoreOptions } from './open-account-store.js';
export { createPostgresAccountStore, notificationChannel } from './postgres-account-store.js';
export type { PgNotification, PgPool, PgPoolClient, PostgresAccountStoreOptions } from './postgres-account-store.js';
export { LATEST_SCHEMA_VERSION, migrateToLatest } from './schema.js';
export type {
  AccountChangesTable,
  AccountsTable,
  Database,
  EpochMillis,
  MigrationsTable,
  NullableEpochMillis,
  SchemaLocation,
  SecretsTable,
  SqlDialectName,
} from './schema.js';
export { SqlAccountStore } from './sql-account-store.js';
export type { SqlAccountStoreOptions } from './sql-account-store.js';
export { createSqliteAccountStore } from './sqlite-account-store.js';
export type { SqliteAccountStoreOptions } from './sqlite-account-store.js';
