/**
 * @module write-transaction
 * How the SQL stores run a write: one transaction (or one bookkeeping statement), on SQLite with the
 * write lock taken up front and a busy database waited for without blocking the event loop, on
 * PostgreSQL ended by the server when its client goes silent.
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
 * waited for as {@link runWriteStatement} says. PostgreSQL: an ordinary transaction, which the server
 * ends when it idles {@link WRITE_TRANSACTION_IDLE_LIMIT_MS}.
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
  return whileSqliteBusy(db, busyTimeoutMs, async (connection, budgetMs) => {
    await withoutBusyWait(connection, budgetMs, () => sql`begin immediate`.execute(connection));
    try {
      const result = await work(connection);
      await sql`commit`.execute(connection);
      return result;
    } catch (error) {
      await sql`rollback`.execute(connection).catch(() => undefined);
      throw error;
    }
  });
}

/**
 * Runs one writing statement outside a transaction (bookkeeping such as a credential's last use).
 * PostgreSQL: as it is. SQLite: asked for without SQLite's own busy wait, which would block the event
 * loop (the driver is synchronous) for as long as another process holds the write lock; a busy
 * database is tried again after a pause, with the event loop free meanwhile, while the connection's
 * `busy_timeout` (`busyTimeoutMs` when the caller knows it, else read from the connection), counted
 * from the first try, lasts.
 *
 * @example
 * ```ts
 * await runWriteStatement(db, 'sqlite', (conn) => conn.deleteFrom('used_assertion_ids').where('expires_at', '<=', Date.now()).execute())
 * ```
 */
export function runWriteStatement<DB, T>(db: Kysely<DB>, dialect: SqlDialectName, work: (connection: Kysely<DB>) => Promise<T>, busyTimeoutMs?: number): Promise<T> {
  if (dialect === 'postgres') return work(db);
  return whileSqliteBusy(db, busyTimeoutMs, (connection, budgetMs) => withoutBusyWait(connection, budgetMs, () => work(connection)));
}

/** Longest pause between two tries for a busy SQLite database's write lock. */
const MAX_BUSY_PAUSE_MS = 100;

/**
 * Runs `attempt` on one connection, again after a pause (longer each time, up to
 * {@link MAX_BUSY_PAUSE_MS}, as SQLite's own busy handler pauses) while it fails with `SQLITE_BUSY` and
 * the budget lasts.
 */
async function whileSqliteBusy<DB, T>(db: Kysely<DB>, busyTimeoutMs: number | undefined, attempt: (connection: Kysely<DB>, budgetMs: number) => Promise<T>): Promise<T> {
  const started = Date.now();
  // The connection's busy_timeout (read on the first try when not given): the whole write waits no longer than that.
  let budgetMs = busyTimeoutMs;
  for (let tries = 1; ; tries++) {
    try {
      return await db.connection().execute(async (connection) => {
        budgetMs ??= await readBusyTimeout(connection);
        return attempt(connection, budgetMs);
      });
    } catch (error) {
      const remaining = (budgetMs ?? 0) - (Date.now() - started);
      if (!isSqliteBusy(error) || remaining <= 0) throw error;
      await delay(Math.min(25 * tries, MAX_BUSY_PAUSE_MS, remaining));
    }
  }
}

/** Runs `statement` with the connection's busy_timeout at 0 (fails at once on a held lock), then `budgetMs` again. */
async function withoutBusyWait<DB, T>(connection: Kysely<DB>, budgetMs: number, statement: () => Promise<T>): Promise<T> {
  await sql`pragma busy_timeout = 0`.execute(connection);
  try {
    return await statement();
  } finally {
    await sql.raw(`pragma busy_timeout = ${Math.floor(budgetMs)}`).execute(connection);
  }
}

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
