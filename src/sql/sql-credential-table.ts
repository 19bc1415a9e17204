/**
 * @module sql-credential-table
 * The life every credential table of the SQL store shares (`secrets`, `client_keys`,
 * `federated_credentials`): insert under the account's lock and the cap on live credentials, revoke
 * once (announced on the change feed), and record a use that never moves `last_used_at` backwards.
 * Each kind says only what differs, as its row of `SQL_CREDENTIAL_TABLES` (sql-credential-tables.ts):
 * its table, its columns, its record ⇄ row mappings and, for keys and federated credentials, the
 * columns that make a live twin.
 */
import type { Kysely } from 'kysely';
import { countLiveCredentials, lockAccount } from './account-rows.js';
import type { CredentialTableName } from './credential-table-schema.js';
import type { Database } from './schema.js';
import type { SqlCredentialsContext } from './sql-credentials-context.js';

/** The columns every credential table has, by which the shared queries below select and filter. */
type CommonColumn = 'id' | 'created_at' | 'last_used_at' | 'revoked_at';

/**
 * One credential table as the shared queries use it: a kind's row of `SQL_CREDENTIAL_TABLES`.
 *
 * @example
 * ```ts
 * import { toKeyRecord, type KeyRow } from './records.js'
 *
 * const keys: CredentialTable<KeyRow, NewKeyRecord, KeyRecord> = {
 *   name: 'client_keys',
 *   columns: ['id', 'thumbprint', 'public_jwk', 'created_at', 'last_used_at', 'revoked_at', 'expires_at'],
 *   toRecord: toKeyRecord,
 *   toRow: (clientId, key) => ({ id: key.id, client_id: clientId, thumbprint: key.thumbprint, public_jwk: JSON.stringify(key.publicKey), created_at: key.createdAt.getTime(), last_used_at: null, revoked_at: null, expires_at: key.expiresAt?.getTime() ?? null }),
 *   twin: (key) => ({ thumbprint: key.thumbprint }),
 * }
 * ```
 */
export interface CredentialTable<Row, New, R> {
  readonly name: CredentialTableName;
  /** The columns read back for a record. */
  readonly columns: readonly string[];
  /** Maps a row of those columns (or the inserted values) to the store's record. */
  readonly toRecord: (row: Row) => R;
  /** The row of a credential being added. */
  readonly toRow: (clientId: string, record: New) => Row & { readonly client_id: string };
  /**
   * The columns, with their values, that a live credential of the account must not share with the new
   * one (`NULL` equal to `NULL`): a live twin is refused as `'duplicate'`. Absent: the kind has no twins.
   */
  readonly twin?: (record: New) => Readonly<Record<string, string | null>>;
}

/**
 * A credential table's shared life, for one kind (`D` is `never` for a kind without twins): add (under the cap, refusing a live twin), revoke
 * (announced on the change feed), record a use. The store applies its migrations before calling it.
 *
 * @example
 * ```ts
 * import { SQL_CREDENTIAL_TABLES } from './sql-credential-tables.js'
 * import type { SqlCredentialsContext } from './sql-credentials-context.js'
 *
 * declare const context: SqlCredentialsContext // the SQL store's database, dialect and transactions
 * declare const newKey: NewKeyRecord // checked, with its ID and thumbprint, by the core
 * const keys = new SqlCredentialTable(context, SQL_CREDENTIAL_TABLES.key)
 * const stored = await keys.add(clientId, newKey, { maxLiveCredentials: 5 }) // the key, undefined, 'limit_reached' or 'duplicate'
 * ```
 */
export class SqlCredentialTable<Row, New, R, D extends 'duplicate' = 'duplicate'> {
  readonly #context: SqlCredentialsContext;
  readonly #table: CredentialTable<Row, New, R>;

  constructor(context: SqlCredentialsContext, table: CredentialTable<Row, New, R>) {
    this.#context = context;
    this.#table = table;
  }

  /**
   * Checks for a live twin, counts live credentials and inserts in one write transaction; on
   * PostgreSQL the account's row is locked first (`for update`), so concurrent adds from any process
   * run one after another (SQLite: `BEGIN IMMEDIATE`). Partial unique indexes back the twin check.
   */
  add(clientId: string, record: New, options: { readonly maxLiveCredentials: number }): Promise<R | undefined | 'limit_reached' | D> {
    const { name, twin } = this.#table;
    const refuse =
      twin &&
      (async (trx: Kysely<Database>) => {
        let query = trx.selectFrom(name).select('id').where('client_id', '=', clientId).where('revoked_at', 'is', null);
        for (const [column, value] of Object.entries(twin(record))) {
          // A NULL (a federated credential's default audience) is a value of its own here: `= NULL` would match nothing.
          query = query.where(column as CommonColumn, value === null ? 'is' : '=', value);
        }
        return (await query.executeTakeFirst()) === undefined ? undefined : ('duplicate' as D);
      });
    return insertCredential(this.#context, this.#table, clientId, this.#table.toRow(clientId, record), options, refuse);
  }

  /** Revokes a live credential and appends to the change feed in the same transaction; a second revocation keeps the first revokedAt. */
  revoke(clientId: string, id: string, at: Date): Promise<R | undefined> {
    return revokeCredential(this.#context, this.#table, clientId, id, at);
  }

  /** Bookkeeping, not status: no change feed entry. Never moves lastUsedAt backwards when processes race. */
  recordUse(clientId: string, id: string, at: Date): Promise<void> {
    return recordCredentialUse(this.#context, this.#table.name, clientId, id, at);
  }
}

/**
 * Inserts a credential in one write transaction: the account's row is locked first on PostgreSQL
 * (`for update`, so concurrent adds from any process run one after another; SQLite: `BEGIN
 * IMMEDIATE`), then `refuse` may refuse it (a live twin: `'duplicate'`), then live credentials of
 * every kind are counted against the cap, then the row is inserted and the change appended to the feed.
 * Resolves undefined for an unknown client ID.
 */
function insertCredential<Row, R, D extends 'duplicate' = never>(
  context: SqlCredentialsContext,
  table: CredentialTable<Row, never, R>,
  clientId: string,
  values: Row & { readonly client_id: string },
  options: { readonly maxLiveCredentials: number },
  refuse?: (trx: Kysely<Database>) => Promise<D | undefined>,
): Promise<R | undefined | 'limit_reached' | D> {
  return context.write(async (trx) => {
    if (!(await lockAccount(trx, context.dialect, clientId))) return undefined;
    const refusal = refuse && (await refuse(trx));
    if (refusal !== undefined) return refusal;
    if ((await countLiveCredentials(trx, clientId)) >= options.maxLiveCredentials) return 'limit_reached';
    // The values fit the table named (each kind's module builds them for its own table).
    await trx.insertInto(table.name).values(values as never).execute();
    await context.appendChange(trx, clientId);
    return table.toRecord(values);
  });
}

/**
 * Revokes a live credential of the account and appends to the change feed in the same transaction,
 * then reads it back. Only a live credential is updated, so a second revocation keeps the first
 * `revokedAt` (on PostgreSQL a concurrent revocation re-checks `revoked_at is null` after the first
 * commits). Resolves undefined for an unknown credential, or one of another account.
 */
function revokeCredential<Row, R>(
  context: SqlCredentialsContext,
  table: CredentialTable<Row, never, R>,
  clientId: string,
  id: string,
  at: Date,
): Promise<R | undefined> {
  return context.write(async (trx) => {
    const result = await trx
      .updateTable(table.name)
      .set({ revoked_at: at.getTime() })
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (result.numUpdatedRows > 0n) await context.appendChange(trx, clientId);
    const row = await trx
      .selectFrom(table.name)
      // The table's own columns: typed here by those all tables share, read as the table's row.
      .select(table.columns as readonly CommonColumn[])
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && table.toRecord(row as Row);
  });
}

/**
 * Records a use (`last_used_at`). Bookkeeping, not status: no change feed entry. Never moves
 * `last_used_at` backwards when processes race.
 */
async function recordCredentialUse(context: SqlCredentialsContext, table: CredentialTableName, clientId: string, id: string, at: Date): Promise<void> {
  await context.writeStatement((db) =>
    db
      .updateTable(table)
      .set({ last_used_at: at.getTime() })
      .where('client_id', '=', clientId)
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at.getTime())]))
      .execute(),
  );
}
