/**
 * @module sql-account-store
 * {@link AccountStore} over Kysely, one implementation for SQLite and PostgreSQL, with a change feed
 * that lets every process sharing the database watch for changes.
 */
import type { Kysely } from 'kysely';
import type {
  AccountChangeListener,
  AccountListFilter,
  AddFederatedCredentialResult,
  AddKeyOptions,
  AddKeyResult,
  AccountPolicyChange,
  AccountRecord,
  AccountStore,
  FederatedCredentialRecord,
  KeyRecord,
  NewAccountRecord,
  NewFederatedCredentialRecord,
  NewKeyRecord,
  RevokedTokenRecord,
  RevokeTokenOptions,
  RevokeTokenResult,
  WatchOptions,
} from '../store/account-store.js';
import { onceUntilSuccess } from '../runtime/init-store.js';
import { selectAccountRows, toAccountRecords } from './account-rows.js';
import { ChangeFeed } from './change-feed.js';
import { appendChange, readLatestSeq, readSince, type ChangeFeedTarget } from './change-feed-table.js';
import { serializeScopes } from './records.js';
import { insertRevokedToken, selectRevokedTokens } from './revoked-token-queries.js';
import { type Database, migrateToLatest, type SqlDialectName } from './schema.js';
import { runWriteStatement, runWriteTransaction } from './write-transaction.js';
import { SqlAssertionIds } from './sql-assertion-ids.js';
import { defineCredentialMethods, openKindTables, type SqlCredentialMethods, type SqlKindTables } from './sql-credential-methods.js';
import { secretValues } from './sql-credential-tables.js';
import { findFederatedClients } from './sql-federated-clients.js';
import { recordSecretDigest } from './sql-secret-digests.js';
import type { SqlAccountStoreOptions } from './sql-account-store-options.js';

export type { SqlAccountStoreOptions } from './sql-account-store-options.js';

/**
 * The store `createSqliteAccountStore()`, `createPostgresAccountStore()` and `openAccountStore()`
 * return: accounts in SQL through Kysely. Timestamps are integers (ms since the epoch) on both dialects,
 * scopes a JSON array. Every mutation but the `record...Use` and `recordSecretDigest` calls appends to the `account_changes`
 * feed in its own transaction, which `watch()` reads.
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
  /** The SQL store keeps verified digests (column `secrets.verified_digest`), so no instance pays bcrypt twice for one value. */
  recordSecretDigest(clientId: string, secretId: string, digest: string): Promise<void>;
  /** The SQL store keeps account resources (column `accounts.resources`, schema version 7). */
  setAccountResources(clientId: string, resources: readonly string[]): Promise<AccountRecord | undefined>;
  /** The SQL store keeps account policies (columns `accounts.access_token_lifetime` and `dpop_bound_access_tokens`, schema version 9). */
  setAccountPolicy(clientId: string, policy: AccountPolicyChange): Promise<AccountRecord | undefined>;
  /** The SQL store holds federated credentials too (table `federated_credentials`). */
  addFederatedCredential(clientId: string, credential: NewFederatedCredentialRecord, options: AddKeyOptions): Promise<AddFederatedCredentialResult>;
  revokeFederatedCredential(clientId: string, credentialId: string, at: Date): Promise<FederatedCredentialRecord | undefined>;
  recordFederatedCredentialUse(clientId: string, credentialId: string, at: Date): Promise<void>;
  findFederatedClients(issuer: string, subject: string, limit: number, now?: Date): Promise<string[]>;
  /**
   * Calls `listener(clientId)` after every change by any process sharing the database, and
   * `listener('*')` when changes may have been missed. Resolves, once watching has started, to a
   * function that stops watching.
   */
  watch(listener: AccountChangeListener, options?: WatchOptions): Promise<() => Promise<void>>;
  /** Adds a token to the deny-list (table `revoked_tokens`) and announces it on the change feed. */
  revokeToken(record: RevokedTokenRecord, options?: RevokeTokenOptions): Promise<RevokeTokenResult>;
  /** The deny-list entries that have not expired at `now`. */
  listRevokedTokens(now: Date): Promise<RevokedTokenRecord[]>;
}

/**
 * The {@link SqlAccountStore} over Kysely: one implementation for SQLite and PostgreSQL, built by
 * the store factories (its constructor takes the typed `Kysely<Database>` they create). Its methods
 * on each credential kind (`addSecret`, `revokeKey`, ...) are made from the kind table
 * (sql-credential-methods.ts).
 */
// Declares the per-kind methods that defineCredentialMethods puts on the prototype.
export interface KyselyAccountStore extends SqlCredentialMethods {}

export class KyselyAccountStore implements SqlAccountStore {
  readonly #base: Kysely<Database>;
  readonly #db: Kysely<Database>;
  readonly #dialect: SqlDialectName;
  readonly #schema: string;
  readonly #feedTarget: ChangeFeedTarget;
  readonly #destroyOnClose: boolean;
  readonly #busyTimeoutMs: number | undefined;
  readonly #feed: ChangeFeed;
  readonly #credentials: SqlKindTables;
  readonly #assertionIds: SqlAssertionIds;
  /** Keeps the `expiresAt` of new credentials (schema version 8). */
  readonly keepsCredentialExpiry: boolean = true;
  /** Keeps the claim conditions of new federated credentials (schema version 10). */
  readonly keepsClaimConditions: boolean = true;
  readonly #migrate = onceUntilSuccess(() => migrateToLatest(this.#base, { dialect: this.#dialect, schema: this.#schema }));
  #closed = false;

  constructor(db: Kysely<Database>, options: SqlAccountStoreOptions) {
    this.#dialect = options.dialect;
    this.#schema = options.schema ?? 'public';
    this.#base = db;
    this.#db = this.#dialect === 'postgres' ? db.withSchema(this.#schema) : db;
    const notifyChannel = this.#dialect === 'postgres' ? options.notifyChannel : undefined;
    this.#feedTarget = { dialect: this.#dialect, schema: this.#schema, notifyChannel };
    this.#destroyOnClose = options.destroyOnClose ?? false;
    this.#busyTimeoutMs = options.busyTimeoutMs;
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
      readLatestSeq: () => readLatestSeq(this.#db),
      readSince: (after, limit) => readSince(this.#db, after, limit),
    });
    const credentials = {
      db: this.#db,
      dialect: this.#dialect,
      write: <T>(work: (trx: Kysely<Database>) => Promise<T>) => this.#write(work),
      writeStatement: <T>(work: (db: Kysely<Database>) => Promise<T>) => this.#writeStatement(work),
      appendChange: (trx: Kysely<Database>, clientId: string) => this.#appendChange(trx, clientId),
    };
    this.#credentials = openKindTables(credentials);
    this.#assertionIds = new SqlAssertionIds(credentials);
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
          resources: serializeScopes(input.resources ?? []),
          access_token_lifetime: input.accessTokenLifetime ?? null,
          dpop_bound_access_tokens: input.dpopBoundAccessTokens ? 1 : 0,
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

  async listAccounts(filter: AccountListFilter = {}): Promise<AccountRecord[]> {
    await this.init();
    const { clientAccountId } = filter;
    return toAccountRecords(await selectAccountRows(this.#db, clientAccountId === undefined ? {} : { clientAccountId }).execute());
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

  /** Column `accounts.resources` (a JSON array), announced on the change feed like `setAccountEnabled`. */
  async setAccountResources(clientId: string, resources: readonly string[]): Promise<AccountRecord | undefined> {
    await this.init();
    return this.#write(async (trx) => {
      const result = await trx
        .updateTable('accounts')
        .set({ resources: serializeScopes(resources) })
        .where('client_id', '=', clientId)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return undefined;
      await this.#appendChange(trx, clientId);
      return this.#find(trx, clientId);
    });
  }

  /** Columns `accounts.access_token_lifetime` and `dpop_bound_access_tokens`, announced on the change feed like `setAccountEnabled`. */
  async setAccountPolicy(clientId: string, policy: AccountPolicyChange): Promise<AccountRecord | undefined> {
    await this.init();
    return this.#write(async (trx) => {
      const result = await trx
        .updateTable('accounts')
        .set({
          ...(policy.accessTokenLifetime !== undefined && { access_token_lifetime: policy.accessTokenLifetime }),
          ...(policy.dpopBoundAccessTokens !== undefined && { dpop_bound_access_tokens: policy.dpopBoundAccessTokens ? 1 : 0 }),
          // Written even when nothing else is, so an empty change still finds the row and is announced.
          client_id: clientId,
        })
        .where('client_id', '=', clientId)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return undefined;
      await this.#appendChange(trx, clientId);
      return this.#find(trx, clientId);
    });
  }

  // The credential methods of each kind (add under the shared cap, counted and inserted atomically,
  // refusing a live twin as 'duplicate'; revoke; record a use): its table (sql-credential-tables.ts)
  // under the life they share (sql-credential-table.ts), put on the prototype from the kind table.
  static {
    defineCredentialMethods(this.prototype, (store: KyselyAccountStore) => store.#credentials);
  }

  /** Column `secrets.verified_digest`; bookkeeping like `recordSecretUse`, not on the change feed. */
  recordSecretDigest(clientId: string, secretId: string, digest: string): Promise<void> {
    return this.#ready(() => this.#writeStatement((db) => recordSecretDigest(db, clientId, secretId, digest)));
  }

  /** One upsert, atomic across processes; expired assertion IDs are swept at most once a minute. */
  consumeAssertionId(issuer: string, jti: string, expiresAt: Date, now: Date): Promise<boolean> {
    return this.#ready(() => this.#assertionIds.consumeAssertionId(issuer, jti, expiresAt, now));
  }

  findFederatedClients(issuer: string, subject: string, limit: number, now?: Date): Promise<string[]> {
    return this.#ready(() => findFederatedClients(this.#db, issuer, subject, limit, now));
  }

  /** Runs `work` once the migrations are applied. */
  async #ready<T>(work: () => Promise<T>): Promise<T> {
    await this.init();
    return work();
  }

  /** Adds the deny-list entry and announces it on the change feed in the same transaction (revoked-token-queries.ts). */
  async revokeToken(record: RevokedTokenRecord, options?: RevokeTokenOptions): Promise<RevokeTokenResult> {
    await this.init();
    return this.#write((trx) => insertRevokedToken(trx, this.#dialect, record, options, (key) => this.#appendChange(trx, key)));
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
    return runWriteTransaction(this.#db, this.#dialect, work, this.#busyTimeoutMs);
  }

  #writeStatement<T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    return runWriteStatement(this.#db, this.#dialect, work, this.#busyTimeoutMs);
  }

  async #exists(db: Kysely<Database>, clientId: string): Promise<boolean> {
    const row = await db.selectFrom('accounts').select('client_id').where('client_id', '=', clientId).executeTakeFirst();
    return row !== undefined;
  }

  async #find(db: Kysely<Database>, clientId: string): Promise<AccountRecord | undefined> {
    const rows = await selectAccountRows(db, { clientId }).execute();
    return toAccountRecords(rows)[0];
  }

  #appendChange(trx: Kysely<Database>, clientId: string): Promise<void> {
    return appendChange(trx, this.#feedTarget, clientId);
  }
}
