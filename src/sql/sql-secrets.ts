/**
 * @module sql-secrets
 * The secret methods of the SQL store: add a secret (hash only) under the shared cap, revoke it
 * (announced on the change feed), and record its use and its verified digest.
 */
import type { AddSecretOptions, AddSecretResult, NewSecretRecord, SecretRecord } from '../store/account-store.js';
import { countLiveCredentials, lockAccount } from './account-rows.js';
import { secretValues, toSecretRecord } from './records.js';
import type { SqlCredentialsContext } from './sql-credentials-context.js';

/**
 * `addSecret`, `revokeSecret`, `recordSecretUse` and `recordSecretDigest` over the `secrets` table. The store applies its
 * migrations before calling them.
 *
 * @example
 * ```ts
 * import type { SqlCredentialsContext } from './sql-credentials-context.js'
 *
 * declare const context: SqlCredentialsContext // the SQL store's database, dialect and transactions
 * declare const newSecret: NewSecretRecord // ID and hash made by the core
 * const secrets = new SqlSecrets(context)
 * const stored = await secrets.add(clientId, newSecret, { maxLiveCredentials: 5, maxLiveSecrets: 5 }) // the secret, undefined or 'limit_reached'
 * ```
 */
export class SqlSecrets {
  readonly #context: SqlCredentialsContext;

  constructor(context: SqlCredentialsContext) {
    this.#context = context;
  }

  /**
   * Counts live credentials and inserts in one write transaction; on PostgreSQL the account's row is
   * locked first (`for update`), so concurrent adds from any process run one after another (SQLite:
   * `BEGIN IMMEDIATE`).
   */
  add(clientId: string, secret: NewSecretRecord, options: AddSecretOptions): Promise<AddSecretResult> {
    return this.#context.write(async (trx) => {
      if (!(await lockAccount(trx, this.#context.dialect, clientId))) return undefined;
      if ((await countLiveCredentials(trx, clientId)) >= options.maxLiveCredentials) return 'limit_reached';
      const values = secretValues(clientId, secret);
      await trx.insertInto('secrets').values(values).execute();
      await this.#context.appendChange(trx, clientId);
      return toSecretRecord(values);
    });
  }

  /** Revokes a live secret and appends to the change feed in the same transaction. */
  revoke(clientId: string, secretId: string, at: Date): Promise<SecretRecord | undefined> {
    return this.#context.write(async (trx) => {
      // Only a live secret is updated, so a second revocation keeps the first revokedAt (on PostgreSQL a
      // concurrent revocation re-checks `revoked_at is null` after the first commits).
      const result = await trx
        .updateTable('secrets')
        .set({ revoked_at: at.getTime() })
        .where('client_id', '=', clientId)
        .where('id', '=', secretId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (result.numUpdatedRows > 0n) await this.#context.appendChange(trx, clientId);
      const row = await trx
        .selectFrom('secrets')
        .select(['id', 'hash', 'created_at', 'last_used_at', 'revoked_at', 'verified_digest'])
        .where('client_id', '=', clientId)
        .where('id', '=', secretId)
        .executeTakeFirst();
      return row && toSecretRecord(row);
    });
  }

  /** Bookkeeping, not status: no change feed entry. The last write wins. */
  async recordDigest(clientId: string, secretId: string, digest: string): Promise<void> {
    await this.#context.db
      .updateTable('secrets')
      .set({ verified_digest: digest })
      .where('client_id', '=', clientId)
      .where('id', '=', secretId)
      .execute();
  }

  /** Bookkeeping, not status: no change feed entry. Never moves lastUsedAt backwards when processes race. */
  async recordUse(clientId: string, secretId: string, at: Date): Promise<void> {
    await this.#context.db
      .updateTable('secrets')
      .set({ last_used_at: at.getTime() })
      .where('client_id', '=', clientId)
      .where('id', '=', secretId)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at.getTime())]))
      .execute();
  }
}
