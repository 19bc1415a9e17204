/**
 * @module sql-assertion-ids
 * The single use of client assertion IDs (`jti`) in the SQL store, shared by every kind of credential
 * that is presented as a signed assertion (public keys, federated credentials): one atomic upsert per
 * assertion, and a sweep of expired IDs.
 */
import { createHash } from 'node:crypto';
import type { SqlCredentialsContext } from './sql-credentials-context.js';

/** Expired assertion IDs are deleted at most this often per store: a sweep is a write of its own. */
const ASSERTION_SWEEP_MS = 60_000;

/**
 * `consumeAssertionId` over the `used_assertion_ids` table. The store applies its migrations before
 * calling it.
 *
 * @example
 * ```ts
 * import type { SqlCredentialsContext } from './sql-credentials-context.js'
 *
 * declare const context: SqlCredentialsContext // the SQL store's database, dialect and transactions
 * declare const jti: string
 * const assertionIds = new SqlAssertionIds(context)
 * const first = await assertionIds.consumeAssertionId(clientId, jti, new Date(Date.now() + 60_000), new Date()) // false: a replay
 * ```
 */
export class SqlAssertionIds {
  readonly #context: SqlCredentialsContext;
  #lastSweep = 0;

  constructor(context: SqlCredentialsContext) {
    this.#context = context;
  }

  /**
   * One statement, atomic on both dialects: insert the digest, or take over an expired entry; a live
   * entry makes it change nothing (a replay). Expired entries are swept at most once a minute.
   */
  async consumeAssertionId(issuer: string, jti: string, expiresAt: Date, now: Date): Promise<boolean> {
    const at = now.getTime();
    const digest = createHash('sha256').update(JSON.stringify([issuer, jti])).digest('base64url');
    const result = await this.#context.writeStatement((db) =>
      db
        .insertInto('used_assertion_ids')
        .values({ digest, expires_at: expiresAt.getTime() })
        .onConflict((conflict) =>
          conflict
            .column('digest')
            .doUpdateSet({ expires_at: (eb) => eb.ref('excluded.expires_at') })
            .where('used_assertion_ids.expires_at', '<=', at),
        )
        .executeTakeFirst(),
    );
    if (at - this.#lastSweep >= ASSERTION_SWEEP_MS) {
      // Beside the request, not on its path: the request itself makes one write, and a failed sweep
      // is only tried again at the next one (expired rows count as absent meanwhile).
      this.#lastSweep = at;
      this.#context
        .writeStatement((db) => db.deleteFrom('used_assertion_ids').where('expires_at', '<=', at).execute())
        .catch(() => {
          this.#lastSweep = 0;
        });
    }
    return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
  }
}
