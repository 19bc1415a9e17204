/**
 * @module postgres
 * The benchmark's PostgreSQL: reachability and throw-away schemas (dropped before and after a run,
 * created by the store's own `init()`).
 */
import pg from 'pg';

export const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Runs `work` with one connection, closed afterwards. */
export async function withPostgres<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Whether PostgreSQL answers; the reason when it does not. */
export async function postgresAvailable(): Promise<{ ok: true } | { ok: false; reason: string }> {
  try {
    await withPostgres((c) => c.query('select 1'));
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : String(err) };
  }
}

/** Drops a benchmark schema (names are ours, never user input). */
export async function dropSchema(schema: string): Promise<void> {
  if (!/^bench_[a-z0-9_]+$/.test(schema)) throw new TypeError(`refusing to drop schema ${schema}`);
  await withPostgres((c) => c.query(`drop schema if exists ${schema} cascade`));
}

/** The store URL of a schema (the `schema` parameter is read by `openAccountStore`). */
export function schemaUrl(schema: string): string {
  return `${POSTGRES_URL}${POSTGRES_URL.includes('?') ? '&' : '?'}schema=${schema}`;
}
