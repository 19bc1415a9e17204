/**
 * @module create-admin-api
 * `createAdminApi(options)`: the admin API on its own, over a store, for provisioning scripts and the
 * CLI. It needs no issuer and no signing key, and starts no timer: it never watches the store.
 */
import { createAuditEmitter } from '../audit/audit-events.js';
import { initStore, onceUntilSuccess } from '../runtime/init-store.js';
import { buildAdminApi, type AdminApi } from './admin-api.js';
import { resolveAdminConfig, type AdminApiOptions } from '../admin-options.js';

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
    ready: onceUntilSuccess(() => initStore(config.store, config.storeTimeout)),
    audit: createAuditEmitter(config.onAudit, config.now),
    changed: () => undefined,
  });
}
