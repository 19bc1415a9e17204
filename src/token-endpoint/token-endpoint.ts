/**
 * @module token-endpoint
 * Builds the token endpoint of an instance: the parts only it uses (the secret verifier, the failure
 * limiter, the recorder of secret use) and its steps, in order: method and browser guards, body,
 * validation, start-up, client authentication, grant check, oauth2orize exchange
 * (docs/token-endpoint.md). The instance's shared state comes from the runtime.
 */
import { DEFAULT_IPV6_PREFIX } from '../config.js';
import { DependencyMonitor } from '../observability/dependency-monitor.js';
import type { TokenEndpointHealthSources } from '../observability/health.js';
import type { Runtime } from '../runtime.js';
import { SecretUseRecorder } from '../secrets/secret-use-recorder.js';
import { SecretVerifier } from '../secrets/secret-verifier.js';
import { RememberedSecrets } from '../secrets/remembered-secrets.js';
import { ClientAuthenticator } from './client-authenticator.js';
import { KeyAssertionChecker } from './key-assertion.js';
import { createClientAuthentication } from './client-strategies.js';
import { createClientCredentialsExchange, requireClientCredentialsGrant } from './client-credentials-exchange.js';
import { createFailureLimiter } from './failure-limiter.js';
import { createBrowserGuard, requirePost, validateTokenRequest } from './request-guards.js';
import { readTokenBody } from './token-request-body.js';
import type { Step } from './token-request-context.js';
import { createTokenRouter, type ErrorMiddleware, type Middleware } from './token-router.js';

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

  // The body, then its parameters and credentials, validated once (request-guards.ts).
  const readParameters: Step = (context, next) =>
    readTokenBody(context.req, config.bodyLimit, (err, body) => {
      if (err) return next(err);
      try {
        context.parameters = validateTokenRequest(body, context.req.headers.authorization);
      } catch (invalid) {
        return next(invalid);
      }
      next();
    });
  const ready: Step = (_context, next) => {
    if (runtime.isReady()) return next();
    runtime.ready().then(() => next(), next);
  };
  const steps: readonly Step[] = [
    requirePost,
    createBrowserGuard(config.allowBrowserRequests),
    readParameters,
    ready,
    createClientAuthentication(
      new ClientAuthenticator({
        accounts: runtime.accounts,
        store: config.store,
        storeTimeout: config.storeTimeout,
        storeCalls: runtime.storeCalls,
        assertions: new KeyAssertionChecker(),
        assertionRules: { issuer: config.issuer, clockTolerance: config.clockTolerance, maxLifetime: config.maxAssertionLifetime },
        secrets,
        remembered: new RememberedSecrets(),
        limiter,
        ipv6Prefix: config.failureLimit ? config.failureLimit.ipv6Prefix : DEFAULT_IPV6_PREFIX,
        secretUse: new SecretUseRecorder(config.store, config.storeTimeout, runtime.storeCalls),
        audit: runtime.audit,
        telemetry,
        now: config.now,
      }),
    ),
    requireClientCredentialsGrant,
    createClientCredentialsExchange(runtime),
  ];
  return {
    router: createTokenRouter(steps, { realm: config.realm, telemetry }),
    health: {
      limiterBackend: limiter ? limiter.backend : 'none',
      probeLimiter: () => (limiter ? limiter.probe() : Promise.resolve()),
      secretChecks: () => secrets.load,
    },
  };
}
