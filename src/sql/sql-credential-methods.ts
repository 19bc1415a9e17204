/**
 * @module sql-credential-methods
 * The SQL store's methods on credentials (`addSecret`, `revokeKey`, `recordFederatedCredentialUse`,
 * ...), made from the kind table: the `add`, `revoke` and `recordUse` methods of each kind's row of
 * `CREDENTIAL_KINDS` are its table's (`SQL_CREDENTIAL_TABLES`) under the life they share
 * (`SqlCredentialTable`), called once the migrations are applied. A new kind brings its methods with
 * its rows.
 */
import type { AccountStore, FederatedCredentialRecord, KeyRecord, NewFederatedCredentialRecord, NewKeyRecord, NewSecretRecord, SecretRecord } from '../store/account-store.js';
import { CREDENTIAL_KINDS, type CredentialKind, type CredentialKindName } from '../store/credential-kinds.js';
import type { FederatedRow, KeyRow, SecretRow } from './records.js';
import { SqlCredentialTable } from './sql-credential-table.js';
import { SQL_CREDENTIAL_TABLES } from './sql-credential-tables.js';
import type { SqlCredentialsContext } from './sql-credentials-context.js';

/** Each kind's table under the shared life (a secret has no twins to refuse). */
export interface SqlKindTables {
  readonly secret: SqlCredentialTable<SecretRow, NewSecretRecord, SecretRecord, never>;
  readonly key: SqlCredentialTable<KeyRow, NewKeyRecord, KeyRecord>;
  readonly federated: SqlCredentialTable<FederatedRow, NewFederatedCredentialRecord, FederatedCredentialRecord>;
}

/** A kind's table, as the methods made below call it. */
interface KindTable {
  add(clientId: string, record: never, options: { readonly maxLiveCredentials: number }): Promise<unknown>;
  revoke(clientId: string, id: string, at: Date): Promise<unknown>;
  recordUse(clientId: string, id: string, at: Date): Promise<void>;
}

/** The names of the per-kind methods: each kind's `add`, `revoke` and `recordUse`. */
type KindMethodName = CredentialKind<CredentialKindName>['add' | 'revoke' | 'recordUse'];

/**
 * The per-kind methods of the store, as {@link AccountStore} names and types them: what
 * {@link defineCredentialMethods} puts on the store's prototype.
 *
 * @example
 * ```ts
 * declare const store: SqlCredentialMethods
 * await store.revokeKey('esa_V1StGXR8Z5jdHi6BmyT0aQ2k', 'esak_V1StGXR8Z5jdHi6BmyT0aQ2k', new Date())
 * ```
 */
export type SqlCredentialMethods = Required<Pick<AccountStore, KindMethodName>>;

/**
 * Each kind's table of the SQL store, in one context (its database, dialect and transactions).
 *
 * @example
 * ```ts
 * import type { SqlCredentialsContext } from './sql-credentials-context.js'
 *
 * declare const context: SqlCredentialsContext // the SQL store's database, dialect and transactions
 * const tables = openKindTables(context)
 * await tables.key.recordUse('esa_V1StGXR8Z5jdHi6BmyT0aQ2k', 'esak_V1StGXR8Z5jdHi6BmyT0aQ2k', new Date())
 * ```
 */
export function openKindTables(context: SqlCredentialsContext): SqlKindTables {
  return {
    secret: new SqlCredentialTable(context, SQL_CREDENTIAL_TABLES.secret),
    key: new SqlCredentialTable(context, SQL_CREDENTIAL_TABLES.key),
    federated: new SqlCredentialTable(context, SQL_CREDENTIAL_TABLES.federated),
  };
}

/**
 * Puts each kind's `add`, `revoke` and `recordUse` methods on a store class's prototype, by the names
 * of its `CREDENTIAL_KINDS` row, as methods a class declares are (writable, not enumerable). Each
 * applies the store's migrations (`init()`) first, then calls the kind's table `tablesOf` gives.
 *
 * @example
 * ```ts
 * import type { SqlCredentialsContext } from './sql-credentials-context.js'
 *
 * interface Store extends SqlCredentialMethods {}
 * class Store {
 *   readonly #tables: SqlKindTables
 *   constructor(context: SqlCredentialsContext) {
 *     this.#tables = openKindTables(context)
 *   }
 *   async init(): Promise<void> {}
 *   static {
 *     defineCredentialMethods(this.prototype, (store: Store) => store.#tables)
 *   }
 * }
 * ```
 */
export function defineCredentialMethods<S extends { init(): Promise<void> }>(prototype: S, tablesOf: (store: S) => SqlKindTables): void {
  for (const { kind, add, revoke, recordUse } of Object.values(CREDENTIAL_KINDS)) {
    // The kind's records and results are those its AccountStore methods name: the table of the same kind takes and gives them.
    const table = (store: S): KindTable => tablesOf(store)[kind];
    const methods = {
      async [add](this: S, clientId: string, record: never, options: { readonly maxLiveCredentials: number }) {
        await this.init();
        return table(this).add(clientId, record, options);
      },
      async [revoke](this: S, clientId: string, id: string, at: Date) {
        await this.init();
        return table(this).revoke(clientId, id, at);
      },
      async [recordUse](this: S, clientId: string, id: string, at: Date) {
        await this.init();
        return table(this).recordUse(clientId, id, at);
      },
    };
    for (const [name, method] of Object.entries(methods)) Object.defineProperty(prototype, name, { value: method, writable: true, configurable: true });
  }
}
