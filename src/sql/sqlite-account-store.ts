/**
 * @module sqlite-account-store
 * `createSqliteAccountStore()`: the SQL store on a SQLite file through better-sqlite3, loaded only
 * when the store is first used, so the core works without it installed.
 */
import { mkdir, open, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Kysely, SqliteDialect, type SqliteDatabase } from 'kysely';
import type { Database } from './schema.js';
import { isSqliteBusy } from './write-transaction.js';
import { KyselyAccountStore, type SqlAccountStore } from './sql-account-store.js';
import { MissingDriverError } from '../store/missing-driver-error.js';

/**
 * Options of {@link createSqliteAccountStore}.
 *
 * @example
 * ```ts
 * createSqliteAccountStore({ filename: './.data/service-accounts.db', busyTimeoutMs: 10_000 })
 * ```
 */
export interface SqliteAccountStoreOptions {
  /**
   * Path of the database file, relative to the working directory or absolute; `:memory:` for a private
   * in-memory database. Missing folders are created with mode 0700 and a missing file with 0600 (its
   * `-wal` and `-shm` files get the same mode); existing ones keep theirs (docs/stores.md).
   */
  readonly filename: string;
  /**
   * How long a write waits for another process's lock before failing (`busy_timeout`), in milliseconds.
   * A write's wait never blocks the event loop: the write is tried again after short pauses.
   * @default 5000
   */
  readonly busyTimeoutMs?: number;
  /**
   * How often `watch()` polls the change feed, in milliseconds. When no poll has succeeded for
   * `pollIntervalMs + 200` ms, listeners get `'*'`, so a revocation takes effect within `pollIntervalMs + 200` ms: at most 800 keeps the 1-second bound (docs/security.md).
   * @default 200
   */
  readonly pollIntervalMs?: number;
  /** Told about background failures of `watch()`. @default ignore */
  readonly onWatchError?: (error: unknown) => void;
}

/**
 * Creates an {@link SqlAccountStore} on a SQLite file. Nothing is opened until first use; then the
 * folder (0700) and the file (0600) are created if missing, the file is opened in WAL mode (readers never block the writer, and
 * several processes can share it) and migrations run. `close()` closes the file.
 *
 * @example
 * ```ts
 * const store = createSqliteAccountStore({ filename: './.data/service-accounts.db' })
 * const sa = createServiceAccounts({ store, issuer, signingKeys })
 * ```
 */
export function createSqliteAccountStore(options: SqliteAccountStoreOptions): SqlAccountStore {
  const filename = options.filename === ':memory:' ? ':memory:' : resolve(options.filename);
  const busyTimeoutMs = Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000));
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: () => openSqliteDatabase(filename, busyTimeoutMs) }),
  });
  return new KyselyAccountStore(db, {
    dialect: 'sqlite',
    destroyOnClose: true,
    busyTimeoutMs,
    ...(options.pollIntervalMs !== undefined && { pollIntervalMs: options.pollIntervalMs }),
    ...(options.onWatchError !== undefined && { onWatchError: options.onWatchError }),
  });
}

async function openSqliteDatabase(filename: string, busyTimeoutMs: number): Promise<SqliteDatabase> {
  const BetterSqlite3 = await loadBetterSqlite3();
  if (filename !== ':memory:') await createPrivately(filename);
  let db: InstanceType<BetterSqlite3Constructor>;
  try {
    db = new BetterSqlite3(filename, { timeout: busyTimeoutMs });
  } catch (error) {
    throw explainOpenFailure(filename, error);
  }
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    // Switching to WAL takes an exclusive lock that a second process opening the same new file may
    // hold for a moment: retry rather than fail.
    for (let attempt = 1; ; attempt++) {
      try {
        db.pragma('journal_mode = WAL');
        break;
      } catch (error) {
        if (!isSqliteBusy(error) || attempt >= 20) throw error;
        await new Promise((done) => setTimeout(done, 25 * attempt));
      }
    }
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL'); // safe with WAL: a power loss may lose the last commits, never corrupt
  } catch (error) {
    db.close();
    throw explainOpenFailure(filename, error);
  }
  return db;
}

/**
 * SQLite's "unable to open database file" and "attempt to write a readonly database" name neither the
 * file nor the cause (a file another user owns, a read-only folder or file system): said with both,
 * keeping SQLite's code. Other errors (a busy database, retried by the caller) pass unchanged.
 */
function explainOpenFailure(filename: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^SQLITE_(CANTOPEN|READONLY|PERM)/.test(code)) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return Object.assign(
    new Error(
      `Cannot open the SQLite database ${filename}: ${reason}. This process must be able to read and write the file, ` +
        'and to create files in its folder (SQLite keeps the -wal and -shm files beside it)',
      { cause: error },
    ),
    { code },
  );
}

/**
 * Creates the missing folders (0700) and the database file (0600) before SQLite opens it, so the
 * bcrypt hashes are never readable by other users whatever the umask; SQLite then gives the `-wal`,
 * `-shm` and `-journal` files the database file's mode. The mode is set at creation, not through the
 * umask, which is process-wide and would race other code. Existing folders and files are left as
 * their owner made them. An empty file is a valid, empty SQLite database.
 */
async function createPrivately(filename: string): Promise<void> {
  await makeFolders(dirname(resolve(filename)));
  try {
    await (await open(filename, 'wx', 0o600)).close();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/**
 * `mkdir -p` with mode 0700, one folder at a time. Not `mkdir(..., { recursive: true })`: under a
 * file system that answers ENOENT for a folder that cannot exist (such as /proc on Linux), Node's
 * recursive mkdir retries forever; here a child's ENOENT once its parent exists is final.
 */
async function makeFolders(folder: string): Promise<void> {
  const missing: string[] = [];
  for (let current = folder; ; current = dirname(current)) {
    try {
      await stat(current);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(current) === current) throw error;
      missing.unshift(current);
    }
  }
  for (const current of missing) {
    try {
      await mkdir(current, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

type BetterSqlite3Constructor = typeof import('better-sqlite3');

async function loadBetterSqlite3(): Promise<BetterSqlite3Constructor> {
  // import(), not require(): the ESM build has no `require`; both builds keep the import lazy.
  try {
    const module = await import('better-sqlite3');
    return module.default;
  } catch (error) {
    throw new MissingDriverError('SQLite account store', 'better-sqlite3', { cause: error });
  }
}
