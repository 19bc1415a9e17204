/**
 * @module sql-key-credentials
 * The key-pair credential methods of the SQL store: add a public key under the shared cap, revoke it
 * (announced on the change feed like a secret's revocation), record its use, and consume assertion IDs
 * with one atomic upsert.
 */
import { createHash } from 'node:crypto';
import type { AddKeyOptions, AddKeyResult, KeyRecord, NewKeyRecord } from '../store/account-store.js';
import { toKeyRecord, type KeyRow } from './records.js';
import { insertCredential, recordCredentialUse, revokeCredential, type CredentialTable } from './sql-credential-table.js';
import type { SqlCredentialsContext } from './sql-credentials-context.js';

const KEYS: CredentialTable<KeyRow, KeyRecord> = {
  name: 'client_keys',
  columns: ['id', 'thumbprint', 'public_jwk', 'created_at', 'last_used_at', 'revoked_at', 'expires_at'],
  toRecord: toKeyRecord,
};

/** Expired assertion IDs are deleted at most this often per store: a sweep is a write of its own. */
const ASSERTION_SWEEP_MS = 60_000;

/**
 * `addKey`, `revokeKey`, `recordKeyUse` and `consumeAssertionId` over the `client_keys` and
 * `used_assertion_ids` tables. The store applies its migrations before calling them.
 *
 * @example
 * ```ts
 * import type { SqlCredentialsContext } from './sql-credentials-context.js'
 *
 * declare const context: SqlCredentialsContext // the SQL store's database, dialect and transactions
 * declare const newKey: NewKeyRecord // checked, with its ID and thumbprint, by the core
 * const keys = new SqlKeyCredentials(context)
 * const stored = await keys.add(clientId, newKey, { maxLiveCredentials: 5 }) // the key, undefined, 'limit_reached' or 'duplicate'
 * ```
 */
export class SqlKeyCredentials {
  readonly #context: SqlCredentialsContext;
  #lastSweep = 0;

  constructor(context: SqlCredentialsContext) {
    this.#context = context;
  }

  /**
   * Checks for a live twin, counts live credentials and inserts in one write transaction, with the
   * account's row locked first on PostgreSQL (as `addSecret`); the partial unique index on live
   * thumbprints backs the duplicate check.
   */
  add(clientId: string, key: NewKeyRecord, options: AddKeyOptions): Promise<AddKeyResult> {
    const values = {
      id: key.id,
      client_id: clientId,
      thumbprint: key.thumbprint,
      public_jwk: JSON.stringify(key.publicKey),
      created_at: key.createdAt.getTime(),
      last_used_at: null,
      revoked_at: null,
      expires_at: key.expiresAt?.getTime() ?? null,
    };
    return insertCredential(this.#context, KEYS, clientId, values, options, async (trx) => {
      const twin = await trx
        .selectFrom('client_keys')
        .select('id')
        .where('client_id', '=', clientId)
        .where('thumbprint', '=', key.thumbprint)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return twin === undefined ? undefined : 'duplicate';
    });
  }

  /** Revokes a live key and appends to the change feed in the same transaction, as `revokeSecret`. */
  revoke(clientId: string, keyId: string, at: Date): Promise<KeyRecord | undefined> {
    return revokeCredential(this.#context, KEYS, clientId, keyId, at);
  }

  /** Bookkeeping, not status: no change feed entry, and never moves lastUsedAt backwards. */
  recordUse(clientId: string, keyId: string, at: Date): Promise<void> {
    return recordCredentialUse(this.#context, KEYS.name, clientId, keyId, at);
  }

  /**
   * One statement, atomic on both dialects: insert the digest, or take over an expired entry; a live
   * entry makes it change nothing (a replay). Expired entries are swept at most once a minute.
   */
  async consumeAssertionId(issuer: string, jti: string, expiresAt: Date, now: Date): Promise<boolean> {
    const at = now.getTime();
    const digest = createHash('sha256').update(JSON.stringify([issuer, jti])).digest('base64url');
    const result = await this.#context.db
      .insertInto('used_assertion_ids')
      .values({ digest, expires_at: expiresAt.getTime() })
      .onConflict((conflict) =>
        conflict
          .column('digest')
          .doUpdateSet({ expires_at: (eb) => eb.ref('excluded.expires_at') })
          .where('used_assertion_ids.expires_at', '<=', at),
      )
      .executeTakeFirst();
    if (at - this.#lastSweep >= ASSERTION_SWEEP_MS) {
      // Beside the request, not on its path: the request itself makes one write, and a failed sweep
      // is only tried again at the next one (expired rows count as absent meanwhile).
      this.#lastSweep = at;
      this.#context.db
        .deleteFrom('used_assertion_ids')
        .where('expires_at', '<=', at)
        .execute()
        .catch(() => {
          this.#lastSweep = 0;
        });
    }
    return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
  }
}
