/**
 * @module token-endpoint
 * The router of `POST {mount}/token` and its revocation (RFC 7009) and introspection (RFC 7662)
 * endpoints, `/revoke` and `/introspect`. {@link createTokenEndpoint} builds them for an instance: the
 * parts only they use (the secret verifier, the failure limiter, the recorder of secret use) and their
 * steps, in order: method and browser guards, body and validation, start-up, client authentication (one
 * client authenticator, shared by the three), then the grant check and oauth2orize exchange, the
 * revocation, or the introspection (docs/token-endpoint.md). The instance's shared state comes from
 * the runtime. {@link createTokenRouter} runs them as framework-free middleware, so the same function
 * mounts in Express 4 and Express 5 (`app.use('/oauth', tokenRouter)`): one {@link TokenRequestContext}
 * per request, handed to each step in order; the first error skips to the one renderer,
 * {@link sendOAuthError}.
 */
import type { ServerResponse } from 'node:http';
import { context as otelContext, trace } from '@opentelemetry/api';
import { InvalidClientError, InvalidRequestError, sendOAuthError, toOAuthError } from '../errors.js';
import { RequestSpan, type Telemetry } from '../observability/telemetry.js';
import { TokenInspector } from '../token-check/token-check.js';
import { DependencyMonitor } from '../runtime/call-store.js';
import type { TokenEndpointHealthSources } from '../observability/health.js';
import type { Runtime } from '../create-runtime.js';
import { SecretVerifier } from '../secrets/secret-verifier.js';
import { createClientAuthenticator } from '../client-auth/create-client-authenticator.js';
import { createFailureLimiter } from '../client-auth/create-failure-limiter.js';
import { createClientAuthentication } from './passport-adapter.js';
import { createClientCredentialsExchange, createDpopProofStep, requireClientCredentialsGrant } from './client-credentials-exchange.js';
import { createIntrospectionStep } from './introspection-step.js';
import {
  createBrowserGuard,
  requirePost,
  setNoStore,
  TokenRequestContext,
  validateTokenManagementRequest,
  validateTokenRequest,
  type Step,
  type TokenHttpRequest,
} from './request-guards.js';
import { createRevocationStep } from './revocation-step.js';
import { hasRepeatedAuthorization } from '../bearer/extract-bearer-token.js';
import { readTokenBody } from './token-request-body.js';
import { hostErrorAnswer } from './host-errors.js';

/** A framework-free middleware. */
export type Middleware = (req: TokenHttpRequest, res: ServerResponse, next: (err?: unknown) => void) => void;

/** An error-handling middleware (four arguments, so Express routes errors to it). */
export type ErrorMiddleware = (err: unknown, req: TokenHttpRequest, res: ServerResponse, next: (err?: unknown) => void) => void;

/**
 * The steps of each endpoint, by path below the mount: `/token`, and `/revoke` and `/introspect`.
 * Each path also matches with a trailing slash.
 */
export type TokenRoutes = Readonly<Record<string, readonly Step[]>>;

/** The steps of the route a URL names, or `undefined`: that path passes to the host. */
function routeOf(routes: TokenRoutes, url: string | undefined): readonly Step[] | undefined {
  let path = (url ?? '').split('?')[0] ?? '';
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return Object.prototype.hasOwnProperty.call(routes, path) ? routes[path] : undefined;
}

/** What the router needs besides its steps. */
export interface TokenRouterOptions {
  readonly realm: string;
  readonly telemetry: Pick<Telemetry, 'tracer' | 'tokenRequestRefused'>;
}

/**
 * Returns the token endpoint as a pair of middlewares to mount where the host likes. The second one
 * catches errors raised before us on `{mount}/token`, such as a malformed body rejected by the host's
 * own global `express.json()`, and renders them as RFC 6749 JSON instead of Express's HTML page.
 */
export function createTokenRouter(routes: TokenRoutes, options: TokenRouterOptions): readonly [Middleware, ErrorMiddleware] {
  const { realm, telemetry } = options;
  const render = (err: unknown, res: ServerResponse): void => {
    const error = toOAuthError(err);
    telemetry.tokenRequestRefused(error.code, error instanceof InvalidClientError ? error.reason : undefined);
    sendOAuthError(res, error, realm);
  };

  /** Runs the steps in order on one context; the first error renders the answer. The last step answers. */
  const handle = (steps: readonly Step[], context: TokenRequestContext, passOn: () => void): void => {
    let index = 0;
    const next = (err?: unknown): void => {
      if (err !== undefined && err !== null) return render(err, context.res);
      const step = steps[index++];
      if (!step) return passOn(); // only if a step let the request through unanswered
      try {
        step(context, next);
      } catch (e) {
        render(e, context.res);
      }
    };
    next();
  };

  const endpoint: Middleware = (req, res, next) => {
    const steps = routeOf(routes, req.url);
    if (!steps) return next();
    setNoStore(res);
    const span = RequestSpan.start(telemetry.tracer, 'service_accounts.token_request', res);
    if (!span) return handle(steps, new TokenRequestContext(req, res), next);
    // Store calls made for this request become children of its span, also those made from the body
    // stream's events (bound to the span's context, as they would otherwise run in the socket's).
    const active = trace.setSpan(otelContext.active(), span.span);
    otelContext.with(active, () => handle(steps, new TokenRequestContext(otelContext.bind(active, req), res), next));
  };
  const hostErrors: ErrorMiddleware = (err, req, res, next) => {
    if (!routeOf(routes, req.url)) return next(err);
    setNoStore(res);
    render(hostErrorAnswer(err), res);
  };
  return [endpoint, hostErrors];
}

/** The token endpoint of one instance. */
export interface TokenEndpoint {
  /** The two middlewares to mount (see `ServiceAccounts.tokenRouter`). */
  readonly router: readonly [Middleware, ErrorMiddleware];
  /** Its part of `sa.health()`. */
  readonly health: TokenEndpointHealthSources;
}

export function createTokenEndpoint(runtime: Runtime): TokenEndpoint {
  const { config, telemetry, event } = runtime;
  const secrets = new SecretVerifier({
    rounds: config.secretHashRounds,
    gate: { queue: config.maxQueuedSecretChecks },
    telemetry,
    onSaturated: (queued) => event({ type: 'secret_checks.saturated', queued }),
  });
  telemetry.observe({ secretCheckQueueDepth: () => secrets.load.queued });
  runtime.onStart(() => secrets.dummyHash().then(() => undefined));
  const limiter = config.failureLimit
    ? createFailureLimiter(config.failureLimit, config.storeTimeout, new DependencyMonitor('limiter', telemetry, event, config.now))
    : undefined;
  if (limiter) runtime.onClose(() => limiter.close());

  /** The body, then its parameters and credentials, validated once by `validate` (request-guards.ts). */
  const readParameters =
    (validate: typeof validateTokenRequest): Step =>
    (context, next) =>
      readTokenBody(context.req, config.bodyLimit, (err, body) => {
        if (err) return next(err);
        // RFC 9110 §11.6.2: one Authorization field; RFC 6749 §2.3: one authentication method a request.
        // Node keeps only the first of several, so two would authenticate with one a proxy may not have seen.
        if (hasRepeatedAuthorization(context.req.rawHeaders ?? [])) {
          return next(new InvalidRequestError('The request must carry at most one Authorization header'));
        }
        try {
          context.parameters = validate(body, context.req.headers.authorization);
        } catch (invalid) {
          return next(invalid);
        }
        next();
      });
  const ready: Step = (_context, next) => {
    if (runtime.started) return next();
    runtime.ready().then(() => next(), next);
  };
  // One client authentication for every endpoint of the router: same methods, limiter and errors.
  const authenticate = createClientAuthentication(createClientAuthenticator(runtime, { secrets, limiter }));
  /**
   * What every endpoint runs before its own work: method, browser, body and parameters, (at the token
   * endpoint, the DPoP proof, before any secret check), start-up, client.
   */
  const guarded = (validate: typeof validateTokenRequest, beforeClient: readonly Step[], ...own: Step[]): readonly Step[] => [
    requirePost,
    createBrowserGuard(config.allowBrowserRequests),
    readParameters(validate),
    ...beforeClient,
    ready,
    authenticate,
    ...own,
  ];
  const dpop = runtime.dpop;
  const inspector = new TokenInspector(runtime);
  const routes: TokenRoutes = {
    '/token': guarded(
      validateTokenRequest,
      dpop ? [createDpopProofStep(dpop, config.now)] : [],
      requireClientCredentialsGrant,
      createClientCredentialsExchange(runtime, dpop),
    ),
    '/revoke': guarded(
      validateTokenManagementRequest,
      [],
      createRevocationStep({
        inspector,
        store: config.store,
        storeTimeout: config.storeTimeout,
        observer: runtime.storeCalls,
        revoked: (changeKey) => runtime.revokedTokens.onChange(changeKey),
        audit: runtime.audit,
        now: config.now,
        clockTolerance: config.clockTolerance,
        maxPerClient: config.maxRevokedTokensPerClient,
        event,
      }),
    ),
    '/introspect': guarded(
      validateTokenManagementRequest,
      [],
      createIntrospectionStep({ inspector, allowUnrestricted: config.allowUnrestrictedIntrospection, audit: runtime.audit }),
    ),
  };
  return {
    router: createTokenRouter(routes, { realm: config.realm, telemetry }),
    health: {
      limiterBackend: limiter ? limiter.backend : 'none',
      probeLimiter: () => (limiter ? limiter.probe() : Promise.resolve()),
      secretChecks: () => secrets.load,
    },
  };
}
