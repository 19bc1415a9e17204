/**
 * @module admin-session
 * Opens the admin API of one store for one CLI run, and closes the store again so the process exits
 * promptly. The standalone admin API never watches the store, so no timer or `LISTEN` connection
 * outlives the command.
 */
import { createAdminApi, type AdminApi } from '../index.js';
import { openAccountStore } from '../sql/index.js';

/** The admin API over one store, and how to release it. */
export interface AdminSession {
  readonly admin: AdminApi;
  close(): Promise<void>;
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
  const store = openAccountStore(storeUrl);
  return { admin: createAdminApi({ store }), close: async () => store.close?.() };
}
