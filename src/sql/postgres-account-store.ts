/**
 * @module postgres-account-store
 * `createPostgresAccountStore()`: the SQL store on PostgreSQL through `pg`, loaded only when the store
 * is first used, with `LISTEN`/`NOTIFY` for near-instant change delivery.
 */
import { createHash } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import { integer } from '../config-checks.js';
import type { Database } from './schema.js';
import { onceUntilSuccess } from '../runtime/init-store.js';
import { guardClients } from './pg-client-guard.js';
import { pgNotifications } from './pg-notifications.js';
import type { PgPool } from './pg-types.js';
import { KyselyAccountStore, type SqlAccountStore } from './sql-account-store.js';
import { MissingDriverError } from '../store/missing-driver-error.js';

/**
 * Options of {@link createPostgresAccountStore}.
 *
 * @example
 * ```ts
 * createPostgresAccountStore({ connectionString: process.env.DATABASE_URL, schema: 'service_accounts', listen: true })
 * ```
 */
export interface PostgresAccountStoreOptions {
  /** `postgres://user:password@host:5432/database`. Needed unless `pool` is given. */
  readonly connectionString?: string;
  /**
   * Schema holding the tables, created by `init()` when missing. A dedicated schema keeps the generic
   * table names (`accounts`, `secrets`, ...) away from the host's own.
   * @default 'public'
   */
  readonly schema?: string;
  /**
   * An existing `pg.Pool` to use instead of creating one. The store never ends it (you do), and holds one
   * of its clients while someone watches. The clients the store checks out carry their own `'error'`
   * listener; give the pool one too (`pool.on('error', ...)`, as `pg` asks), for its idle clients.
   */
  readonly pool?: PgPool;
  /**
   * How often `watch()` polls the change feed, in milliseconds (the safety net behind `LISTEN`). When no
   * poll has succeeded for `pollIntervalMs + 200` ms, listeners get `'*'`, so a revocation takes effect within `pollIntervalMs + 200` ms: at most 800 keeps the 1-second bound (docs/security.md).
   * @default 200
   */
  readonly pollIntervalMs?: number;
  /**
   * Whether `watch()` also `LISTEN`s for changes. Mutations always `NOTIFY`, for other processes.
   * @default true
   */
  readonly listen?: boolean;
  /**
   * Longest a query may go unanswered, in milliseconds. The server is then asked to cancel it, and
   * the query fails and its connection is closed once the server has taken the cancellation (within
   * 1 s more when the server cannot be reached); the next query gets a fresh connection. This is what
   * frees the pool when a connection went silent without closing (the database failed over to another
   * address, a firewall drops the connection's packets): otherwise its query would wait, and hold its
   * pooled client and `close()`, until TCP gives up, about 15 minutes on Linux. Keep it above `storeTimeout` and above your slowest query, including the schema changes
   * `init()` makes on your tables. While the store closes, a query gets 1 s more before it is
   * cancelled (docs/stores.md, "Connections that go silent").
   * @default 30000
   */
  readonly queryTimeoutMs?: number;
  /** Told about background failures of `watch()`. @default ignore */
  readonly onWatchError?: (error: unknown) => void;
}

/**
 * Creates an {@link SqlAccountStore} on PostgreSQL. No connection is opened until first use; `init()`
 * then creates the schema and tables under an advisory lock. `close()` ends the pool it created.
 *
 * @example
 * ```ts
 * const store = createPostgresAccountStore({
 *   connectionString: process.env.DATABASE_URL,
 *   schema: 'service_accounts',
 * })
 * ```
 */
export function createPostgresAccountStore(options: PostgresAccountStoreOptions): SqlAccountStore {
  const { pool: givenPool, connectionString } = options;
  if (!givenPool && !connectionString) {
    throw new TypeError('createPostgresAccountStore needs a connectionString or a pool');
  }
  const schema = checkSchemaName(options.schema ?? 'public', 'createPostgresAccountStore: schema');
  // At most the longest delay a Node.js timer keeps (about 24.8 days).
  const queryTimeoutMs = integer('queryTimeoutMs', options.queryTimeoutMs, 30_000, 1, 2 ** 31 - 1);
  // Created on first use; a failure (pg not installed) is retried by the next use.
  const getPool = onceUntilSuccess(async (): Promise<PgPool> => {
    const pool = givenPool ?? (await createPool(connectionString ?? ''));
    // A given pool belongs to the caller: Kysely's destroy() must not end it.
    return guardClients(pool, { ownsPool: !givenPool, queryTimeoutMs });
  });
  const channel = notificationChannel(schema);
  return new KyselyAccountStore(new Kysely<Database>({ dialect: new PostgresDialect({ pool: getPool }) }), {
    dialect: 'postgres',
    schema,
    destroyOnClose: true,
    notifyChannel: channel,
    ...(options.listen !== false && { notifications: pgNotifications(getPool, channel) }),
    ...(options.pollIntervalMs !== undefined && { pollIntervalMs: options.pollIntervalMs }),
    ...(options.onWatchError !== undefined && { onWatchError: options.onWatchError }),
  });
}

/**
 * Returns `schema`, or throws a `TypeError` (prefixed with `where`) when it is empty or one of
 * PostgreSQL's own (`information_schema`, or any `pg_` name), where the tables must not go.
 *
 * @example
 * ```ts
 * checkSchemaName('service_accounts', 'schema') // 'service_accounts'
 * checkSchemaName('information_schema', 'schema') // throws TypeError
 * ```
 */
export function checkSchemaName(schema: string, where: string): string {
  if (schema === '') throw new TypeError(`${where} must not be empty`);
  if (schema === 'information_schema' || schema.startsWith('pg_')) {
    throw new TypeError(`${where} "${schema}" is one of PostgreSQL's own schemas: name one of yours, such as service_accounts`);
  }
  return schema;
}

/**
 * The `NOTIFY` channel of a schema: `<schema>_account_changes`, or a hashed name when that would exceed
 * PostgreSQL's 63-byte identifier limit (`pg_notify` rejects longer names, `LISTEN` truncates them).
 *
 * @example
 * ```ts
 * notificationChannel('public') // 'public_account_changes'
 * ```
 */
export function notificationChannel(schema: string): string {
  const channel = `${schema}_account_changes`;
  if (Buffer.byteLength(channel) <= 63) return channel;
  return `esa_account_changes_${createHash('sha256').update(schema).digest('hex').slice(0, 32)}`;
}

async function createPool(connectionString: string): Promise<PgPool> {
  let Pool: typeof import('pg').Pool;
  try {
    ({ Pool } = (await import('pg')).default);
  } catch (error) {
    throw new MissingDriverError('PostgreSQL account store', 'pg', { cause: error });
  }
  // allowExitOnIdle: a CLI run must not hang on idle connections. connectionTimeoutMillis: a server
  // that drops packets fails a call within seconds (answered 503) instead of waiting for TCP to give up.
  // keepAlive: an idle pooled connection whose peer silently vanished is found and closed by TCP
  // keepalive probes (after the system's probe count and interval), instead of never. (The LISTEN
  // connection, idle too, is also checked by the store itself: pg-notifications.ts.)
  const pool = new Pool({
    connectionString,
    allowExitOnIdle: true,
    connectionTimeoutMillis: 5000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle client losing its connection emits 'error' on the pool; unhandled, it would crash the
  // process. The next query reports the outage instead.
  pool.on('error', () => undefined);
  return pool;
}
