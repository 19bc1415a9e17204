/**
 * @module admin-session
 * Opens the admin API of one store for one CLI run, and closes the store again so the process exits
 * promptly. The standalone admin API never watches the store, so no timer or `LISTEN` connection
 * outlives the command.
 */
import { createAdminApi, type AdminApi } from '../index.js';
import { openAccountStore } from '../sql/index.js';
import { MAX_TOKEN_LIFETIME } from '../token-grant.js';
import { parseDuration } from '../admin/credential-expiry.js';

/** The admin API over one store, and how to release it. */
export interface AdminSession {
  readonly admin: AdminApi;
  close(): Promise<void>;
}

/**
 * The issuer identifier the CLI shows as the audience of a federated credential registered without
 * one: `TOKEN_ISSUER` (trimmed), as the example server reads it, and `undefined` without it. The CLI
 * does not guess: the server's `issuer` option may be anything (`https://api.example.com` in the
 * getting-started app, `http://localhost:PORT` in the example server), and an audience printed from a
 * guess would have workloads request tokens the server refuses. Without it the audience is shown as
 * `null`, which means "the server's `issuer` option". Only what is printed depends on it: the store
 * keeps "this server's issuer identifier".
 *
 * @example
 * ```ts
 * cliIssuer({ TOKEN_ISSUER: 'https://api.example.com' }) // 'https://api.example.com'
 * cliIssuer({ PORT: '3000' }) // undefined: shown as null, the server's issuer option
 * ```
 */
export function cliIssuer(env: NodeJS.ProcessEnv): string | undefined {
  return env.TOKEN_ISSUER?.trim() || undefined;
}

/**
 * The token lifetime, in seconds, of the server whose tokens `token revoke` names, read from the
 * environment as the example server reads it (`TOKEN_TTL_SECONDS`, 1 to 86400). `undefined` when it is
 * not set: a token revoked by ID is then kept on the deny-list for the longest lifetime a server accepts
 * (a day, plus the largest clock tolerance). With `MAX_TOKEN_TTL_SECONDS`, the same for the longest
 * lifetime an account may be given (the servers' `maxAccessTokenLifetime`, which also keeps revoked
 * tokens listed long enough).
 *
 * @throws TypeError when it is set to anything but a whole number of seconds from 1 to 86400 (the
 * example server refuses to start with it too), so a mistyped setting is never silently dropped.
 * @example
 * ```ts
 * cliTokenLifetime({ TOKEN_TTL_SECONDS: '900' }) // 900
 * cliTokenLifetime({}) // undefined
 * // The longest lifetime an account may be given (the servers' maxAccessTokenLifetime):
 * cliTokenLifetime({ MAX_TOKEN_TTL_SECONDS: '7200' }, 'MAX_TOKEN_TTL_SECONDS') // 7200
 * ```
 */
export function cliTokenLifetime(env: NodeJS.ProcessEnv, name: 'TOKEN_TTL_SECONDS' | 'MAX_TOKEN_TTL_SECONDS' = 'TOKEN_TTL_SECONDS'): number | undefined {
  const text = env[name]?.trim();
  if (!text) return undefined;
  const seconds = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(seconds >= 1 && seconds <= MAX_TOKEN_LIFETIME)) {
    throw new TypeError(`${name} must be a whole number of seconds from 1 to ${MAX_TOKEN_LIFETIME}, got ${JSON.stringify(text.slice(0, 40))}`);
  }
  return seconds;
}

/**
 * The servers' `maxCredentialLifetime` (docs/rotation.md#expiring-secrets), read from
 * `MAX_CREDENTIAL_LIFETIME` as the example server reads it: a duration such as `90d`, `12h`, `30m`,
 * `4s`, or whole seconds. `undefined` when unset: new credentials need no expiry.
 *
 * @throws TypeError when it is set to anything else, so a mistyped policy is never silently dropped.
 * @example
 * ```ts
 * cliCredentialLifetime({ MAX_CREDENTIAL_LIFETIME: '90d' }) // 7776000
 * cliCredentialLifetime({}) // undefined
 * ```
 */
export function cliCredentialLifetime(env: NodeJS.ProcessEnv): number | undefined {
  const text = env.MAX_CREDENTIAL_LIFETIME?.trim();
  if (!text) return undefined;
  const seconds = parseDuration(text);
  if (seconds === undefined) throw new TypeError(`MAX_CREDENTIAL_LIFETIME must be a duration such as 90d, 12h, 30m or 4s, got ${JSON.stringify(text.slice(0, 40))}`);
  return seconds;
}

/**
 * The issuers `federated add` accepts, from `--allowed-issuers` or `FEDERATION_ALLOWED_ISSUERS` as the
 * example server reads it: issuer URLs separated by commas, `none` (an empty list), or `any` (and
 * unset): any issuer, `undefined`. The URLs are checked by the admin API.
 *
 * @example
 * ```ts
 * cliAllowedIssuers('https://token.actions.githubusercontent.com, https://k8s.example.com') // both
 * cliAllowedIssuers('none') // []
 * cliAllowedIssuers(undefined) // undefined: any issuer
 * ```
 */
export function cliAllowedIssuers(raw: string | undefined): readonly string[] | undefined {
  const value = raw?.trim() ?? '';
  if (value === '' || value.toLowerCase() === 'any') return undefined;
  if (value.toLowerCase() === 'none') return [];
  return value.split(',').map((issuer) => issuer.trim());
}

/** What an admin session is opened with besides its store. */
export interface AdminSessionOptions {
  /** The only issuers federated credentials may name (the admin API's `allowedIssuers`); `undefined`: any. */
  readonly allowedIssuers?: readonly string[] | undefined;
}

/**
 * Opens the store a URL names (`sqlite:PATH` or `postgres://...`); nothing connects until the first
 * admin call, which also creates the schema when it is missing.
 *
 * @throws TypeError when the URL is not a supported store URL, or an allowed issuer is no issuer URL.
 * @example
 * ```ts
 * const session = openAdminSession('sqlite:./.data/service-accounts.db')
 * try { console.log(await session.admin.listAccounts()) } finally { await session.close() }
 * ```
 */
export function openAdminSession(storeUrl: string, options: AdminSessionOptions = {}): AdminSession {
  const store = openAccountStore(storeUrl);
  const issuer = cliIssuer(process.env);
  let admin: AdminApi;
  try {
    const tokenLifetime = cliTokenLifetime(process.env);
    const maxAccessTokenLifetime = cliTokenLifetime(process.env, 'MAX_TOKEN_TTL_SECONDS');
    if (maxAccessTokenLifetime !== undefined && tokenLifetime !== undefined && maxAccessTokenLifetime < tokenLifetime) {
      // As the example server: the longest lifetime an account may be given is at least the default one.
      throw new TypeError(`MAX_TOKEN_TTL_SECONDS must be at least TOKEN_TTL_SECONDS (${tokenLifetime}), got ${maxAccessTokenLifetime}`);
    }
    const maxCredentialLifetime = cliCredentialLifetime(process.env);
    admin = createAdminApi({
      store,
      issuer,
      ...(options.allowedIssuers !== undefined && { allowedIssuers: options.allowedIssuers }),
      ...(tokenLifetime !== undefined && { tokenLifetime }),
      ...(maxAccessTokenLifetime !== undefined && { maxAccessTokenLifetime }),
      ...(maxCredentialLifetime !== undefined && { maxCredentialLifetime }),
    });
  } catch (error) {
    void Promise.resolve(store.close?.()).catch(() => undefined);
    throw error;
  }
  return { admin, close: async () => store.close?.() };
}
