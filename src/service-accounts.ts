/**
 * @module service-accounts
 * `createServiceAccounts(options)`: resolves the options once and hands out the token router,
 * `requireBearer()`, the admin API and the discovery documents, all sharing one configuration.
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { resolveConfig, type ResolvedConfig, type ServiceAccountsOptions } from './config.js';
import { createRuntime } from './runtime.js';
import { createTokenEndpoint } from './token-endpoint/token-endpoint.js';
import { createRequireBearer, type RequireBearerOptions } from './bearer/require-bearer.js';
import { buildAdminApi, type AdminApi } from './admin/admin-api.js';
import { createHealthCheck, type HealthReport } from './observability/health.js';
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
  /** Provisioning: accounts and secrets. */
  readonly admin: AdminApi;
  /** RFC 8414 metadata for this token endpoint. */
  authorizationServerMetadata(options: MetadataOptions): AuthorizationServerMetadata;
  /** The public keys of the keyring as a JWK Set (empty with HS256 only). Never holds a private or shared key. */
  readonly jwks: { readonly keys: readonly Record<string, unknown>[] };
  /** The resolved, frozen configuration. */
  readonly config: ResolvedConfig;
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
  return Object.freeze({
    tokenRouter: [endpoint, hostErrors] satisfies [RequestHandler, ErrorRequestHandler],
    requireBearer: (opts?: RequireBearerOptions): RequestHandler => requireBearer(opts),
    admin: buildAdminApi({
      config,
      ready: () => runtime.ready(),
      audit: runtime.audit,
      changed: (clientId) => runtime.accounts.invalidate(clientId),
    }),
    authorizationServerMetadata: (opts: MetadataOptions) => buildAuthorizationServerMetadata(config.issuer, config.keyring, opts),
    jwks: config.keyring.jwks,
    config,
    ready: () => runtime.ready(),
    health: createHealthCheck({ ...runtime.storeHealth, ...tokenEndpoint.health, now: config.now }),
    close: () => runtime.close(),
  });
}
