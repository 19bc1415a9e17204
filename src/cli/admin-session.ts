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
 * The issuer identifier the CLI shows as the audience of a federated credential registered without
 * one: `TOKEN_ISSUER`, else the example server's default, `http://localhost:PORT` (`PORT` defaulting
 * to 3000). Only what is printed depends on it: the store keeps "this server's issuer identifier".
 *
 * @example
 * ```ts
 * cliIssuer({ TOKEN_ISSUER: 'https://api.example.com' }) // 'https://api.example.com'
 * cliIssuer({}) // 'http://localhost:3000'
 * ```
 */
export function cliIssuer(env: NodeJS.ProcessEnv): string {
  return env.TOKEN_ISSUER || `http://localhost:${env.PORT || 3000}`;
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
  return { admin: createAdminApi({ store, issuer: cliIssuer(process.env) }), close: async () => store.close?.() };
}
