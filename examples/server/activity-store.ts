/**
 * Where the example API keeps its jobs and its activity history: in the same database as the service
 * accounts (its own two tables beside the store's), so every instance sharing the store sees the same
 * history, and a restart loses nothing. A real API would use its own database layer; this one is kept
 * to two tables of JSON text so that it reads the same on SQLite and PostgreSQL.
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
  close(): Promise<void>;
}

export const LIST_LIMIT = 1000;

type Table = 'example_jobs' | 'example_activity';
const TABLES = ['example_jobs', 'example_activity'] as const satisfies readonly Table[];

/** The same two operations on either database: append a JSON row, list the newest rows. */
interface Tables {
  add(table: Table, body: string): Promise<void>;
  newest(table: Table, limit: number): Promise<string[]>;
  close(): Promise<void>;
}

function activityStore(tables: Tables): ActivityStore {
  const list = async <T>(table: Table): Promise<T[]> => (await tables.newest(table, LIST_LIMIT)).map((body) => JSON.parse(body) as T);
  return {
    addJob: (job) => tables.add('example_jobs', JSON.stringify(job)),
    listJobs: () => list('example_jobs'),
    record: (entry) => tables.add('example_activity', JSON.stringify(entry)),
    list: () => list('example_activity'),
    close: () => tables.close(),
  };
}

function sqliteTables(filename: string): Tables {
  // Opened on first use: by then the account store has created the database file and its folder.
  let opened: ReturnType<typeof openSqlite> | undefined;
  const open = (): ReturnType<typeof openSqlite> => (opened ??= openSqlite(filename));
  return {
    add: async (table, body) => {
      open()[table].insert.run(body);
    },
    newest: async (table, limit) => open()[table].select.all(limit).map((row) => row.body),
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
    db.exec(`create table if not exists ${table} (seq integer primary key autoincrement, body text not null)`);
    return {
      insert: db.prepare<[string]>(`insert into ${table} (body) values (?)`),
      select: db.prepare<[number], { body: string }>(`select body from ${table} order by seq desc limit ?`),
    };
  };
  return { db, example_jobs: statements('example_jobs'), example_activity: statements('example_activity') };
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
      for (const table of TABLES) await client.query(`create table if not exists ${name(table)} (seq bigserial primary key, body text not null)`);
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
    add: async (table, body) => {
      await init();
      await pool.query(`insert into ${name(table)} (body) values ($1)`, [body]);
    },
    newest: async (table, limit) => {
      await init();
      const { rows } = await pool.query<{ body: string }>(`select body from ${name(table)} order by seq desc limit $1`, [limit]);
      return rows.map((row) => row.body);
    },
    close: () => pool.end(),
  };
}

/** The activity store beside the account store at `location`. */
export function openActivityStore(location: AccountStoreLocation): ActivityStore {
  return activityStore(
    location.kind === 'postgres' ? postgresTables(location.connectionString, location.schema ?? 'public') : sqliteTables(location.filename),
  );
}
