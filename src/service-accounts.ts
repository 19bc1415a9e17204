/**
 * @module service-accounts
 * `createServiceAccounts(options)`: resolves the options once and hands out the token router,
 * `requireBearer()`, the admin API and the discovery documents, all sharing one configuration.
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { resolveConfig, type ServiceAccountsOptions } from './config.js';
import { describeConfig, type ServiceAccountsConfig } from './service-accounts-config.js';
import { createRuntime } from './create-runtime.js';
import { createTokenEndpoint } from './token-endpoint/token-endpoint.js';
import { createRequireBearer, type RequireBearerOptions } from './bearer/require-bearer.js';
import { createRequireActor, type RequireActorOptions } from './actor/require-actor.js';
import { buildAdminApi, type AdminApi } from './admin/admin-api.js';
import type { AdminRouterOptions } from './admin-router/admin-router-options.js';
import { createAdminRouter } from './admin-router/create-admin-router.js';
import type { ConsoleRouterOptions } from './console/console-router-options.js';
import { createConsoleRouter } from './console/create-console-router.js';
import { createHealthCheck, type HealthReport } from './observability/health.js';
import { supportsKeyCredentials } from './store/credential-kinds.js';
import {
  buildAuthorizationServerMetadata,
  type AuthorizationServerMetadata,
  type MetadataOptions,
} from './discovery/authorization-server-metadata.js';

/**
 * What `createServiceAccounts()` returns.
 *
 * @example
 * ```ts
 * import { createServiceAccounts, MemoryAccountStore, type ServiceAccounts } from 'express-service-accounts'
 *
 * const sa: ServiceAccounts = createServiceAccounts({
 *   store: new MemoryAccountStore(),
 *   issuer: 'https://api.example.com',
 *   signingKeys: [{ alg: 'HS256', key: process.env.TOKEN_SIGNING_KEY! }],
 * })
 * await sa.ready() // optional: initialise the store now rather than on the first request
 * app.use('/oauth', sa.tokenRouter)
 * app.get('/api/jobs', sa.requireBearer({ scope: 'jobs:read' }), (req, res) => res.json([]))
 * process.once('SIGTERM', () => void sa.close())
 * ```
 */
export interface ServiceAccounts {
  /**
   * The token endpoint: mount it where you like; it serves `POST {mount}/token`. It is a pair of
   * middlewares (the second renders errors the host's own body parsers raise on that path).
   */
  readonly tokenRouter: [RequestHandler, ErrorRequestHandler];
  /** Middleware for protected routes. */
  requireBearer(options?: RequireBearerOptions): RequestHandler;
  /**
   * Middleware for routes that people signed in through your app and service accounts both call: a
   * request with a bearer token goes through {@link ServiceAccounts.requireBearer} (refused exactly
   * as there), any other through your app's own authentication. Either way `req.actor` holds one
   * {@link Actor}. Throws a `TypeError` naming a bad option. See docs/hirers-and-service-accounts.md.
   *
   * @example
   * ```ts
   * import passport from 'passport'
   *
   * app.use(passport.session()) // the app's own session login fills req.user
   * const signedIn = (req: import('express').Request) => {
   *   const user = req.user as { id: string; name: string; roles: string[] } | undefined
   *   return user && { id: user.id, name: user.name, roles: user.roles }
   * }
   * app.post('/api/jobs', sa.requireActor({ user: signedIn, scope: 'jobs:write' }), (req, res) => {
   *   res.status(201).json({ createdBy: { type: req.actor!.type, id: req.actor!.id, name: req.actor!.name } })
   * })
   * ```
   */
  requireActor(options: RequireActorOptions): RequestHandler;
  /** Provisioning: accounts and secrets. */
  readonly admin: AdminApi;
  /**
   * The admin HTTP API over {@link ServiceAccounts.admin}, for a host's own UI: each person manages
   * their own client account's service accounts (docs/admin-api.md). Mount it behind your login.
   *
   * @example
   * ```ts
   * // Your own login, which ran before: the signed-in user of a request, if any.
   * declare function currentUser(req: import('express').Request): { id: string; name: string; tenant: string } | undefined
   *
   * app.use('/admin', sa.adminRouter({
   *   authorize: (req) => {
   *     const user = currentUser(req)
   *     return user && { actor: { id: user.id, name: user.name }, clientAccountId: user.tenant }
   *   },
   * }))
   * ```
   */
  adminRouter(options: AdminRouterOptions): RequestHandler;
  /**
   * The self-service page over {@link ServiceAccounts.admin}: a signed-in administrator of a client
   * account lists, creates, rotates, revokes and disables its service accounts in the browser. It
   * talks to the admin router (served under its own `/api`) with the same `authorize`. Mount it behind
   * your login and open it with a trailing slash (docs/console.md).
   *
   * @example
   * ```ts
   * // Your own login, which ran before: the signed-in user of a request, if any.
   * declare function currentUser(req: import('express').Request): { id: string; name: string; tenant: string } | undefined
   *
   * app.use('/console', sa.consoleRouter({
   *   authorize: (req) => {
   *     const user = currentUser(req)
   *     return user && { actor: { id: user.id, name: user.name }, clientAccountId: user.tenant }
   *   },
   *   signInUrl: '/login',
   * }))
   * ```
   */
  consoleRouter(options: ConsoleRouterOptions): RequestHandler;
  /** RFC 8414 metadata for this token endpoint. */
  authorizationServerMetadata(options: MetadataOptions): AuthorizationServerMetadata;
  /** The public keys of the keyring as a JWK Set (empty with HS256 only). Never holds a private or shared key. */
  readonly jwks: { readonly keys: readonly Record<string, unknown>[] };
  /** The settings this instance runs with, defaults filled in: no key, store or hook (see {@link ServiceAccountsConfig}). */
  readonly config: ServiceAccountsConfig;
  /** Initialises the store and starts watching for changes; called lazily by the first request otherwise. */
  ready(): Promise<void>;
  /**
   * The state of each part this instance depends on: the store (probed with a read), the change feed,
   * the limiter's backend and the secret-check queue, with an overall `ok`, `degraded` or
   * `unavailable`. Never throws; answers within `storeTimeout`. Concurrent calls share one probe, and a
   * probe's result serves every call for 1 second (`checkedAt` says when it was taken), so readiness
   * requests cost the store at most one read a second. See docs/observability.md.
   *
   * @example
   * ```ts
   * app.get('/readyz', async (_req, res) => {
   *   const report = await sa.health()
   *   res.status(report.store.status === 'ok' ? 200 : 503).json(report)
   * })
   * ```
   */
  health(): Promise<HealthReport>;
  /** Stops watching, releases the limiter and closes the store. */
  close(): Promise<void>;
}

/**
 * Creates the service-accounts instance of an app. Throws a `TypeError` naming a bad option.
 *
 * @example
 * ```ts
 * import express from 'express'
 * import { createServiceAccounts, MemoryAccountStore } from 'express-service-accounts'
 *
 * const sa = createServiceAccounts({
 *   store: new MemoryAccountStore(),
 *   issuer: 'https://api.example.com',
 *   signingKeys: [{ alg: 'HS256', key: process.env.TOKEN_SIGNING_KEY! }],
 * })
 * const app = express()
 * app.use('/oauth', sa.tokenRouter)
 * app.get('/api/whoami', sa.requireBearer(), (req, res) => res.json(req.serviceAccount))
 * ```
 */
export function createServiceAccounts(options: ServiceAccountsOptions): ServiceAccounts {
  const config = resolveConfig(options);
  const runtime = createRuntime(config);
  const tokenEndpoint = createTokenEndpoint(runtime);
  const [endpoint, hostErrors] = tokenEndpoint.router;
  const requireBearer = createRequireBearer(runtime);
  const admin = buildAdminApi({
    config,
    ready: () => runtime.ready(),
    audit: runtime.audit,
    changed: (clientId) => runtime.accounts.invalidate(clientId),
    dpopDisabled: config.dpop === false,
  });
  const requireActor = createRequireActor((opts) => requireBearer(opts) as RequestHandler, config.realm, runtime.dpop?.challenges.offered);
  return Object.freeze({
    tokenRouter: [endpoint, hostErrors] satisfies [RequestHandler, ErrorRequestHandler],
    requireBearer: (opts?: RequireBearerOptions): RequestHandler => requireBearer(opts),
    requireActor: (opts: RequireActorOptions): RequestHandler => requireActor(opts),
    admin,
    adminRouter: (opts: AdminRouterOptions): RequestHandler => createAdminRouter({ ...opts, admin }),
    consoleRouter: (opts: ConsoleRouterOptions): RequestHandler => createConsoleRouter({ ...opts, admin }),
    authorizationServerMetadata: (opts: MetadataOptions) =>
      buildAuthorizationServerMetadata(config.issuer, config.keyring, opts, {
        keys: supportsKeyCredentials(config.store),
        revocation: config.store.revokeToken !== undefined && config.store.listRevokedTokens !== undefined,
        dpopAlgorithms: config.dpop === false ? undefined : config.dpop.algorithms,
      }),
    jwks: config.keyring.jwks,
    config: describeConfig(config),
    ready: () => runtime.ready(),
    health: createHealthCheck({ ...runtime.storeHealth, ...tokenEndpoint.health, now: config.now }),
    close: () => runtime.close(),
  });
}
