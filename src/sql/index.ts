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
export { openAccountStore, parseAccountStoreUrl } from './open-account-store.js';
export type { AccountStoreLocation, OpenAccountStoreOptions } from './open-account-store.js';
export { createPostgresAccountStore } from './postgres-account-store.js';
export type { PostgresAccountStoreOptions } from './postgres-account-store.js';
export type { PgPool } from './pg-types.js';
export { createSqliteAccountStore } from './sqlite-account-store.js';
export type { SqliteAccountStoreOptions } from './sqlite-account-store.js';
// The type the factories return; its constructor is not part of the API (use the factories).
export type { SqlAccountStore } from './sql-account-store.js';
