/**
 * @module column-types
 * Types shared by every table of the SQL stores (schema.ts and the tables its migrations add) and by
 * the code that runs their statements: the dialect names and the column types. In a module of their
 * own so that the schema, its migration modules and the write transaction need not import each other.
 */
import type { ColumnType } from 'kysely';

/**
 * Milliseconds since the epoch, stored as an integer (`BIGINT` on PostgreSQL). `pg` returns `BIGINT`
 * as a string, so reads are typed `number | string` and go through `Number()`.
 *
 * @example
 * ```ts
 * const row = await db.selectFrom('accounts').select('created_at').executeTakeFirstOrThrow()
 * const createdAt = new Date(Number(row.created_at))
 * ```
 */
export type EpochMillis = ColumnType<number | string, number, number>;
/**
 * {@link EpochMillis} that may be `NULL`.
 *
 * @example
 * ```ts
 * await db.updateTable('secrets').set({ revoked_at: Date.now() }).where('id', '=', secretId).execute()
 * ```
 */
export type NullableEpochMillis = ColumnType<number | string | null, number | null, number | null>;

/**
 * The SQL dialects the store speaks.
 *
 * @example
 * ```ts
 * import { KyselyAccountStore } from './sql-account-store.js'
 *
 * const store = new KyselyAccountStore(db, { dialect: 'sqlite' satisfies SqlDialectName })
 * ```
 */
export type SqlDialectName = 'sqlite' | 'postgres';
