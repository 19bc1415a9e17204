/**
 * @module sql-federated-clients
 * The one query only federated credentials need: which accounts trust an outside token's issuer and
 * subject.
 */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * The accounts holding a live credential for exactly this issuer and subject, oldest first (then by
 * client ID, as `listAccounts` orders them), enabled or not; with `now`, not past its expiry either. Plain `=`, never `LIKE`: both dialects
 * compare text byte for byte here, so case and wildcard characters never widen the match. Served by
 * the partial index on live (issuer, subject).
 *
 * @example
 * ```ts
 * const clientIds = await findFederatedClients(db, 'https://token.actions.githubusercontent.com', 'repo:acme/billing:ref:refs/heads/main', 2)
 * ```
 */
export async function findFederatedClients(db: Kysely<Database>, issuer: string, subject: string, limit: number, now?: Date): Promise<string[]> {
  if (limit <= 0) return [];
  const rows = await db
    .selectFrom('federated_credentials as f')
    .innerJoin('accounts as a', 'a.client_id', 'f.client_id')
    // Distinct: one account may trust the same issuer and subject for two audiences.
    .select(['a.client_id', 'a.created_at'])
    .distinct()
    .where('f.issuer', '=', issuer)
    .where('f.subject', '=', subject)
    .where('f.revoked_at', 'is', null)
    .$if(now !== undefined, (query) => query.where((eb) => eb.or([eb('f.expires_at', 'is', null), eb('f.expires_at', '>', now!.getTime())])))
    .orderBy('a.created_at')
    .orderBy('a.client_id')
    .limit(limit)
    .execute();
  return rows.map((row) => row.client_id);
}
