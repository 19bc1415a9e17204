/**
 * @module sql-secret-digests
 * The one write only secrets need: the verified digest of a secret (`secrets.verified_digest`), so
 * every instance can skip bcrypt for a secret one of them verified.
 */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Records a secret's verified digest. Bookkeeping, not status: no change feed entry. The last write wins.
 *
 * @example
 * ```ts
 * declare const digest: string // the verified digest of the secret's value
 * await recordSecretDigest(db, clientId, secretId, digest)
 * ```
 */
export async function recordSecretDigest(db: Kysely<Database>, clientId: string, secretId: string, digest: string): Promise<void> {
  await db.updateTable('secrets').set({ verified_digest: digest }).where('client_id', '=', clientId).where('id', '=', secretId).execute();
}
