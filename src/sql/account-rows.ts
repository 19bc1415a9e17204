/**
 * @module account-rows
 * The account query of the SQL store: an account with every credential (secrets, public keys and
 * federated credentials) in one round trip, folded into records; the live-credential count of the
 * shared cap; and the row lock that makes a count and an insert one atomic step.
 */
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { AccountRecord, FederatedCredentialRecord, KeyRecord, SecretRecord } from '../store/account-store.js';
import { parseResources, parseScopes, toFederatedRecord, toKeyRecord, toNumber, toSecretRecord, type DbInteger } from './records.js';
import type { Database, SqlDialectName } from './schema.js';

/**
 * An account joined (left join) with one of its credentials, a secret, a key or a federated
 * credential; the credential columns are null when it has none. `credential_material` is a secret's
 * hash or a key's JWK, `credential_verified_digest` a secret's verified digest; the `credential_issuer`, `_subject`, `_audience` and `_jwks_uri` columns are a
 * federated credential's.
 *
 * @example
 * ```ts
 * const rows: AccountCredentialRow[] = await selectAccountRows(db).execute()
 * const withoutCredentials = rows.filter((row) => row.credential_id === null).map((row) => row.client_id)
 * ```
 */
export interface AccountCredentialRow {
  client_id: string;
  name: string;
  client_account_id: string | null;
  scopes: string;
  resources: string | null;
  access_token_lifetime: DbInteger | null;
  dpop_bound_access_tokens: DbInteger | null;
  enabled: DbInteger;
  created_at: DbInteger;
  credential_kind: string | null;
  credential_id: string | null;
  credential_material: string | null;
  credential_thumbprint: string | null;
  credential_issuer: string | null;
  credential_subject: string | null;
  credential_audience: string | null;
  credential_jwks_uri: string | null;
  /** A federated credential's claim conditions (JSON), null for none and for other credentials. */
  credential_claims: string | null;
  credential_created_at: DbInteger | null;
  credential_last_used_at: DbInteger | null;
  credential_revoked_at: DbInteger | null;
  credential_expires_at: DbInteger | null;
  /** A secret's verified digest (null for other credentials). */
  credential_verified_digest: string | null;
}

/**
 * Folds joined account/credential rows into records, keeping the row order (accounts oldest first,
 * each account's secrets, keys and federated credentials oldest first).
 *
 * @example
 * ```ts
 * const accounts = toAccountRecords(await selectAccountRows(db).execute())
 * ```
 */
export function toAccountRecords(rows: readonly AccountCredentialRow[]): AccountRecord[] {
  interface Entry {
    row: AccountCredentialRow;
    secrets: SecretRecord[];
    keys: KeyRecord[];
    federated: FederatedCredentialRecord[];
  }
  const accounts = new Map<string, Entry>();
  for (const row of rows) {
    let entry = accounts.get(row.client_id);
    if (!entry) {
      entry = { row, secrets: [], keys: [], federated: [] };
      accounts.set(row.client_id, entry);
    }
    const { credential_id: id, credential_material: material, credential_created_at: createdAt } = row;
    if (id === null || createdAt === null) continue;
    const dates = { created_at: createdAt, last_used_at: row.credential_last_used_at, revoked_at: row.credential_revoked_at, expires_at: row.credential_expires_at };
    if (row.credential_kind === 'secret' && material !== null) {
      entry.secrets.push(toSecretRecord({ id, hash: material, ...dates, verified_digest: row.credential_verified_digest }));
    }
    else if (row.credential_kind === 'key' && material !== null && row.credential_thumbprint !== null) {
      entry.keys.push(toKeyRecord({ id, thumbprint: row.credential_thumbprint, public_jwk: material, ...dates }));
    } else if (row.credential_kind === 'federated' && row.credential_issuer !== null && row.credential_subject !== null) {
      const trust = { issuer: row.credential_issuer, subject: row.credential_subject, audience: row.credential_audience };
      entry.federated.push(toFederatedRecord({ id, ...trust, jwks_uri: row.credential_jwks_uri, claims: row.credential_claims, ...dates }));
    }
  }
  return [...accounts.values()].map(({ row, secrets, keys, federated }) => ({
    clientId: row.client_id,
    name: row.name,
    clientAccountId: row.client_account_id,
    scopes: parseScopes(row.scopes),
    resources: parseResources(row.resources),
    accessTokenLifetime: row.access_token_lifetime === null ? null : toNumber(row.access_token_lifetime),
    dpopBoundAccessTokens: row.dpop_bound_access_tokens !== null && toNumber(row.dpop_bound_access_tokens) !== 0,
    enabled: toNumber(row.enabled) !== 0,
    createdAt: new Date(toNumber(row.created_at)),
    secrets,
    keys,
    federated,
  }));
}

/** Which accounts {@link selectAccountRows} reads: one by client ID, one client account's, or every one. */
export type AccountRowsFilter = { readonly clientId: string } | { readonly clientAccountId: string } | Record<string, never>;

/**
 * Selects accounts with their credentials, secrets, keys and federated credentials, as one left join
 * on their union (one snapshot, one round trip), accounts oldest first and each account's credentials
 * oldest first. Feed the rows to {@link toAccountRecords}.
 *
 * The filter is applied to the accounts and to each credential table of the union: SQLite does not
 * carry a join's condition into a union, so without it every read of one account would read every
 * credential of the database (about 35 ms at 20,000 accounts).
 *
 * @example
 * ```ts
 * const [account] = toAccountRecords(await selectAccountRows(db, { clientId }).execute())
 * ```
 */
export function selectAccountRows(db: Kysely<Database>, filter: AccountRowsFilter = {}) {
  const none = sql<string | null>`null`;
  /** The accounts' own rows of a credential table: the filter, said of its `client_id`. */
  const ofAccounts = <T extends SelectQueryBuilder<Database, 'secrets' | 'client_keys' | 'federated_credentials', object>>(query: T): T =>
    'clientId' in filter
      ? (query.where('client_id', '=', filter.clientId) as T)
      : 'clientAccountId' in filter
        ? (query.where('client_id', 'in', db.selectFrom('accounts').select('client_id').where('client_account_id', '=', filter.clientAccountId)) as T)
        : query;
  const credentials = ofAccounts(
    db
      .selectFrom('secrets')
      .select([sql<string>`'secret'`.as('kind'), 'client_id', 'id', sql<string | null>`${sql.ref('hash')}`.as('material'), none.as('thumbprint')])
      .select([none.as('issuer'), none.as('subject'), none.as('audience'), none.as('jwks_uri'), none.as('claims')])
      .select(['created_at', 'last_used_at', 'revoked_at', 'verified_digest', 'expires_at']),
  )
    .unionAll(
      ofAccounts(
        db
          .selectFrom('client_keys')
          .select([sql<string>`'key'`.as('kind'), 'client_id', 'id', 'public_jwk as material', 'thumbprint'])
          .select([none.as('issuer'), none.as('subject'), none.as('audience'), none.as('jwks_uri'), none.as('claims')])
          .select(['created_at', 'last_used_at', 'revoked_at', none.as('verified_digest'), 'expires_at']),
      ),
    )
    .unionAll(
      ofAccounts(
        db
          .selectFrom('federated_credentials')
          .select([sql<string>`'federated'`.as('kind'), 'client_id', 'id', none.as('material'), none.as('thumbprint')])
          .select(['issuer', 'subject', 'audience', 'jwks_uri', 'claims'])
          .select(['created_at', 'last_used_at', 'revoked_at', none.as('verified_digest'), 'expires_at']),
      ),
    );
  const accounts = db.selectFrom('accounts as a');
  const filtered =
    'clientId' in filter
      ? accounts.where('a.client_id', '=', filter.clientId)
      : 'clientAccountId' in filter
        ? accounts.where('a.client_account_id', '=', filter.clientAccountId)
        : accounts;
  return filtered
    .leftJoin(credentials.as('c'), 'c.client_id', 'a.client_id')
    .select(['a.client_id', 'a.name', 'a.client_account_id', 'a.scopes', 'a.resources', 'a.access_token_lifetime', 'a.dpop_bound_access_tokens', 'a.enabled', 'a.created_at'])
    .select(['c.kind as credential_kind', 'c.id as credential_id', 'c.material as credential_material'])
    .select(['c.thumbprint as credential_thumbprint', 'c.created_at as credential_created_at'])
    .select(['c.issuer as credential_issuer', 'c.subject as credential_subject'])
    .select(['c.audience as credential_audience', 'c.jwks_uri as credential_jwks_uri', 'c.claims as credential_claims'])
    .select(['c.last_used_at as credential_last_used_at', 'c.revoked_at as credential_revoked_at'])
    .select('c.verified_digest as credential_verified_digest')
    .select('c.expires_at as credential_expires_at')
    .orderBy('a.created_at')
    .orderBy('a.client_id')
    .orderBy('c.created_at')
    .orderBy('c.id');
}

/**
 * Inside a write transaction, makes the account's later count and insert one atomic step: on
 * PostgreSQL it locks the account's row (`select ... for update`), so concurrent adds from any process
 * run one after another; SQLite's `BEGIN IMMEDIATE` already holds the database's write lock.
 * @returns whether the account exists.
 *
 * @example
 * ```ts
 * import { runWriteTransaction } from './write-transaction.js'
 *
 * await runWriteTransaction(db, 'postgres', async (trx) => {
 *   if (!(await lockAccount(trx, 'postgres', clientId))) return undefined // unknown client ID
 *   return countLiveCredentials(trx, clientId) // then insert, or refuse when full
 * })
 * ```
 */
export async function lockAccount(trx: Kysely<Database>, dialect: SqlDialectName, clientId: string): Promise<boolean> {
  let account = trx.selectFrom('accounts').select('client_id').where('client_id', '=', clientId);
  if (dialect === 'postgres') account = account.forUpdate();
  return (await account.executeTakeFirst()) !== undefined;
}

/**
 * The number of live (unrevoked) credentials of an account, secrets, keys and federated credentials
 * together: what the cap of `addSecret`, `addKey` and `addFederatedCredential` counts.
 *
 * @example
 * ```ts
 * declare const cap: AddKeyOptions // what addKey (or addSecret) received
 * // In the write transaction, after lockAccount:
 * const full = (await countLiveCredentials(trx, clientId)) >= cap.maxLiveCredentials // then store nothing: 'limit_reached'
 * ```
 */
export async function countLiveCredentials(db: Kysely<Database>, clientId: string): Promise<number> {
  const count = async (table: 'secrets' | 'client_keys' | 'federated_credentials'): Promise<number> => {
    const { live } = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('live'))
      .where('client_id', '=', clientId)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    return toNumber(live);
  };
  return (await count('secrets')) + (await count('client_keys')) + (await count('federated_credentials'));
}
