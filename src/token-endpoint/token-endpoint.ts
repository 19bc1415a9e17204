/**
 * @module token-endpoint
 * Builds the token endpoint of an instance, with its revocation (RFC 7009) and introspection (RFC 7662)
 * endpoints: the parts only they use (the secret verifier, the failure limiter, the recorder of secret
 * use) and their steps, in order: method and browser guards, body and validation, start-up, client
 * authentication (one client authenticator, shared by the three), then the grant check and oauth2orize
 * exchange, the revocation, or the introspection (docs/token-endpoint.md). The instance's shared state
 * comes from the runtime.
 */
import { TokenInspector } from '../token-check/token-check.js';
import { DependencyMonitor } from '../runtime/call-store.js';
import type { TokenEndpointHealthSources } from '../observability/health.js';
import type { Runtime } from '../create-runtime.js';
import { SecretVerifier } from '../secrets/secret-verifier.js';
import { createClientAuthenticator } from '../client-auth/client-authenticator.js';
import { createFailureLimiter } from '../client-auth/failure-limiter.js';
import { createClientAuthentication } from './passport-adapter.js';
import { createClientCredentialsExchange, requireClientCredentialsGrant } from './client-credentials-exchange.js';
import { createIntrospectionStep } from './introspection-step.js';
import { createBrowserGuard, requirePost, validateTokenManagementRequest, validateTokenRequest } from './request-guards.js';
import { createRevocationStep } from './revocation-step.js';
import { createDpopBindingStep, createDpopProofStep } from './dpop-steps.js';
import { readTokenBody } from './token-request-body.js';
import type { Step } from './token-request-context.js';
import { createTokenRouter, type ErrorMiddleware, type Middleware, type TokenRoutes } from './token-router.js';

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
        try {
          context.parameters = validate(body, context.req.headers.authorization);
        } catch (invalid) {
          return next(invalid);
        }
        next();
      });
  const ready: Step = (_context, next) => {
    if (runtime.isReady()) return next();
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
      createDpopBindingStep(runtime, dpop),
      createClientCredentialsExchange(runtime),
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
