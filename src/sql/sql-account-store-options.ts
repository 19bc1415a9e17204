/**
 * @module sql-account-store-options
 * The options of the SQL store's implementation (`KyselyAccountStore`), which the store factories fill in.
 */
import type { ChangeNotifications } from './change-feed.js';
import type { SqlDialectName } from './schema.js';

/**
 * Options of `KyselyAccountStore`. The factories `createSqliteAccountStore` and
 * `createPostgresAccountStore` fill them in.
 *
 * @example
 * ```ts
 * import { KyselyAccountStore } from './sql-account-store.js'
 *
 * new KyselyAccountStore(db, { dialect: 'postgres', schema: 'service_accounts', pollIntervalMs: 500 })
 * ```
 */
export interface SqlAccountStoreOptions {
  /** Which SQL the database speaks. */
  readonly dialect: SqlDialectName;
  /**
   * PostgreSQL schema holding the tables, created by `init()` when missing. Ignored on SQLite.
   * @default 'public'
   */
  readonly schema?: string;
  /**
   * How often `watch()` polls the change feed, in milliseconds. When no poll has succeeded for
   * `pollIntervalMs + 200` ms, listeners get `'*'`, so a revocation takes effect within `pollIntervalMs + 200` ms: at most 800 keeps the 1-second bound (docs/security.md).
   * @default 200
   */
  readonly pollIntervalMs?: number;
  /** PostgreSQL: channel every mutation `NOTIFY`s (payload `"<seq>:<clientId>"`) inside its transaction. */
  readonly notifyChannel?: string;
  /** A push channel `watch()` listens on besides polling (PostgreSQL `LISTEN`). */
  readonly notifications?: ChangeNotifications;
  /**
   * Whether `close()` destroys the Kysely instance (and so its pool or SQLite handle).
   * @default false (the caller created it, the caller destroys it)
   */
  readonly destroyOnClose?: boolean;
  /**
   * SQLite: the `busy_timeout` the connection was opened with, in milliseconds, which bounds how long a
   * write retries a busy database. Read from the connection on each write when absent.
   */
  readonly busyTimeoutMs?: number;
  /** Told about background failures of `watch()` (poll, push, a throwing listener). @default ignore */
  readonly onWatchError?: (error: unknown) => void;
}
