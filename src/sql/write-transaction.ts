/**
 * @module write-transaction
 * How the SQL stores run a write: one transaction, on SQLite with the write lock taken up front and a
 * busy database retried, on PostgreSQL ended by the server when its client goes silent.
 */
import { type Kysely, sql } from 'kysely';
import type { SqlDialectName } from './column-types.js';

/**
 * Longest a PostgreSQL session of ours may sit idle inside a write transaction before the server ends
 * it. Its statements follow one another, so one that idles has lost its client (a network path that
 * died silently): ended, it releases its locks (the change feed's, a row's), which would otherwise
 * block every instance's writes until the server's TCP keepalive noticed (about 2 hours by default).
 */
const WRITE_TRANSACTION_IDLE_LIMIT_MS = 10_000;

/**
 * Runs `work` in a write transaction. SQLite: `BEGIN IMMEDIATE` takes the write lock up front (a deferred
 * transaction that later writes can fail with `SQLITE_BUSY` without waiting), and a busy database is
 * retried with backoff while the connection's `busy_timeout` (`busyTimeoutMs` when the caller knows it,
 * else read from the connection), counted from the first attempt, lasts.
 * PostgreSQL: an ordinary transaction, which the server ends when it idles
 * {@link WRITE_TRANSACTION_IDLE_LIMIT_MS}.
 *
 * @example
 * ```ts
 * await runWriteTransaction(db, 'sqlite', (trx) => trx.deleteFrom('account_changes').execute())
 * ```
 */
export async function runWriteTransaction<DB, T>(
  db: Kysely<DB>,
  dialect: SqlDialectName,
  work: (trx: Kysely<DB>) => Promise<T>,
  busyTimeoutMs?: number,
): Promise<T> {
  if (dialect === 'postgres') {
    return db.transaction().execute(async (trx) => {
      await sql.raw(`set local idle_in_transaction_session_timeout = ${WRITE_TRANSACTION_IDLE_LIMIT_MS}`).execute(trx);
      return work(trx);
    });
  }
  const started = Date.now();
  // The connection's busy_timeout (read on the first attempt when not given): the whole write waits no longer than that.
  let budgetMs = busyTimeoutMs ?? 0;
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.connection().execute(async (connection) => {
        if (attempt === 1 && busyTimeoutMs === undefined) budgetMs = await readBusyTimeout(connection);
        await sql`begin immediate`.execute(connection);
        try {
          const result = await work(connection);
          await sql`commit`.execute(connection);
          return result;
        } catch (error) {
          await sql`rollback`.execute(connection).catch(() => undefined);
          throw error;
        }
      });
    } catch (error) {
      // Retried only within the budget: an attempt that already waited out busy_timeout (SQLite's busy
      // handler blocks the event loop meanwhile) is final, so a held lock never costs eight such waits.
      if (!isSqliteBusy(error) || attempt >= SQLITE_BUSY_ATTEMPTS || Date.now() - started + 25 * attempt >= budgetMs) throw error;
      await delay(25 * attempt);
    }
  }
}

const SQLITE_BUSY_ATTEMPTS = 8;

/** The connection's `busy_timeout` in milliseconds (0 when SQLite does not say). */
async function readBusyTimeout<DB>(connection: Kysely<DB>): Promise<number> {
  const { rows } = await sql<{ timeout?: unknown }>`pragma busy_timeout`.execute(connection);
  const timeout = Number(rows[0]?.timeout);
  return Number.isFinite(timeout) ? timeout : 0;
}

/**
 * Whether an error is SQLite's "database is locked" (`SQLITE_BUSY`, `SQLITE_BUSY_SNAPSHOT`, ...).
 *
 * @example
 * ```ts
 * declare const write: () => Promise<void> // one write transaction
 * await write().catch(async (error: unknown) => {
 *   if (isSqliteBusy(error)) await write() // another connection held the lock: try again
 *   else throw error
 * })
 * ```
 */
export function isSqliteBusy(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    typeof error.code === 'string' &&
    error.code.startsWith('SQLITE_BUSY')
  );
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
