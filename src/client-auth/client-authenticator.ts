/**
 * @module client-authenticator
 * Client authentication, in one place and free of any framework: given the credentials a token
 * request presented and the client's address, it answers the authenticated client, or the typed
 * failure to render (401 `invalid_client`, 429 `too_many_requests`, 503 `temporarily_unavailable`).
 * Which method decides was settled when the credentials were read (presented-credentials.ts); here it
 * is one dispatch to that method's file: secret-method.ts, key-pair-method.ts, federated-method.ts.
 * What every method shares (the failure limiter, the audit of every failure, how an attempt ends) is
 * attempts.ts's; the rules both assertion kinds share are assertion-rules.ts's.
 *
 * passport's strategies (token-endpoint/passport-adapter.ts) are thin adapters that call it.
 */
import { DEFAULT_IPV6_PREFIX } from '../config.js';
import type { Runtime } from '../create-runtime.js';
import { RememberedSecrets } from '../secrets/remembered-secrets.js';
import { SecretCheckFlights } from '../secrets/secret-check-flights.js';
import { SecretUseRecorder } from '../secrets/secret-use-recorder.js';
import type { SecretVerifier } from '../secrets/secret-verifier.js';
import { VerifiedSecretDigests } from '../secrets/verified-secret-digests.js';
import { Attempts } from './attempts.js';
import type { FailureLimiter } from './failure-limiter.js';
import { createFederatedClientCheck, FederatedMethod } from './federated-method.js';
import { KeyPairMethod } from './key-pair-method.js';
import type { AuthenticationDone, PresentedCredentials } from './presented-credentials.js';
import { SecretMethod } from './secret-method.js';

export type { AuthenticatedClient, AuthenticationDone, PresentedCredentials, UsedCredential } from './presented-credentials.js';

/** The three methods, one per kind of credential. */
export interface ClientAuthMethods {
  readonly secret: SecretMethod;
  readonly key: KeyPairMethod;
  readonly federated: FederatedMethod;
}

/** See the module description. One per token endpoint. */
export class ClientAuthenticator {
  readonly #methods: ClientAuthMethods;

  constructor(methods: ClientAuthMethods) {
    this.#methods = methods;
  }

  /**
   * Authenticates the client of one token request. `address` is the client's address as Express sees it
   * (`req.ip`, which respects `trust proxy`). `done` gets the client, or the error to answer with:
   * `InvalidClientError` (401), `TooManyRequestsError` (429), or a 503 (`StoreUnavailableError`,
   * `SecretChecksBusyError`, `FederatedKeysUnavailableError`). `mountPath` is the path the token
   * router is mounted on (`req.baseUrl`), from which the token endpoint URL is derived.
   */
  authenticate(credentials: PresentedCredentials, address: string | undefined, done: AuthenticationDone, mountPath?: string): void {
    switch (credentials.kind) {
      case 'key':
        return this.#methods.key.authenticate(credentials, address, done, mountPath);
      case 'federated':
        return this.#methods.federated.authenticate(credentials, address, done);
      default:
        return this.#methods.secret.authenticate(credentials, address, done);
    }
  }
}

/** What the token endpoint builds and hands over: the bcrypt queue and the failure limiter it also reports on. */
export interface ClientAuthenticatorInputs {
  readonly secrets: SecretVerifier;
  readonly limiter: FailureLimiter | undefined;
}

/**
 * The client authenticator of `runtime`'s instance, with its three methods.
 *
 * @example
 * ```ts
 * import type { Runtime } from '../create-runtime.js'
 * import type { SecretVerifier } from '../secrets/secret-verifier.js'
 *
 * declare const runtime: Runtime
 * declare const secrets: SecretVerifier
 * const authenticator = createClientAuthenticator(runtime, { secrets, limiter: undefined })
 * ```
 */
export function createClientAuthenticator(runtime: Runtime, inputs: ClientAuthenticatorInputs): ClientAuthenticator {
  const { config, accounts, storeCalls, telemetry } = runtime;
  const { store, storeTimeout, now } = config;
  const attempts = new Attempts({
    limiter: inputs.limiter,
    secretUse: new SecretUseRecorder(store, storeTimeout, storeCalls),
    audit: runtime.audit,
    telemetry,
    now,
  });
  const replays = { store, storeTimeout, storeCalls, clockTolerance: config.clockTolerance };
  return new ClientAuthenticator({
    secret: new SecretMethod({
      attempts,
      accounts,
      secrets: inputs.secrets,
      remembered: new RememberedSecrets(),
      digests: new VerifiedSecretDigests(config.keyring, { store, storeTimeout, observer: storeCalls }),
      flights: new SecretCheckFlights(),
      ipv6Prefix: config.failureLimit ? config.failureLimit.ipv6Prefix : DEFAULT_IPV6_PREFIX,
      now,
    }),
    key: new KeyPairMethod({
      attempts,
      accounts,
      replays,
      rules: {
        issuer: config.issuer,
        clockTolerance: config.clockTolerance,
        maxLifetime: config.maxAssertionLifetime,
        tokenEndpointAudience: config.acceptTokenEndpointAudience,
      },
      now,
    }),
    federated: new FederatedMethod(attempts, createFederatedClientCheck(runtime), now),
  });
}
