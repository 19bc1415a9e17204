/**
 * @module sql-federated-credentials
 * The federated credential methods of the SQL store: add one under the shared cap, refusing a live
 * twin (same issuer, subject and audience); revoke it (announced on the change feed like a key's
 * revocation); record its use; and find the accounts that trust an outside token's issuer and subject.
 */
import type { AddFederatedCredentialResult, AddKeyOptions, FederatedCredentialRecord, NewFederatedCredentialRecord } from '../store/account-store.js';
import { serializeClaims, toFederatedRecord, type FederatedRow } from './records.js';
import { insertCredential, recordCredentialUse, revokeCredential, type CredentialTable } from './sql-credential-table.js';
import type { SqlCredentialsContext } from './sql-credentials-context.js';

const FEDERATED: CredentialTable<FederatedRow, FederatedCredentialRecord> = {
  name: 'federated_credentials',
  columns: ['id', 'issuer', 'subject', 'audience', 'jwks_uri', 'created_at', 'last_used_at', 'revoked_at', 'claims', 'expires_at'],
  toRecord: toFederatedRecord,
};

/**
 * `addFederatedCredential`, `revokeFederatedCredential`, `recordFederatedCredentialUse` and
 * `findFederatedClients` over the `federated_credentials` table. The store applies its migrations
 * before calling them.
 *
 * @example
 * ```ts
 * import type { SqlCredentialsContext } from './sql-credentials-context.js'
 *
 * declare const context: SqlCredentialsContext // the SQL store's database, dialect and transactions
 * declare const credential: NewFederatedCredentialRecord // checked, with its ID, by the core
 * const federated = new SqlFederatedCredentials(context)
 * const stored = await federated.add(clientId, credential, { maxLiveCredentials: 5 }) // the credential, undefined, 'limit_reached' or 'duplicate'
 * const clientIds = await federated.findClients(credential.issuer, credential.subject, 2)
 * ```
 */
export class SqlFederatedCredentials {
  readonly #context: SqlCredentialsContext;

  constructor(context: SqlCredentialsContext) {
    this.#context = context;
  }

  /**
   * Checks for a live twin, counts live credentials and inserts in one write transaction, with the
   * account's row locked first on PostgreSQL (as `addSecret` and `addKey`); partial unique indexes on
   * live trusts back the duplicate check.
   */
  add(clientId: string, credential: NewFederatedCredentialRecord, options: AddKeyOptions): Promise<AddFederatedCredentialResult> {
    const { audience } = credential;
    const values = {
      id: credential.id,
      client_id: clientId,
      issuer: credential.issuer,
      subject: credential.subject,
      audience,
      jwks_uri: credential.jwksUri,
      created_at: credential.createdAt.getTime(),
      last_used_at: null,
      revoked_at: null,
      claims: serializeClaims(credential.claims),
      expires_at: credential.expiresAt?.getTime() ?? null,
    };
    return insertCredential(this.#context, FEDERATED, clientId, values, options, async (trx) => {
      const twin = await trx
        .selectFrom('federated_credentials')
        .select('id')
        .where('client_id', '=', clientId)
        .where('issuer', '=', credential.issuer)
        .where('subject', '=', credential.subject)
        // The default audience (NULL) is a value of its own here: `audience = NULL` would match nothing.
        .where('audience', audience === null ? 'is' : '=', audience)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return twin === undefined ? undefined : 'duplicate';
    });
  }

  /** Revokes a live credential of this account and appends to the change feed in the same transaction, as `revokeKey`. */
  revoke(clientId: string, credentialId: string, at: Date): Promise<FederatedCredentialRecord | undefined> {
    return revokeCredential(this.#context, FEDERATED, clientId, credentialId, at);
  }

  /** Bookkeeping, not status: no change feed entry, and never moves lastUsedAt backwards. */
  recordUse(clientId: string, credentialId: string, at: Date): Promise<void> {
    return recordCredentialUse(this.#context, FEDERATED.name, clientId, credentialId, at);
  }

  /**
   * The accounts holding a live credential for exactly this issuer and subject, oldest first (then by
   * client ID, as `listAccounts` orders them), enabled or not. Plain `=`, never `LIKE`: both dialects
   * compare text byte for byte here, so case and wildcard characters never widen the match. Served by
   * the partial index on live (issuer, subject).
   */
  async findClients(issuer: string, subject: string, limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    const rows = await this.#context.db
      .selectFrom('federated_credentials as f')
      .innerJoin('accounts as a', 'a.client_id', 'f.client_id')
      // Distinct: one account may trust the same issuer and subject for two audiences.
      .select(['a.client_id', 'a.created_at'])
      .distinct()
      .where('f.issuer', '=', issuer)
      .where('f.subject', '=', subject)
      .where('f.revoked_at', 'is', null)
      .orderBy('a.created_at')
      .orderBy('a.client_id')
      .limit(limit)
      .execute();
    return rows.map((row) => row.client_id);
  }
}
