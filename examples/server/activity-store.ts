/**
 * Where the example API keeps its jobs and its activity history: in the same database as the service
 * accounts (its own two tables beside the store's), so every instance sharing the store sees the same
 * history, and a restart loses nothing. A real API would use its own database layer; this one is kept
 * to two tables of JSON text so that it reads the same on SQLite and PostgreSQL.
 *
 * The activity history is kept for a set time (`retentionSeconds`, env `ACTIVITY_RETENTION_SECONDS`):
 * older entries are deleted in the background, a batch at a time, so the table stops growing at the
 * rate it is written times the retention. Jobs are the API's own data and are kept.
 */
import Database from 'better-sqlite3';
import type { AccountStoreLocation } from 'express-service-accounts/sql';
import pg from 'pg';

/** Who did something, by name (every action is attributed to it): a service account or a signed-in person. */
export type Actor =
  | { readonly type: 'service_account'; readonly clientId: string; readonly name: string }
  | { readonly type: 'user'; readonly id: string; readonly name: string };

/** One entry of the activity history. */
export interface ActivityEntry {
  readonly id: string;
  readonly at: string;
  readonly action: 'job.created' | 'token.issued' | 'user.signed_in';
  readonly actor: Actor;
  readonly target?: { readonly type: 'job'; readonly id: string };
}

export interface Job {
  readonly id: string;
  readonly title: string;
  readonly createdAt: string;
  readonly createdBy: Actor;
}

/** The example's own persistence. Lists are newest first and hold the most recent {@link LIST_LIMIT}. */
export interface ActivityStore {
  addJob(job: Job): Promise<void>;
  listJobs(): Promise<Job[]>;
  record(entry: ActivityEntry): Promise<void>;
  list(): Promise<ActivityEntry[]>;
  /** Deletes the activity entries older than the retention at `now` (ms); resolves with how many. */
  prune(now?: number): Promise<number>;
  close(): Promise<void>;
}

export const LIST_LIMIT = 1000;

/** How long activity is kept by default: 7 days. */
export const DEFAULT_ACTIVITY_RETENTION_SECONDS = 7 * 86_400;

/** Rows deleted by one statement, so a large backlog never holds the database in one long delete. */
export const PRUNE_BATCH = 1000;

/** Options of {@link openActivityStore}. */
export interface ActivityStoreOptions {
  /** Seconds an activity entry is kept. @default 604800 (7 days) */
  readonly retentionSeconds?: number;
  /** Milliseconds between background prunes; 0 turns them off (call `prune()` yourself). @default a tenth of the retention, at most 10 minutes */
  readonly pruneEveryMs?: number;
  /** Rows one delete statement removes at most. @default {@link PRUNE_BATCH} */
  readonly pruneBatch?: number;
}

type Table = 'example_jobs' | 'example_activity';
const TABLES = ['example_jobs', 'example_activity'] as const satisfies readonly Table[];

/**
 * The same operations on either database: append a JSON row (an activity row with its time in ms),
 * list the newest rows, delete up to `limit` activity rows older than `before`.
 */
interface Tables {
  add(table: Table, body: string, at: number): Promise<void>;
  newest(table: Table, limit: number): Promise<string[]>;
  deleteActivityBefore(before: number, limit: number): Promise<number>;
  close(): Promise<void>;
}

function activityStore(tables: Tables, options: ActivityStoreOptions): ActivityStore {
  const retentionMs = (options.retentionSeconds ?? DEFAULT_ACTIVITY_RETENTION_SECONDS) * 1000;
  const list = async <T>(table: Table): Promise<T[]> => (await tables.newest(table, LIST_LIMIT)).map((body) => JSON.parse(body) as T);
  const batchSize = options.pruneBatch ?? PRUNE_BATCH;
  let pruning: Promise<number> | undefined;
  const prune = (now = Date.now()): Promise<number> =>
    (pruning ??= (async () => {
      let deleted = 0;
      for (;;) {
        const batch = await tables.deleteActivityBefore(now - retentionMs, batchSize);
        deleted += batch;
        if (batch < batchSize) return deleted;
      }
    })().finally(() => {
      pruning = undefined;
    }));
  const every = options.pruneEveryMs ?? Math.min(retentionMs / 10, 600_000);
  // Every instance prunes; they delete the same old rows, so running together costs a little, never correctness.
  const timer =
    every > 0
      ? setInterval(() => {
          prune().catch((error: unknown) => console.error('error: could not prune activity:', error instanceof Error ? error.message : String(error)));
        }, every)
      : undefined;
  timer?.unref();
  return {
    addJob: (job) => tables.add('example_jobs', JSON.stringify(job), Date.parse(job.createdAt)),
    listJobs: () => list('example_jobs'),
    record: (entry) => tables.add('example_activity', JSON.stringify(entry), Date.parse(entry.at)),
    list: () => list('example_activity'),
    prune,
    close: async () => {
      clearInterval(timer);
      await pruning?.catch(() => undefined);
      await tables.close();
    },
  };
}

function sqliteTables(filename: string): Tables {
  // Opened on first use: by then the account store has created the database file and its folder.
  let opened: ReturnType<typeof openSqlite> | undefined;
  const open = (): ReturnType<typeof openSqlite> => (opened ??= openSqlite(filename));
  return {
    add: async (table, body, at) => {
      open()[table].insert.run(body, at);
    },
    newest: async (table, limit) => open()[table].select.all(limit).map((row) => row.body),
    deleteActivityBefore: async (before, limit) => open().pruneActivity.run(before, limit).changes,
    close: async () => {
      opened?.db.close();
    },
  };
}

function openSqlite(filename: string) {
  const db = new Database(filename);
  db.pragma('busy_timeout = 5000');
  const statements = (table: Table) => {
    // SQLite serialises schema changes itself: instances creating the table at once wait for each other.
    db.exec(`create table if not exists ${table} (seq integer primary key autoincrement, body text not null, at integer)`);
    // Tables made before activity was pruned lack `at`: add it, filled from each row's JSON.
    const columns = db.prepare<[], { name: string }>(`select name from pragma_table_info('${table}')`).all();
    if (!columns.some((column) => column.name === 'at')) {
      db.transaction(() => {
        db.exec(`alter table ${table} add column at integer`);
        const time = table === 'example_jobs' ? '$.createdAt' : '$.at';
        db.exec(`update ${table} set at = cast(round((julianday(json_extract(body, '${time}')) - 2440587.5) * 86400000) as integer)`);
      })();
    }
    return {
      insert: db.prepare<[string, number]>(`insert into ${table} (body, at) values (?, ?)`),
      select: db.prepare<[number], { body: string }>(`select body from ${table} order by seq desc limit ?`),
    };
  };
  const tables = { example_jobs: statements('example_jobs'), example_activity: statements('example_activity') };
  db.exec('create index if not exists example_activity_at_idx on example_activity (at)');
  const pruneActivity = db.prepare<[number, number]>(
    'delete from example_activity where seq in (select seq from example_activity where at < ? order by at limit ?)',
  );
  return { db, ...tables, pruneActivity };
}

/** Key of the advisory lock under which instances create the tables (the demo account's lock is another). */
const TABLES_LOCK_KEY = 'express-service-accounts example: activity tables';

function postgresTables(connectionString: string, schema: string): Tables {
  const pool = new pg.Pool({ connectionString, max: 4, connectionTimeoutMillis: 5000 });
  // A lost connection emits 'error': on the pool for an idle client (the pool replaces it), on the client
  // itself while it is checked out. Unhandled, either would crash the server; the query in flight
  // fails instead, and the request is answered with an error.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const name = (table: Table): string => `"${schema.replaceAll('"', '""')}".${table}`;
  // The store's own migrations create the schema before the server uses this store. Two instances running
  // `create table if not exists` at the same moment can both try to create it (a duplicate key error from
  // PostgreSQL's catalog), so the tables are created in one transaction under an advisory lock.
  const createTables = async (): Promise<void> => {
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query('select pg_advisory_xact_lock(hashtext($1), hashtext($2))', [TABLES_LOCK_KEY, schema]);
      for (const table of TABLES) {
        await client.query(`create table if not exists ${name(table)} (seq bigserial primary key, body text not null)`);
        // Tables made before activity was pruned lack `at`: add it, filled from each row's JSON.
        const time = table === 'example_jobs' ? 'createdAt' : 'at';
        const added = await client.query(`select 1 from information_schema.columns where table_schema = $1 and table_name = $2 and column_name = 'at'`, [schema, table]);
        if (added.rowCount === 0) {
          await client.query(`alter table ${name(table)} add column at bigint`);
          await client.query(`update ${name(table)} set at = (extract(epoch from ((body::json) ->> '${time}')::timestamptz) * 1000)::bigint`);
        }
      }
      await client.query(`create index if not exists example_activity_at_idx on ${name('example_activity')} (at)`);
      await client.query('commit');
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  };
  let ready: Promise<void> | undefined;
  const init = (): Promise<void> =>
    (ready ??= createTables().catch((error: unknown) => {
      ready = undefined; // the next call tries again
      throw error;
    }));
  return {
    add: async (table, body, at) => {
      await init();
      await pool.query(`insert into ${name(table)} (body, at) values ($1, $2)`, [body, at]);
    },
    newest: async (table, limit) => {
      await init();
      const { rows } = await pool.query<{ body: string }>(`select body from ${name(table)} order by seq desc limit $1`, [limit]);
      return rows.map((row) => row.body);
    },
    deleteActivityBefore: async (before, limit) => {
      await init();
      const table = name('example_activity');
      const { rowCount } = await pool.query(`delete from ${table} where seq in (select seq from ${table} where at < $1 order by at limit $2)`, [before, limit]);
      return rowCount ?? 0;
    },
    close: () => pool.end(),
  };
}

/** The activity store beside the account store at `location`; it prunes activity older than the retention in the background. */
export function openActivityStore(location: AccountStoreLocation, options: ActivityStoreOptions = {}): ActivityStore {
  return activityStore(
    location.kind === 'postgres' ? postgresTables(location.connectionString, location.schema ?? 'public') : sqliteTables(location.filename),
    options,
  );
}
