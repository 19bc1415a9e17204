/**
 * @module sql-credentials-context
 * What the SQL store's credential modules (secrets, public keys, federated credentials) need from the
 * store they belong to: its database, dialect, writes and change feed.
 */
import type { Kysely } from 'kysely';
import type { Database, SqlDialectName } from './schema.js';

/**
 * The store's database, dialect, writes and change feed, as the credential modules use them.
 *
 * @example
 * ```ts
 * import { runWriteStatement, runWriteTransaction } from './write-transaction.js'
 * import { SqlAssertionIds } from './sql-assertion-ids.js'
 *
 * const context: SqlCredentialsContext = {
 *   db,
 *   dialect: 'sqlite',
 *   write: (work) => runWriteTransaction(db, 'sqlite', work),
 *   writeStatement: (work) => runWriteStatement(db, 'sqlite', work),
 *   // A sketch: the SQL store's own also trims the feed and, on PostgreSQL, notifies listeners.
 *   async appendChange(trx, clientId) {
 *     await trx.insertInto('account_changes').values({ client_id: clientId, changed_at: Date.now() }).execute()
 *   },
 * }
 * const assertionIds = new SqlAssertionIds(context)
 * ```
 */
export interface SqlCredentialsContext {
  readonly db: Kysely<Database>;
  readonly dialect: SqlDialectName;
  /** Runs `work` in a write transaction (`BEGIN IMMEDIATE` on SQLite). */
  write<T>(work: (trx: Kysely<Database>) => Promise<T>): Promise<T>;
  /** Runs one writing statement outside a transaction (on SQLite, a busy database waited for without blocking). */
  writeStatement<T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T>;
  /** Appends the account's change to the feed, inside the transaction `trx`. */
  appendChange(trx: Kysely<Database>, clientId: string): Promise<void>;
}
