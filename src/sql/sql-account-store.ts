/**
 * @module sql-account-store
 * {@link AccountStore} over Kysely, one implementation for SQLite and PostgreSQL, with a change feed
 * that lets every process sharing the database watch for changes.
 */
import { type Kysely, sql } from 'kysely';
import type {
  AccountChangeListener,
  AddKeyOptions,
  AddKeyResult,
  AddSecretOptions,
  AddSecretResult,
  AccountRecord,
  AccountStore,
  KeyRecord,
  NewAccountRecord,
  NewKeyRecord,
  NewSecretRecord,
  RevokedTokenRecord,
  SecretRecord,
  WatchOptions,
} from '../store/account-store.js';
import { onceUntilSuccess } from '../store/init-store.js';
import { ChangeFeed, type ChangeNotifications } from './change-feed.js';
import {
  countLiveCredentials,
  selectAccountRows,
  secretValues,
  serializeScopes,
  toAccountRecords,
  toNumber,
  toSecretRecord,
} from './records.js';
import { insertRevokedToken, selectRevokedTokens } from './revoked-token-queries.js';
import {
  ADVISORY_LOCK_NAMESPACE,
  type Database,
  migrateToLatest,
  runWriteTransaction,
  type SqlDialectName,
} from './schema.js';
import { SqlKeyCredentials } from './sql-key-credentials.js';

/**
 * Options of {@link KyselyAccountStore}. The factories `createSqliteAccountStore` and
 * `createPostgresAccountStore` fill them in.
 *
 * @example
 * ```ts
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
   * `pollIntervalMs + 200` ms, listeners get `'*'`, so a revocation takes effect within 1 second (docs/security.md).
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
  /** Told about background failures of `watch()` (poll, push, a throwing listener). @default ignore */
  readonly onWatchError?: (error: unknown) => void;
}

/** Feed rows older than this are deleted by later mutations; watchers read the feed within seconds. */
const FEED_RETENTION_MS = 60 * 60 * 1000;

/**
 * The store `createSqliteAccountStore()`, `createPostgresAccountStore()` and `openAccountStore()`
 * return: accounts in SQL through Kysely. Timestamps are integers (ms since the epoch) on both dialects,
 * scopes a JSON array. Every mutation but `recordSecretUse` appends to the `account_changes` feed in
 * its own transaction, which `watch()` reads.
 *
 * `watch(listener)` polls the feed every `pollIntervalMs` (200 ms), starting from its current end,
 * and on PostgreSQL also `LISTEN`s for near-instant delivery (the poll stays as the safety net, and a
 * change is delivered once even when both see it). When the feed cannot be read, no poll has succeeded
 * for `pollIntervalMs + 200` ms, or the push connection breaks, listeners get `'*'`: "everything may
 * have changed". Background failures never throw; they go to `onWatchError`, and polling keeps
 * retrying. Timers are `unref()`ed. Its second argument's `onStateChange` is told how changes arrive:
 * `push`, `polling` (SQLite), `reconnecting` (the push connection is down) or `failing`.
 *
 * Every method applies the migrations first if `init()` has not run yet.
 *
 * @example
 * ```ts
 * import { createPostgresAccountStore, type SqlAccountStore } from 'express-service-accounts/sql'
 *
 * const store: SqlAccountStore = createPostgresAccountStore({ connectionString: process.env.DATABASE_URL, schema: 'service_accounts' })
 * await store.init()
 * const stop = await store.watch((clientId) => console.log('changed', clientId), {
 *   onStateChange: (state) => console.log('changes arrive by', state),
 * })
 * ```
 */
export interface SqlAccountStore extends AccountStore {
  /** Applies pending migrations (once; retried on the next call if it failed). Safe across processes. */
  init(): Promise<void>;
  /** Stops every watcher and, when the store opened the database itself, closes it. */
  close(): Promise<void>;
  /** The SQL store holds key-pair credentials: the key methods are always there. */
  addKey(clientId: string, key: NewKeyRecord, options: AddKeyOptions): Promise<AddKeyResult>;
  revokeKey(clientId: string, keyId: string, at: Date): Promise<KeyRecord | undefined>;
  recordKeyUse(clientId: string, keyId: string, at: Date): Promise<void>;
  consumeAssertionId(issuer: string, jti: string, expiresAt: Date, now: Date): Promise<boolean>;
  /**
   * Calls `listener(clientId)` after every change by any process sharing the database, and
   * `listener('*')` when changes may have been missed. Resolves, once watching has started, to a
   * function that stops watching.
   */
  watch(listener: AccountChangeListener, options?: WatchOptions): Promise<() => Promise<void>>;
  /** Adds a token to the deny-list (table `revoked_tokens`) and announces it on the change feed. */
  revokeToken(record: RevokedTokenRecord): Promise<RevokedTokenRecord>;
  /** The deny-list entries that have not expired at `now`. */
  listRevokedTokens(now: Date): Promise<RevokedTokenRecord[]>;
}

/**
 * The {@link SqlAccountStore} over Kysely: one implementation for SQLite and PostgreSQL, built by
 * the store factories (its constructor takes the typed `Kysely<Database>` they create).
 */
export class KyselyAccountStore implements SqlAccountStore {
  readonly #base: Kysely<Database>;
  readonly #db: Kysely<Database>;
  readonly #dialect: SqlDialectName;
  readonly #schema: string;
  readonly #notifyChannel: string | undefined;
  readonly #destroyOnClose: boolean;
  readonly #feed: ChangeFeed;
  readonly #keys: SqlKeyCredentials;
  readonly #migrate = onceUntilSuccess(() => migrateToLatest(this.#base, { dialect: this.#dialect, schema: this.#schema }));
  #closed = false;

  constructor(db: Kysely<Database>, options: SqlAccountStoreOptions) {
    this.#dialect = options.dialect;
    this.#schema = options.schema ?? 'public';
    this.#base = db;
    this.#db = this.#dialect === 'postgres' ? db.withSchema(this.#schema) : db;
    this.#notifyChannel = this.#dialect === 'postgres' ? options.notifyChannel : undefined;
    this.#destroyOnClose = options.destroyOnClose ?? false;
    const onError = options.onWatchError ?? (() => undefined);
    this.#feed = new ChangeFeed({
      pollIntervalMs: options.pollIntervalMs ?? 200,
      notifications: options.notifications,
      onError: (error) => {
        try {
          onError(error);
        } catch {
          // A failing error hook must not break the poll loop.
        }
      },
      readLatestSeq: () => this.#readLatestSeq(),
      readSince: (after, limit) => this.#readSince(after, limit),
    });
    this.#keys = new SqlKeyCredentials({
      db: this.#db,
      dialect: this.#dialect,
      write: (work) => this.#write(work),
      appendChange: (trx, clientId) => this.#appendChange(trx, clientId),
    });
  }

  /** Applies pending migrations (once; retried on the next call if it failed). Safe across processes. */
  init(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('The account store is closed'));
    return this.#migrate();
  }

  /** Stops every watcher, then destroys the Kysely instance when `destroyOnClose` is set. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#feed.close();
    if (this.#destroyOnClose) await this.#base.destroy();
  }

  async createAccount(input: NewAccountRecord): Promise<AccountRecord> {
    await this.init();
    return this.#write(async (trx) => {
      if (await this.#exists(trx, input.clientId)) throw new Error(`Account ${input.clientId} already exists`);
      await trx
        .insertInto('accounts')
        .values({
          client_id: input.clientId,
          name: input.name,
          client_account_id: input.clientAccountId,
          scopes: serializeScopes(input.scopes),
          enabled: 1,
          created_at: input.createdAt.getTime(),
        })
        .execute();
      await trx.insertInto('secrets').values(secretValues(input.clientId, input.secret)).execute();
      await this.#appendChange(trx, input.clientId);
      const account = await this.#find(trx, input.clientId);
      if (!account) throw new Error(`Account ${input.clientId} vanished while being created`);
      return account;
    });
  }

  async findAccount(clientId: string): Promise<AccountRecord | undefined> {
    await this.init();
    return this.#find(this.#db, clientId);
  }

  async listAccounts(): Promise<AccountRecord[]> {
    await this.init();
    return toAccountRecords(await selectAccountRows(this.#db).execute());
  }

  async setAccountEnabled(clientId: string, enabled: boolean): Promise<AccountRecord | undefined> {
    await this.init();
    return this.#write(async (trx) => {
      const result = await trx
        .updateTable('accounts')
        .set({ enabled: enabled ? 1 : 0 })
        .where('client_id', '=', clientId)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return undefined;
      await this.#appendChange(trx, clientId);
      return this.#find(trx, clientId);
    });
  }

  /**
   * Counts live secrets and inserts in one write transaction; on PostgreSQL the account's row is locked
   * first (`for update`), so concurrent adds from any process run one after another (SQLite: `BEGIN IMMEDIATE`).
   */
  async addSecret(clientId: string, secret: NewSecretRecord, options: AddSecretOptions): Promise<AddSecretResult> {
    await this.init();
    return this.#write(async (trx) => {
      let account = trx.selectFrom('accounts').select('client_id').where('client_id', '=', clientId);
      if (this.#dialect === 'postgres') account = account.forUpdate();
      if ((await account.executeTakeFirst()) === undefined) return undefined;
      if ((await countLiveCredentials(trx, clientId)) >= options.maxLiveCredentials) return 'limit_reached';
      const values = secretValues(clientId, secret);
      await trx.insertInto('secrets').values(values).execute();
      await this.#appendChange(trx, clientId);
      return toSecretRecord(values);
    });
  }

  async revokeSecret(clientId: string, secretId: string, at: Date): Promise<SecretRecord | undefined> {
    await this.init();
    return this.#write(async (trx) => {
      // Only a live secret is updated, so a second revocation keeps the first revokedAt (on PostgreSQL a
      // concurrent revocation re-checks `revoked_at is null` after the first commits).
      const result = await trx
        .updateTable('secrets')
        .set({ revoked_at: at.getTime() })
        .where('client_id', '=', clientId)
        .where('id', '=', secretId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (result.numUpdatedRows > 0n) await this.#appendChange(trx, clientId);
      const row = await trx
        .selectFrom('secrets')
        .select(['id', 'hash', 'created_at', 'last_used_at', 'revoked_at'])
        .where('client_id', '=', clientId)
        .where('id', '=', secretId)
        .executeTakeFirst();
      return row && toSecretRecord(row);
    });
  }

  async recordSecretUse(clientId: string, secretId: string, at: Date): Promise<void> {
    await this.init();
    // Bookkeeping, not status: no change feed entry. Never moves lastUsedAt backwards when processes race.
    await this.#db
      .updateTable('secrets')
      .set({ last_used_at: at.getTime() })
      .where('client_id', '=', clientId)
      .where('id', '=', secretId)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at.getTime())]))
      .execute();
  }

  /** Under the shared cap and atomic like `addSecret`; a live key with the same thumbprint is a `'duplicate'`. */
  async addKey(clientId: string, key: NewKeyRecord, options: AddKeyOptions): Promise<AddKeyResult> {
    await this.init();
    return this.#keys.add(clientId, key, options);
  }

  async revokeKey(clientId: string, keyId: string, at: Date): Promise<KeyRecord | undefined> {
    await this.init();
    return this.#keys.revoke(clientId, keyId, at);
  }

  async recordKeyUse(clientId: string, keyId: string, at: Date): Promise<void> {
    await this.init();
    await this.#keys.recordUse(clientId, keyId, at);
  }

  /** One upsert, atomic across processes; expired assertion IDs are swept at most once a minute. */
  async consumeAssertionId(issuer: string, jti: string, expiresAt: Date, now: Date): Promise<boolean> {
    await this.init();
    return this.#keys.consumeAssertionId(issuer, jti, expiresAt, now);
  }

  /** Adds the deny-list entry and announces it on the change feed in the same transaction (revoked-token-queries.ts). */
  async revokeToken(record: RevokedTokenRecord): Promise<RevokedTokenRecord> {
    await this.init();
    return this.#write((trx) => insertRevokedToken(trx, record, (key) => this.#appendChange(trx, key)));
  }

  async listRevokedTokens(now: Date): Promise<RevokedTokenRecord[]> {
    await this.init();
    return selectRevokedTokens(this.#db, now);
  }

  /**
   * Calls `listener(clientId)` after every change by any process sharing the database, and
   * `listener('*')` when changes may have been missed. Resolves once watching has started.
   */
  async watch(listener: AccountChangeListener, options?: WatchOptions): Promise<() => Promise<void>> {
    await this.init();
    return this.#feed.watch(listener, options);
  }

  #write<T>(work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    return runWriteTransaction(this.#db, this.#dialect, work);
  }

  async #exists(db: Kysely<Database>, clientId: string): Promise<boolean> {
    const row = await db.selectFrom('accounts').select('client_id').where('client_id', '=', clientId).executeTakeFirst();
    return row !== undefined;
  }

  async #find(db: Kysely<Database>, clientId: string): Promise<AccountRecord | undefined> {
    const rows = await selectAccountRows(db).where('a.client_id', '=', clientId).execute();
    return toAccountRecords(rows)[0];
  }

  async #appendChange(trx: Kysely<Database>, clientId: string): Promise<void> {
    const now = Date.now();
    if (this.#dialect === 'postgres') {
      // Serialise feed appends until commit, so sequence numbers become visible in increasing order
      // and a poll that has seen seq N can never later miss a smaller one.
      await sql`select pg_advisory_xact_lock(hashtext(${ADVISORY_LOCK_NAMESPACE}), hashtext(${`${this.#schema}:changes`}))`.execute(trx);
    }
    const { seq } = await trx
      .insertInto('account_changes')
      .values({ client_id: clientId, changed_at: now })
      .returning('seq')
      .executeTakeFirstOrThrow();
    await trx.deleteFrom('account_changes').where('changed_at', '<', now - FEED_RETENTION_MS).execute();
    if (this.#notifyChannel !== undefined) {
      // Delivered by PostgreSQL at commit, never for a rolled-back change.
      await sql`select pg_notify(${this.#notifyChannel}, ${`${toNumber(seq)}:${clientId}`})`.execute(trx);
    }
  }

  async #readLatestSeq(): Promise<number> {
    const row = await this.#db
      .selectFrom('account_changes')
      .select((eb) => eb.fn.max('seq').as('seq'))
      .executeTakeFirst();
    return row?.seq == null ? 0 : toNumber(row.seq);
  }

  async #readSince(after: number, limit: number): Promise<{ seq: number; clientId: string }[]> {
    const rows = await this.#db
      .selectFrom('account_changes')
      .select(['seq', 'client_id'])
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ seq: toNumber(row.seq), clientId: row.client_id }));
  }
}
