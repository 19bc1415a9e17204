/**
 * @module sql-federated-credentials
 * The federated credential methods of the SQL store: add one under the shared cap, refusing a live
 * twin (same issuer, subject and audience); revoke it (announced on the change feed like a key's
 * revocation); record its use; and find the accounts that trust an outside token's issuer and subject.
 */
import type { AddFederatedCredentialResult, AddKeyOptions, FederatedCredentialRecord, NewFederatedCredentialRecord } from '../store/account-store.js';
import { countLiveCredentials, lockAccount } from './account-rows.js';
import { toFederatedRecord } from './records.js';
import type { SqlCredentialsContext } from './sql-credentials-context.js';

const COLUMNS = ['id', 'issuer', 'subject', 'audience', 'jwks_uri', 'created_at', 'last_used_at', 'revoked_at'] as const;

/**
 * `addFederatedCredential`, `revokeFederatedCredential`, `recordFederatedCredentialUse` and
 * `findFederatedClients` over the `federated_credentials` table. The store applies its migrations
 * before calling them.
 *
 * @example
 * ```ts
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
    return this.#context.write(async (trx) => {
      if (!(await lockAccount(trx, this.#context.dialect, clientId))) return undefined;
      const { audience } = credential;
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
      if (twin !== undefined) return 'duplicate';
      if ((await countLiveCredentials(trx, clientId)) >= options.maxLiveCredentials) return 'limit_reached';
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
      };
      await trx.insertInto('federated_credentials').values(values).execute();
      await this.#context.appendChange(trx, clientId);
      return toFederatedRecord(values);
    });
  }

  /** Revokes a live credential and appends to the change feed in the same transaction, as `revokeKey`. */
  revoke(clientId: string, credentialId: string, at: Date): Promise<FederatedCredentialRecord | undefined> {
    return this.#context.write(async (trx) => {
      // Only a live credential of this account is updated: a second revocation keeps the first revokedAt.
      const result = await trx
        .updateTable('federated_credentials')
        .set({ revoked_at: at.getTime() })
        .where('client_id', '=', clientId)
        .where('id', '=', credentialId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (result.numUpdatedRows > 0n) await this.#context.appendChange(trx, clientId);
      const row = await trx
        .selectFrom('federated_credentials')
        .select(COLUMNS)
        .where('client_id', '=', clientId)
        .where('id', '=', credentialId)
        .executeTakeFirst();
      return row && toFederatedRecord(row);
    });
  }

  /** Bookkeeping, not status: no change feed entry, and never moves lastUsedAt backwards. */
  async recordUse(clientId: string, credentialId: string, at: Date): Promise<void> {
    await this.#context.db
      .updateTable('federated_credentials')
      .set({ last_used_at: at.getTime() })
      .where('client_id', '=', clientId)
      .where('id', '=', credentialId)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at.getTime())]))
      .execute();
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
