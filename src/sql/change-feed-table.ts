/**
 * @module change-feed-table
 * The SQL side of the change feed: appending a change to `account_changes` inside the transaction that
 * makes it (with a PostgreSQL `NOTIFY` delivered at commit), trimming old entries, and the two reads
 * that {@link ChangeFeed} polls.
 */
import { type Kysely, sql } from 'kysely';
import { toNumber } from './records.js';
import { ADVISORY_LOCK_NAMESPACE, type Database, type SqlDialectName } from './schema.js';

/** Feed rows older than this are deleted by later mutations; watchers read the feed within seconds. */
const FEED_RETENTION_MS = 60 * 60 * 1000;

/**
 * Where changes are appended and announced.
 *
 * @example
 * ```ts
 * const target: ChangeFeedTarget = { dialect: 'postgres', schema: 'service_accounts', notifyChannel: 'service_accounts_changes' }
 * ```
 */
export interface ChangeFeedTarget {
  readonly dialect: SqlDialectName;
  /** PostgreSQL schema of the tables (the advisory lock is per schema); ignored on SQLite. */
  readonly schema: string;
  /** PostgreSQL channel to `NOTIFY` (payload `"<seq>:<clientId>"`); none on SQLite. */
  readonly notifyChannel: string | undefined;
}

/**
 * Appends the change of `clientId` (or a token revocation's change key) to the feed, inside the
 * caller's write transaction `trx`, so that it is seen exactly when the change commits.
 *
 * @example
 * ```ts
 * import { runWriteTransaction } from './write-transaction.js'
 *
 * const target: ChangeFeedTarget = { dialect: 'sqlite', schema: 'public', notifyChannel: undefined }
 * await runWriteTransaction(db, 'sqlite', async (trx) => {
 *   await trx.updateTable('accounts').set({ enabled: 0 }).where('client_id', '=', clientId).execute()
 *   await appendChange(trx, target, clientId)
 * })
 * ```
 */
export async function appendChange(trx: Kysely<Database>, target: ChangeFeedTarget, clientId: string): Promise<void> {
  const now = Date.now();
  if (target.dialect === 'postgres') {
    // Serialise feed appends until commit, so sequence numbers become visible in increasing order
    // and a poll that has seen seq N can never later miss a smaller one.
    await sql`select pg_advisory_xact_lock(hashtext(${ADVISORY_LOCK_NAMESPACE}), hashtext(${`${target.schema}:changes`}))`.execute(trx);
  }
  const { seq } = await trx
    .insertInto('account_changes')
    .values({ client_id: clientId, changed_at: now })
    .returning('seq')
    .executeTakeFirstOrThrow();
  await trx.deleteFrom('account_changes').where('changed_at', '<', now - FEED_RETENTION_MS).execute();
  if (target.notifyChannel !== undefined) {
    // Delivered by PostgreSQL at commit, never for a rolled-back change.
    await sql`select pg_notify(${target.notifyChannel}, ${`${toNumber(seq)}:${clientId}`})`.execute(trx);
  }
}

/**
 * The feed's highest sequence number (0 when empty): where a new watcher starts.
 *
 * @example
 * ```ts
 * const start = await readLatestSeq(db)
 * ```
 */
export async function readLatestSeq(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('account_changes')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .executeTakeFirst();
  return row?.seq == null ? 0 : toNumber(row.seq);
}

/**
 * Feed entries after `after`, in sequence order, at most `limit`.
 *
 * @example
 * ```ts
 * for (const { seq, clientId } of await readSince(db, 41, 100)) console.log(seq, clientId)
 * ```
 */
export async function readSince(db: Kysely<Database>, after: number, limit: number): Promise<{ seq: number; clientId: string; changedAt: number }[]> {
  const rows = await db
    .selectFrom('account_changes')
    .select(['seq', 'client_id', 'changed_at'])
    .where('seq', '>', after)
    .orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ seq: toNumber(row.seq), clientId: row.client_id, changedAt: toNumber(row.changed_at) }));
}
