/**
 * Fresh PostgreSQL schemas on POSTGRES_URL, one per store or test, and their clean-up in one place:
 * every schema named here is dropped (with everything in it) once the tests of the file have run,
 * even after a failure, or earlier with `drop()`. Call `usePostgresSchemas()` while declaring tests
 * (in the body given to `withPostgres`), so its `afterAll` belongs to them.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';

export interface PostgresSchemas {
  /** A unique schema name, `prefix` then 12 hex digits. Not created: the stores' migrations create it. */
  name(prefix?: string): string;
  /** Creates `schema` (named by {@link PostgresSchemas.name}) now, for code that expects it to exist. */
  create(schema: string): Promise<void>;
  /** The connection string with `?schema=`, as `openAccountStore`, the CLI and the example server take it. */
  url(schema: string): string;
  /** Drops `schema` now (after its stores are closed), rather than at the end of the file. */
  drop(schema: string): Promise<void>;
  /** Runs one statement on a small pool of the test's own, closed at the end of the file. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
}

/** `name` quoted as an SQL identifier (for capitals, spaces and quotes). */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The schemas of one test file on the database at `connectionString`.
 *
 * @example
 * ```ts
 * withPostgres('my store tests', (connectionString) => {
 *   const schemas = usePostgresSchemas(connectionString);
 *   it('works', async () => {
 *     const store = createPostgresAccountStore({ connectionString, schema: schemas.name() });
 *   });
 * });
 * ```
 */
export function usePostgresSchemas(connectionString: string): PostgresSchemas {
  let pool: pg.Pool | undefined;
  const admin = (): pg.Pool => (pool ??= new pg.Pool({ connectionString, max: 2 }));
  const named = new Set<string>();

  const schemas: PostgresSchemas = {
    name(prefix = 'esa_test_') {
      const schema = `${prefix}${randomBytes(6).toString('hex')}`;
      named.add(schema);
      return schema;
    },
    async create(schema) {
      await admin().query(`create schema ${quoteIdentifier(schema)}`);
    },
    url(schema) {
      const url = new URL(connectionString);
      url.searchParams.set('schema', schema);
      return url.toString();
    },
    async drop(schema) {
      await admin().query(`drop schema if exists ${quoteIdentifier(schema)} cascade`);
      named.delete(schema);
    },
    query(sql, params) {
      return admin().query(sql, params);
    },
  };

  afterAll(async () => {
    try {
      for (const schema of [...named]) await schemas.drop(schema);
    } finally {
      await pool?.end();
    }
  });
  return schemas;
}
