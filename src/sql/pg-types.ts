/**
 * @module pg-types
 * The parts of the `pg` package's pool and clients the PostgreSQL store uses, so `pg` stays an
 * optional dependency (loaded only when the store is first used).
 */
import type { PostgresPool, PostgresPoolClient } from 'kysely';

/**
 * A `NOTIFY` as `pg` delivers it.
 *
 * @example
 * ```ts
 * import pg from 'pg'
 *
 * const client = await new pg.Pool({ connectionString: process.env.DATABASE_URL }).connect()
 * client.on('notification', (message: PgNotification) => console.log(message.channel, message.payload))
 * ```
 */
export interface PgNotification {
  readonly channel: string;
  readonly payload?: string | undefined;
}

/**
 * The part of a `pg` pool client the store uses (a `pg.PoolClient` fits).
 *
 * @example
 * ```ts
 * import pg from 'pg'
 *
 * const client: PgPoolClient = await new pg.Pool().connect()
 * ```
 */
export interface PgPoolClient extends PostgresPoolClient {
  release(error?: Error | boolean): void;
  /** Closes the connection (destroys its socket when a query is in flight). */
  end(): Promise<void>;
  on(event: 'notification', listener: (message: PgNotification) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  removeListener(event: 'notification', listener: (message: PgNotification) => void): unknown;
}

/**
 * The part of a `pg` pool the store uses (a `pg.Pool` fits). The store calls `connect` with a callback,
 * as `pg.Pool` also takes one, and puts its `'error'` listener on the client there, before the client
 * can report a connection the server ends as it opens; a pool that ignores the callback and returns the
 * promise works too, without that guarantee. A wrapper of `pg.Pool` should pass `connect`'s arguments on.
 *
 * @example
 * ```ts
 * import pg from 'pg'
 * import { createPostgresAccountStore, type PgPool } from 'express-service-accounts/sql'
 *
 * const pool: PgPool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 * const store = createPostgresAccountStore({ pool, schema: 'service_accounts' })
 * ```
 */
export interface PgPool extends PostgresPool {
  connect(): Promise<PgPoolClient>;
}
