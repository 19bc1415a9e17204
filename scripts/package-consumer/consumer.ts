// Type-checked against the installed tarball's declarations (copied as .mts and .cts by
// check-package.sh, so both the import and the require types are compiled), never run.
import express, { type Request } from 'express';
import {
  createAdminApi,
  createServiceAccounts,
  InsufficientScopeError,
  OAuthError,
  type AccountRecord,
  type AccountStore,
  type AddSecretOptions,
  type AddSecretResult,
  type AnyOAuthError,
  type AuditEvent,
  type NewAccountRecord,
  type NewSecretRecord,
  type SecretRecord,
  type ServiceAccountPrincipal,
  type ServiceAccountsOptions,
} from 'express-service-accounts';
import { createPostgresAccountStore, openAccountStore, type PgPool, type SqlAccountStore } from 'express-service-accounts/sql';

/** A host's own store: the published AccountStore interface is implementable as documented. */
class MapAccountStore implements AccountStore {
  readonly #accounts = new Map<string, AccountRecord>();

  async createAccount(input: NewAccountRecord): Promise<AccountRecord> {
    const { secret, ...account } = input;
    const record: AccountRecord = { ...account, enabled: true, secrets: [{ ...secret, lastUsedAt: null, revokedAt: null }] };
    this.#accounts.set(record.clientId, record);
    return record;
  }
  async findAccount(clientId: string): Promise<AccountRecord | undefined> {
    return this.#accounts.get(clientId);
  }
  async listAccounts(): Promise<AccountRecord[]> {
    return [...this.#accounts.values()];
  }
  async setAccountEnabled(clientId: string, enabled: boolean): Promise<AccountRecord | undefined> {
    const account = this.#accounts.get(clientId);
    if (!account) return undefined;
    const updated = { ...account, enabled };
    this.#accounts.set(clientId, updated);
    return updated;
  }
  async addSecret(clientId: string, secret: NewSecretRecord, options: AddSecretOptions): Promise<AddSecretResult> {
    const account = this.#accounts.get(clientId);
    if (!account) return undefined;
    if (account.secrets.filter((s) => s.revokedAt === null).length >= options.maxLiveSecrets) return 'limit_reached';
    const record: SecretRecord = { ...secret, lastUsedAt: null, revokedAt: null };
    this.#accounts.set(clientId, { ...account, secrets: [...account.secrets, record] });
    return record;
  }
  async revokeSecret(clientId: string, secretId: string, at: Date): Promise<SecretRecord | undefined> {
    const account = this.#accounts.get(clientId);
    const secret = account?.secrets.find((s) => s.id === secretId);
    if (!account || !secret) return undefined;
    const revoked = { ...secret, revokedAt: secret.revokedAt ?? at };
    this.#accounts.set(clientId, { ...account, secrets: account.secrets.map((s) => (s.id === secretId ? revoked : s)) });
    return revoked;
  }
  async recordSecretUse(): Promise<void> {}
}

const audit: AuditEvent[] = [];
const options: ServiceAccountsOptions = {
  store: new MapAccountStore(),
  issuer: 'https://api.example.com',
  signingKeys: [{ alg: 'HS256', key: 'a package type test key of 32+ bytes' }],
  onAudit: (event) => {
    audit.push(event);
  },
};
const serviceAccounts = createServiceAccounts(options);
// The admin API alone, for provisioning scripts: no issuer, no signing keys.
const standaloneAdmin = createAdminApi({ store: new MapAccountStore(), maxSecretsPerAccount: 3 });
void standaloneAdmin.listAccounts();
const sqlStore: SqlAccountStore = openAccountStore('sqlite:./accounts.db');
const alsoSql = createServiceAccounts({ ...options, store: sqlStore });
// A host's own pg.Pool (structurally a PgPool) given to the PostgreSQL store.
declare const hostPool: PgPool;
const pgStore: SqlAccountStore = createPostgresAccountStore({ pool: hostPool, schema: 'service_accounts' });
void pgStore;

const app = express();
app.use('/oauth', serviceAccounts.tokenRouter);
app.get('/whoami', serviceAccounts.requireBearer(), (req, res) => {
  // The global Express.Request augmentation ships in the declarations.
  const principal: ServiceAccountPrincipal | undefined = req.serviceAccount;
  const type: 'service_account' | undefined = req.serviceAccount?.type;
  res.json({ principal, type, name: req.serviceAccount?.name, scopes: req.serviceAccount?.scopes });
});
app.post('/jobs', alsoSql.requireBearer({ scope: ['jobs:write'] }), (req: Request, res) => {
  res.status(201).json({ createdBy: req.serviceAccount!.clientId });
});

function status(err: unknown): number {
  if (err instanceof InsufficientScopeError) return err.status;
  if (err instanceof OAuthError) {
    const known = err as AnyOAuthError;
    switch (known.code) {
      case 'invalid_token':
        return known.status;
      default:
        return known.status;
    }
  }
  return 500;
}

// Internals are not published: none of these names resolve from the declarations.
// @ts-expect-error: options are resolved by createServiceAccounts(), not by the user
type ResolveConfig = typeof import('express-service-accounts').resolveConfig;
// @ts-expect-error: the SQL tables are the store's own business
type Tables = import('express-service-accounts/sql').Database;
// @ts-expect-error: the SQL store is built by its factories, not constructed
type SqlStoreClass = typeof import('express-service-accounts/sql').SqlAccountStore;

// @ts-expect-error: an unknown option is a type error
createServiceAccounts({ ...options, tokenLifetme: 60 });
// @ts-expect-error: serviceAccount is read-only data, not a string
const wrong: string = ({} as Request).serviceAccount;

export { status, wrong };
