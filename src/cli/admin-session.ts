/**
 * @module admin-session
 * Opens the admin API of one store for one CLI run, and closes it again so the process exits promptly.
 */
import { randomBytes } from 'node:crypto';
import { createServiceAccounts, type AccountStore, type AdminApi } from '../index.js';
import { openAccountStore } from '../sql/index.js';

/**
 * The `iss` the CLI's instance is configured with. The admin API never signs or verifies a token, but
 * `createServiceAccounts()` needs an issuer and a keyring, so the CLI gives it this placeholder.
 */
const CLI_ISSUER = 'urn:express-service-accounts:cli';

/** The admin API over one store, and how to release it. */
export interface AdminSession {
  readonly admin: AdminApi;
  close(): Promise<void>;
}

/**
 * The store without `watch`: a one-shot command has no cache worth keeping fresh, and watching would
 * start polling timers (and, on PostgreSQL, hold a `LISTEN` connection) for nothing.
 */
function withoutWatch(store: AccountStore): AccountStore {
  return {
    init: () => store.init?.() ?? Promise.resolve(),
    close: () => store.close?.() ?? Promise.resolve(),
    createAccount: (input) => store.createAccount(input),
    findAccount: (clientId) => store.findAccount(clientId),
    listAccounts: () => store.listAccounts(),
    setAccountEnabled: (clientId, enabled) => store.setAccountEnabled(clientId, enabled),
    addSecret: (clientId, secret) => store.addSecret(clientId, secret),
    revokeSecret: (clientId, secretId, at) => store.revokeSecret(clientId, secretId, at),
    recordSecretUse: (clientId, secretId, at) => store.recordSecretUse(clientId, secretId, at),
  };
}

/**
 * Opens the store a URL names (`sqlite:PATH` or `postgres://...`); nothing connects until the first
 * admin call, which also creates the schema when it is missing.
 *
 * @throws TypeError when the URL is not a supported store URL.
 * @example
 * ```ts
 * const session = openAdminSession('sqlite:./.data/service-accounts.db')
 * try { console.log(await session.admin.listAccounts()) } finally { await session.close() }
 * ```
 */
export function openAdminSession(storeUrl: string): AdminSession {
  const store = withoutWatch(openAccountStore(storeUrl));
  const sa = createServiceAccounts({
    store,
    issuer: CLI_ISSUER,
    // A throwaway key, fresh on every run: the admin API never signs a token, but the configuration
    // requires a keyring. Using a random one means no real signing key ever reaches the CLI.
    signingKeys: { alg: 'HS256', key: randomBytes(32) },
    failureLimit: false,
  });
  return { admin: sa.admin, close: () => sa.close() };
}
