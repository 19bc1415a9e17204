/**
 * Where the example API keeps its jobs and its activity history: in the same database as the service
 * accounts (its own two tables beside the store's), so every instance sharing the store sees the same
 * history, and a restart loses nothing. A real API would use its own database layer; this one is kept
 * to two tables of JSON text so that it reads the same on SQLite and PostgreSQL.
 */
import Database from 'better-sqlite3';
import type { AccountStoreLocation } from 'express-service-accounts/sql';
import pg from 'pg';

/** Who did something: the service account, by name (SPEC §1: actions are attributed to its name). */
export interface Actor {
  readonly type: 'service_account';
  readonly clientId: string;
  readonly name: string;
}

/** One entry of the activity history. */
export interface ActivityEntry {
  readonly id: string;
  readonly at: string;
  readonly action: 'job.created' | 'token.issued';
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
  close(): Promise<void>;
}

export const LIST_LIMIT = 1000;

type Table = 'example_jobs' | 'example_activity';

function sqliteStore(filename: string): ActivityStore {
  // Opened on first use: by then the account store has created the database file and its folder.
  let opened: ReturnType<typeof openSqlite> | undefined;
  const open = (): ReturnType<typeof openSqlite> => (opened ??= openSqlite(filename));
  const add = async (table: Table, value: unknown): Promise<void> => {
    open().statements[table].insert.run(JSON.stringify(value));
  };
  const list = async <T>(table: Table): Promise<T[]> =>
    open().statements[table].select.all(LIST_LIMIT).map((row) => JSON.parse(row.body) as T);
  return {
    addJob: (job) => add('example_jobs', job),
    listJobs: () => list('example_jobs'),
    record: (entry) => add('example_activity', entry),
    list: () => list('example_activity'),
    close: async () => {
      opened?.db.close();
    },
  };
}

function openSqlite(filename: string) {
  const db = new Database(filename);
  db.pragma('busy_timeout = 5000');
  for (const table of ['example_jobs', 'example_activity'] satisfies Table[]) {
    db.exec(`create table if not exists ${table} (seq integer primary key autoincrement, body text not null)`);
  }
  const insert = (table: Table) => db.prepare<[string]>(`insert into ${table} (body) values (?)`);
  const select = (table: Table) => db.prepare<[number], { body: string }>(`select body from ${table} order by seq desc limit ?`);
  const statements = {
    example_jobs: { insert: insert('example_jobs'), select: select('example_jobs') },
    example_activity: { insert: insert('example_activity'), select: select('example_activity') },
  };
  return { db, statements };
}

function postgresStore(connectionString: string, schema: string): ActivityStore {
  const pool = new pg.Pool({ connectionString, max: 4, connectionTimeoutMillis: 5000 });
  pool.on('error', () => {}); // an idle client's lost connection: the pool replaces it
  const name = (table: Table): string => `"${schema.replaceAll('"', '""')}".${table}`;
  let ready: Promise<unknown> | undefined;
  // The store's own migrations create the schema before the server uses this store.
  const init = (): Promise<unknown> =>
    (ready ??= Promise.all(
      (['example_jobs', 'example_activity'] satisfies Table[]).map((table) =>
        pool.query(`create table if not exists ${name(table)} (seq bigserial primary key, body text not null)`),
      ),
    ).catch((error: unknown) => {
      ready = undefined;
      throw error;
    }));
  const add = async (table: Table, value: unknown): Promise<void> => {
    await init();
    await pool.query(`insert into ${name(table)} (body) values ($1)`, [JSON.stringify(value)]);
  };
  const list = async <T>(table: Table): Promise<T[]> => {
    await init();
    const { rows } = await pool.query<{ body: string }>(`select body from ${name(table)} order by seq desc limit $1`, [LIST_LIMIT]);
    return rows.map((row) => JSON.parse(row.body) as T);
  };
  return {
    addJob: (job) => add('example_jobs', job),
    listJobs: () => list('example_jobs'),
    record: (entry) => add('example_activity', entry),
    list: () => list('example_activity'),
    close: () => pool.end(),
  };
}

/** The activity store beside the account store at `location`. */
export function openActivityStore(location: AccountStoreLocation): ActivityStore {
  return location.kind === 'postgres' ? postgresStore(location.connectionString, location.schema ?? 'public') : sqliteStore(location.filename);
}
