/**
 * @module create-client-authenticator
 * Builds the client authenticator of one token endpoint from its instance's runtime: the attempts
 * (failure limiter, audit, last-use recording) and the three methods with what each keeps per
 * instance. Run once, at start-up; no request enters it.
 */
import { DEFAULT_IPV6_PREFIX } from '../config.js';
import type { Runtime } from '../create-runtime.js';
import { RememberedSecrets, VerifiedSecretDigests } from '../secrets/remembered-secrets.js';
import { SecretCheckFlights, type SecretVerifier } from '../secrets/secret-verifier.js';
import { Attempts, ClientAuthenticator, CredentialUseRecorder } from './client-authenticator.js';
import type { FailureLimiter } from './failure-limiter.js';
import { createFederatedClientCheck, FederatedMethod } from './federated-method.js';
import { KeyPairMethod } from './key-pair-method.js';
import { SecretMethod } from './secret-method.js';

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
    credentialUse: new CredentialUseRecorder(store, storeTimeout, storeCalls),
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
