/**
 * @module sql-credential-tables
 * Each credential kind's table, one row per kind of `CREDENTIAL_KINDS` (store/credential-kinds.ts):
 * its name, the columns read back, its record ⇄ row mappings and what makes a live twin. The life
 * they share (add under the cap, revoke, record a use) is `SqlCredentialTable` (sql-credential-table.ts).
 */
import type { FederatedCredentialRecord, KeyRecord, NewFederatedCredentialRecord, NewKeyRecord, NewSecretRecord, SecretRecord } from '../store/account-store.js';
import type { CredentialKindName } from '../store/credential-kinds.js';
import { serializeClaims, toFederatedRecord, toKeyRecord, toSecretRecord, type FederatedRow, type KeyRow, type SecretRow } from './records.js';
import type { CredentialTable } from './sql-credential-table.js';

/** The columns of a credential of any kind being added: created now, never used, live, maybe expiring. */
function newCredentialColumns(record: { readonly createdAt: Date; readonly expiresAt?: Date | null }) {
  return { created_at: record.createdAt.getTime(), last_used_at: null, revoked_at: null, expires_at: record.expiresAt?.getTime() ?? null };
}

/**
 * The `secrets` columns of a secret being added.
 *
 * @example
 * ```ts
 * const secret: NewSecretRecord = { id: secretId, hash, createdAt: new Date() }
 * await trx.insertInto('secrets').values(secretValues(clientId, secret)).execute()
 * ```
 */
export function secretValues(clientId: string, secret: NewSecretRecord) {
  return { id: secret.id, client_id: clientId, hash: secret.hash, ...newCredentialColumns(secret) };
}

/** Each kind's table: its rows, its records (what the store is given, and what it gives back). */
interface SqlCredentialTables {
  readonly secret: CredentialTable<SecretRow, NewSecretRecord, SecretRecord>;
  readonly key: CredentialTable<KeyRow, NewKeyRecord, KeyRecord>;
  readonly federated: CredentialTable<FederatedRow, NewFederatedCredentialRecord, FederatedCredentialRecord>;
}

/**
 * Each credential kind's table.
 *
 * @example
 * ```ts
 * import { SqlCredentialTable } from './sql-credential-table.js'
 * import type { SqlCredentialsContext } from './sql-credentials-context.js'
 *
 * declare const context: SqlCredentialsContext // the SQL store's database, dialect and transactions
 * const keys = new SqlCredentialTable(context, SQL_CREDENTIAL_TABLES.key)
 * ```
 */
// The mapped type makes a kind of CREDENTIAL_KINDS without a table a compile error.
export const SQL_CREDENTIAL_TABLES: SqlCredentialTables & { readonly [K in CredentialKindName]: unknown } = {
  // A secret has no live twin to refuse: only the cap applies.
  secret: {
    name: 'secrets',
    columns: ['id', 'hash', 'created_at', 'last_used_at', 'revoked_at', 'verified_digest', 'expires_at'],
    toRecord: toSecretRecord,
    toRow: secretValues,
  },
  key: {
    name: 'client_keys',
    columns: ['id', 'thumbprint', 'public_jwk', 'created_at', 'last_used_at', 'revoked_at', 'expires_at'],
    toRecord: toKeyRecord,
    toRow: (clientId, key) => ({ id: key.id, client_id: clientId, thumbprint: key.thumbprint, public_jwk: JSON.stringify(key.publicKey), ...newCredentialColumns(key) }),
    // Backed by the partial unique index on live thumbprints.
    twin: (key) => ({ thumbprint: key.thumbprint }),
  },
  federated: {
    name: 'federated_credentials',
    columns: ['id', 'issuer', 'subject', 'audience', 'jwks_uri', 'created_at', 'last_used_at', 'revoked_at', 'claims', 'expires_at'],
    toRecord: toFederatedRecord,
    toRow: (clientId, credential) => ({
      id: credential.id,
      client_id: clientId,
      issuer: credential.issuer,
      subject: credential.subject,
      audience: credential.audience,
      jwks_uri: credential.jwksUri,
      claims: serializeClaims(credential.claims),
      ...newCredentialColumns(credential),
    }),
    // Backed by the partial unique indexes on live trusts; the default audience (NULL) equals NULL here.
    twin: (credential) => ({ issuer: credential.issuer, subject: credential.subject, audience: credential.audience }),
  },
};
