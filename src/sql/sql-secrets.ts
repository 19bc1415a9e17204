/**
 * @module sql-secrets
 * The secret methods of the SQL store: add a secret (hash only) under the shared cap, revoke it
 * (announced on the change feed), and record its use and its verified digest.
 */
import type { AddSecretOptions, AddSecretResult, NewSecretRecord, SecretRecord } from '../store/account-store.js';
import { secretValues, toSecretRecord, type SecretRow } from './records.js';
import { insertCredential, recordCredentialUse, revokeCredential, type CredentialTable } from './sql-credential-table.js';
import type { SqlCredentialsContext } from './sql-credentials-context.js';

const SECRETS: CredentialTable<SecretRow, SecretRecord> = {
  name: 'secrets',
  columns: ['id', 'hash', 'created_at', 'last_used_at', 'revoked_at', 'verified_digest', 'expires_at'],
  toRecord: toSecretRecord,
};

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
    // A secret has no live twin to refuse: only the cap applies.
    return insertCredential<SecretRow, SecretRecord, never>(this.#context, SECRETS, clientId, secretValues(clientId, secret), options);
  }

  /** Revokes a live secret and appends to the change feed in the same transaction; a second revocation keeps the first revokedAt. */
  revoke(clientId: string, secretId: string, at: Date): Promise<SecretRecord | undefined> {
    return revokeCredential(this.#context, SECRETS, clientId, secretId, at);
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
  recordUse(clientId: string, secretId: string, at: Date): Promise<void> {
    return recordCredentialUse(this.#context, SECRETS.name, clientId, secretId, at);
  }
}
