/**
 * @module revoked-token-queries
 * The SQL of the token deny-list (`revoked_tokens`): add an entry once, within its client's cap,
 * announcing it on the change feed, and read the entries that have not expired.
 */
import type { Kysely } from 'kysely';
import type { RevokedTokenRecord, RevokeTokenOptions, RevokeTokenResult } from '../store/account-store.js';
import { lockAccount } from './account-rows.js';
import { EXPIRED_ENTRY_RETENTION_MS, revokedTokenChangeKey } from '../store/revoked-token-change.js';
import { toNumber, type DbInteger } from './records.js';
import type { Database, SqlDialectName } from './schema.js';

/**
 * A deny-list row as read from `revoked_tokens`.
 *
 * @example
 * ```ts
 * const row: RevokedTokenRow = { token_id: '0f6a1c2e', client_id: 'esa_4fT0', revoked_at: 1736933400123, expires_at: 1736937000000 }
 * ```
 */
export interface RevokedTokenRow {
  token_id: string;
  client_id: string | null;
  revoked_at: DbInteger;
  expires_at: DbInteger;
}

/**
 * Maps a `revoked_tokens` row to a {@link RevokedTokenRecord}.
 *
 * @example
 * ```ts
 * const entries = (await db.selectFrom('revoked_tokens').selectAll().execute()).map(toRevokedTokenRecord)
 * ```
 */
export function toRevokedTokenRecord(row: RevokedTokenRow): RevokedTokenRecord {
  return {
    tokenId: row.token_id,
    clientId: row.client_id,
    revokedAt: new Date(toNumber(row.revoked_at)),
    expiresAt: new Date(toNumber(row.expires_at)),
  };
}

/**
 * Inside a write transaction: inserts the entry unless the token is already listed; a new entry is
 * announced through `announce` (the change feed append of the same transaction) and entries that
 * expired `EXPIRED_ENTRY_RETENTION_MS` or more before `record.revokedAt` are deleted. With
 * `options.maxPerClient` and a client named, the client's account row is locked first (PostgreSQL
 * `for update`; SQLite's write transaction is exclusive), so the count of its live entries and the
 * insert are one step for every process.
 * @returns the stored entry: `record`, or the first one when the token was already listed; or
 * `'limit_reached'`, with nothing stored.
 *
 * @example
 * ```ts
 * const record = { tokenId: '0f6a1c2e', clientId: 'esa_4fT0', revokedAt: new Date(), expiresAt: new Date(Date.now() + 3_600_000) }
 * await db.transaction().execute((trx) => insertRevokedToken(trx, 'postgres', record, { maxPerClient: 1000 }, async (key) => console.log('announce', key)))
 * ```
 */
export async function insertRevokedToken(
  trx: Kysely<Database>,
  dialect: SqlDialectName,
  record: RevokedTokenRecord,
  options: RevokeTokenOptions | undefined,
  announce: (changeKey: string) => Promise<void>,
): Promise<RevokeTokenResult> {
  const max = options?.maxPerClient;
  if (max !== undefined && record.clientId !== null) {
    await lockAccount(trx, dialect, record.clientId);
    const listed = await trx.selectFrom('revoked_tokens').selectAll().where('token_id', '=', record.tokenId).executeTakeFirst();
    if (listed) return toRevokedTokenRecord(listed);
    const { live } = await trx
      .selectFrom('revoked_tokens')
      .select((eb) => eb.fn.countAll<DbInteger>().as('live'))
      .where('client_id', '=', record.clientId)
      .where('expires_at', '>', record.revokedAt.getTime())
      .executeTakeFirstOrThrow();
    if (toNumber(live) >= max) return 'limit_reached';
  }
  const inserted = await trx
    .insertInto('revoked_tokens')
    .values({
      token_id: record.tokenId,
      client_id: record.clientId,
      revoked_at: record.revokedAt.getTime(),
      expires_at: record.expiresAt.getTime(),
    })
    .onConflict((conflict) => conflict.column('token_id').doNothing())
    .executeTakeFirst();
  if ((inserted.numInsertedOrUpdatedRows ?? 0n) > 0n) {
    await announce(revokedTokenChangeKey(record));
    await trx
      .deleteFrom('revoked_tokens')
      .where('expires_at', '<=', record.revokedAt.getTime() - EXPIRED_ENTRY_RETENTION_MS)
      .where('token_id', '<>', record.tokenId)
      .execute();
  }
  const row = await trx.selectFrom('revoked_tokens').selectAll().where('token_id', '=', record.tokenId).executeTakeFirstOrThrow();
  return toRevokedTokenRecord(row);
}

/**
 * The entries whose `expires_at` is after `now`.
 *
 * @example
 * ```ts
 * const entries = await selectRevokedTokens(db, new Date())
 * ```
 */
export async function selectRevokedTokens(db: Kysely<Database>, now: Date): Promise<RevokedTokenRecord[]> {
  const rows = await db.selectFrom('revoked_tokens').selectAll().where('expires_at', '>', now.getTime()).execute();
  return rows.map(toRevokedTokenRecord);
}
