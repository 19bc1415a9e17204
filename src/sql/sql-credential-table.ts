/**
 * @module sql-credential-table
 * The life every credential table of the SQL store shares (`secrets`, `client_keys`,
 * `federated_credentials`): insert under the account's lock and the cap on live credentials, revoke
 * once (announced on the change feed), and record a use that never moves `last_used_at` backwards.
 * Each kind's module says only what differs: its table, its columns, its row → record mapping and,
 * for keys and federated credentials, its live-twin check.
 */
import type { Kysely } from 'kysely';
import { countLiveCredentials, lockAccount } from './account-rows.js';
import type { Database } from './schema.js';
import type { SqlCredentialsContext } from './sql-credentials-context.js';

/** The tables that hold credentials: each has `id`, `client_id`, `created_at`, `last_used_at` and `revoked_at`. */
export type CredentialTableName = 'secrets' | 'client_keys' | 'federated_credentials';

/** The columns every credential table has, by which the shared queries below select and filter. */
type CommonColumn = 'id' | 'created_at' | 'last_used_at' | 'revoked_at';

/**
 * One credential table as the shared queries use it.
 *
 * @example
 * ```ts
 * import { toKeyRecord, type KeyRow } from './records.js'
 *
 * const keys: CredentialTable<KeyRow, KeyRecord> = {
 *   name: 'client_keys',
 *   columns: ['id', 'thumbprint', 'public_jwk', 'created_at', 'last_used_at', 'revoked_at'],
 *   toRecord: toKeyRecord,
 * }
 * ```
 */
export interface CredentialTable<Row, R> {
  readonly name: CredentialTableName;
  /** The columns read back for a record. */
  readonly columns: readonly string[];
  /** Maps a row of those columns (or the inserted values) to the store's record. */
  readonly toRecord: (row: Row) => R;
}

/**
 * Inserts a credential in one write transaction: the account's row is locked first on PostgreSQL
 * (`for update`, so concurrent adds from any process run one after another; SQLite: `BEGIN
 * IMMEDIATE`), then `refuse` may refuse it (a live twin: `'duplicate'`), then live credentials of
 * every kind are counted against the cap, then the row is inserted and the change appended to the feed.
 * Resolves undefined for an unknown client ID.
 *
 * @example
 * ```ts
 * import type { Kysely } from 'kysely'
 * import type { Database } from './schema.js'
 * import type { SqlCredentialsContext } from './sql-credentials-context.js'
 * import type { KeyRecord } from '../store/account-store.js'
 *
 * declare const context: SqlCredentialsContext
 * declare const keys: CredentialTable<object, KeyRecord>
 * declare const clientId: string
 * declare const values: { readonly client_id: string } // the row to insert
 * declare function findLiveTwin(trx: Kysely<Database>): Promise<string | undefined>
 * const stored = await insertCredential(context, keys, clientId, values, { maxLiveCredentials: 5 }, async (trx) =>
 *   (await findLiveTwin(trx)) === undefined ? undefined : 'duplicate',
 * ) // the key, undefined, 'limit_reached' or 'duplicate'
 * ```
 */
export function insertCredential<Row, R, D extends 'duplicate' = never>(
  context: SqlCredentialsContext,
  table: CredentialTable<Row, R>,
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
 *
 * @example
 * ```ts
 * import type { SqlCredentialsContext } from './sql-credentials-context.js'
 * import type { KeyRecord } from '../store/account-store.js'
 *
 * declare const context: SqlCredentialsContext
 * declare const keys: CredentialTable<object, KeyRecord>
 * declare const clientId: string, keyId: string
 * const revoked = await revokeCredential(context, keys, clientId, keyId, new Date())
 * ```
 */
export function revokeCredential<Row, R>(
  context: SqlCredentialsContext,
  table: CredentialTable<Row, R>,
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
 *
 * @example
 * ```ts
 * import type { SqlCredentialsContext } from './sql-credentials-context.js'
 *
 * declare const context: SqlCredentialsContext
 * declare const clientId: string, keyId: string
 * await recordCredentialUse(context, 'client_keys', clientId, keyId, new Date())
 * ```
 */
export async function recordCredentialUse(context: SqlCredentialsContext, table: CredentialTableName, clientId: string, id: string, at: Date): Promise<void> {
  await context.db
    .updateTable(table)
    .set({ last_used_at: at.getTime() })
    .where('client_id', '=', clientId)
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at.getTime())]))
    .execute();
}
