/**
 * @module admin-router-options
 * `AdminRouterOptions` → `resolveAdminRouterOptions()`: what the host gives the admin router (who is
 * acting, decided by its own login) checked once, when the router is created.
 */
import type { Request } from 'express';
import type { AdminApi } from '../admin/admin-api.js';
import type { AuditActor } from '../audit/audit-events.js';
import { checkKnownKeys, fail } from '../config-checks.js';
import { isScopeToken } from '../token-grant.js';

/**
 * An administrator of one client account: sees and changes only that client account's service accounts.
 *
 * @example
 * ```ts
 * import type { TenantAdministrator } from 'express-service-accounts'
 *
 * const who: TenantAdministrator = { actor: { id: 'u_42', name: 'Ada Lovelace' }, clientAccountId: 'acme-corp' }
 * ```
 */
export interface TenantAdministrator {
  /** The person acting; named in the audit event of every change they make. */
  readonly actor: AuditActor;
  /** The client account whose service accounts they manage. */
  readonly clientAccountId: string;
}

/**
 * An operator of the whole service: sees and changes every client account's service accounts.
 *
 * @example
 * ```ts
 * import type { AllTenantsOperator } from 'express-service-accounts'
 *
 * const who: AllTenantsOperator = { actor: { id: 'ops-1', name: 'On-call operator' }, allClientAccounts: true }
 * ```
 */
export interface AllTenantsOperator {
  readonly actor: AuditActor;
  readonly allClientAccounts: true;
}

/**
 * Who is acting, as the host's `authorize` returns it.
 *
 * @example
 * ```ts
 * import type { AdminPrincipal } from 'express-service-accounts'
 *
 * const principalOf = (user: { id: string; name: string; tenant: string }): AdminPrincipal => ({
 *   actor: { id: user.id, name: user.name },
 *   clientAccountId: user.tenant,
 * })
 * ```
 */
export type AdminPrincipal = TenantAdministrator | AllTenantsOperator;

/**
 * Options of the admin router (`sa.adminRouter(options)`, {@link createAdminRouter}).
 *
 * @example
 * ```ts
 * import type { AdminRouterOptions } from 'express-service-accounts'
 *
 * // Your own login, which ran before: the signed-in user of a request, if any.
 * declare function currentUser(req: import('express').Request): { id: string; name: string; tenant: string; isAdmin: boolean } | undefined
 *
 * const options: AdminRouterOptions = {
 *   authorize: (req) => {
 *     const user = currentUser(req)
 *     if (!user) return undefined // 401
 *     if (!user.isAdmin) return false // 403
 *     return { actor: { id: user.id, name: user.name }, clientAccountId: user.tenant }
 *   },
 *   challenge: 'Bearer realm="admin"',
 * }
 * ```
 */
export interface AdminRouterOptions {
  /**
   * Called for every request but `OPTIONS` and `GET /openapi.json`, before any body is read. Return who
   * is acting, `undefined` (or `null`) when nobody is signed in (401 `unauthorized`), or `false` when the
   * signed-in person may not administer service accounts (403 `forbidden`). A throw, a rejection or
   * any other value answers 500 and lets nothing through.
   */
  authorize(req: Request): AdminPrincipal | false | null | undefined | Promise<AdminPrincipal | false | null | undefined>;
  /**
   * The `WWW-Authenticate` header of 401 answers (RFC 9110 §11.6.1), such as `Bearer realm="admin"`.
   * @default none (a host whose login is a cookie session has no scheme to name)
   */
  challenge?: string;
  /**
   * Told the cause of every 500 `server-error` answer (an `authorize` that threw or returned something
   * else, an unexpected error of the store or its driver), for your logs: the client only sees that an
   * internal error happened. Never receives a secret the router created. A hook that throws is ignored.
   * @default none
   */
  onError?: (error: unknown, req: Request) => void;
  /**
   * Scopes whose meaning crosses client accounts in your app (a route that reports on every client
   * account, say), which only an all-tenants operator may grant: an administrator of one client
   * account who creates an account with one is answered 403 `forbidden`. Each entry is a scope, or a
   * prefix ending in `*` that stands for every scope starting with it (`admin:*`). The library's own
   * `token:introspect` never crosses client accounts (docs/revocation-and-introspection.md), so it
   * need not be listed.
   * @default [] (a client account's administrator may grant any scope)
   * @example
   * ```ts
   * declare function principalOf(req: import('express').Request): AdminPrincipal | undefined // your login
   *
   * app.use('/admin', sa.adminRouter({ authorize: principalOf, operatorOnlyScopes: ['admin:*', 'reports:all-tenants'] }))
   * ```
   */
  operatorOnlyScopes?: readonly string[];
}

/**
 * Options of {@link createAdminRouter}: the router's options and the admin API it runs on.
 *
 * @example
 * ```ts
 * import { createAdminApi, createAdminRouter, type AdminPrincipal, type CreateAdminRouterOptions } from 'express-service-accounts'
 *
 * declare function principalOf(req: import('express').Request): AdminPrincipal | undefined // your login
 *
 * const options: CreateAdminRouterOptions = { admin: createAdminApi({ store }), authorize: (req) => principalOf(req) }
 * app.use('/admin', createAdminRouter(options))
 * ```
 */
export interface CreateAdminRouterOptions extends AdminRouterOptions {
  /** The admin API every operation goes through (`sa.admin` or `createAdminApi(...)`). */
  admin: AdminApi;
}

/** {@link CreateAdminRouterOptions}, checked. */
export interface ResolvedAdminRouterOptions {
  readonly admin: AdminApi;
  readonly authorize: AdminRouterOptions['authorize'];
  readonly challenge: string | undefined;
  readonly onError: AdminRouterOptions['onError'];
  readonly operatorOnlyScopes: readonly string[];
}

const KNOWN: ReadonlySet<string> = new Set<keyof CreateAdminRouterOptions>(['admin', 'authorize', 'challenge', 'onError', 'operatorOnlyScopes']);

/**
 * Checks the options once; a bad or unknown one throws a `TypeError` naming it.
 *
 * @example
 * ```ts
 * declare function principalOf(req: import('express').Request): AdminPrincipal | undefined // your login
 *
 * const { admin, authorize } = resolveAdminRouterOptions({ admin: sa.admin, authorize: principalOf })
 * ```
 */
export function resolveAdminRouterOptions(options: CreateAdminRouterOptions): ResolvedAdminRouterOptions {
  checkKnownKeys(options, KNOWN);
  const { admin, authorize, challenge, onError, operatorOnlyScopes = [] } = options;
  if (onError !== undefined && typeof onError !== 'function') fail('onError', 'must be a function of the error and the request');
  if (typeof authorize !== 'function') fail('authorize', 'must be a function returning who is acting (see docs/admin-api.md)');
  if (typeof admin !== 'object' || admin === null || typeof admin.withActor !== 'function') fail('admin', 'must be an admin API');
  // eslint-disable-next-line no-control-regex
  if (challenge !== undefined && (typeof challenge !== 'string' || challenge.trim() === '' || /[\u0000-\u001f\u007f]/.test(challenge))) {
    fail('challenge', 'must be a WWW-Authenticate value such as Bearer realm="admin"');
  }
  if (!Array.isArray(operatorOnlyScopes) || !operatorOnlyScopes.every((scope) => isScopeToken(scope) && scope !== '*')) {
    fail('operatorOnlyScopes', 'must be a list of scopes, each a scope token or a prefix ending in * (such as admin:*)');
  }
  return Object.freeze({ admin, authorize, challenge, onError, operatorOnlyScopes: Object.freeze([...operatorOnlyScopes]) });
}
