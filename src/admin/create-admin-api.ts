/**
 * @module create-admin-api
 * `createAdminApi(options)`: the admin API on its own, over a store, for provisioning scripts and the
 * CLI. It needs no issuer and no signing key, and starts no timer: it never watches the store.
 */
import { createAuditEmitter } from '../audit/audit-events.js';
import { callStore } from '../store/call-store.js';
import type { AccountStore } from '../store/account-store.js';
import { buildAdminApi, type AdminApi } from './admin-api.js';
import { resolveAdminConfig, type AdminApiOptions } from './admin-options.js';

/** `init()` may migrate a schema: it gets at least this long, whatever `storeTimeout` says. */
const MIN_INIT_TIMEOUT_MS = 30_000;

/** Runs `store.init()` once, before the first call; a failed init is retried by the next call. */
function initOnce(store: AccountStore, storeTimeout: number): () => Promise<void> {
  let initializing: Promise<void> | undefined;
  return () => {
    if (!store.init) return Promise.resolve();
    initializing ??= callStore(() => store.init!(), Math.max(storeTimeout, MIN_INIT_TIMEOUT_MS), 'init').catch(
      (err: unknown) => {
        initializing = undefined;
        throw err;
      },
    );
    return initializing;
  };
}

/**
 * Creates the admin API over a store, without a token endpoint: no issuer, no signing keys. Options
 * are validated once; a bad or unknown option throws a `TypeError` naming it. The store is
 * initialised (`init()`) lazily by the first call. Closing the store when done is the caller's job.
 *
 * Inside an app, use `createServiceAccounts(...).admin` instead: it is the same API, and it also drops
 * that instance's cached status of an account at once when the account changes.
 *
 * @example
 * ```ts
 * import { createAdminApi } from 'express-service-accounts'
 * import { createSqliteAccountStore } from 'express-service-accounts/sql'
 *
 * // A provisioning script: one account, its credentials printed once.
 * const store = createSqliteAccountStore({ filename: './.data/service-accounts.db' })
 * const admin = createAdminApi({ store, maxSecretsPerAccount: 3 })
 * try {
 *   const account = await admin.createAccount({ name: 'procurement-portal', scopes: ['jobs:write'] })
 *   console.log(JSON.stringify({ client_id: account.clientId, client_secret: account.secret.value }))
 * } finally {
 *   await store.close()
 * }
 * ```
 */
export function createAdminApi(options: AdminApiOptions): AdminApi {
  const config = resolveAdminConfig(options);
  return buildAdminApi({
    config,
    ready: initOnce(config.store, config.storeTimeout),
    audit: createAuditEmitter(config.onAudit, config.now),
    changed: () => undefined,
  });
}
