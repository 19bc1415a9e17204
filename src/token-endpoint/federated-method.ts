/**
 * @module federated-method
 * Builds the federated method of an instance's token endpoint from its runtime: the subject lookup,
 * the issuer key sets, and their reports (`federation.issuer_unavailable` and `_recovered` events, the
 * key-fetch failure metric). None for a store that holds no federated credentials.
 */
import { describeError } from '../observability/operational-events.js';
import type { Runtime } from '../create-runtime.js';
import { supportsFederatedCredentials } from '../store/federated-credential-store.js';
import { FederatedClientCheck } from '../federation/federated-client-check.js';
import { FederatedSubjects } from '../federation/federated-subjects.js';
import { IssuerKeySets } from '../federation/issuer-key-sets.js';

/**
 * The federated method for the token endpoint of `runtime`'s instance, or `undefined` when its store
 * holds no federated credentials (outside tokens are then refused as untrusted, with no request).
 *
 * @example
 * ```ts
 * import type { Runtime } from '../create-runtime.js'
 *
 * declare const runtime: Runtime
 * const federated = createFederatedClientCheck(runtime) // handed to the client authenticator
 * ```
 */
export function createFederatedClientCheck(runtime: Runtime): FederatedClientCheck | undefined {
  const { config, accounts, storeCalls, telemetry, event } = runtime;
  const store = config.store;
  if (!supportsFederatedCredentials(store)) return undefined;
  const keySets = new IssuerKeySets({
    settings: config.federation,
    now: config.now,
    observer: {
      unavailable: (issuer, error) => event({ type: 'federation.issuer_unavailable', issuer, error: describeError(error) }),
      recovered: (issuer, downtimeMs) => event({ type: 'federation.issuer_recovered', issuer, downtimeMs }),
      fetchFailed: (issuer) => telemetry.federatedKeyFetchFailed(issuer),
    },
  });
  return new FederatedClientCheck({
    store,
    accounts,
    subjects: new FederatedSubjects({ store, accounts, storeTimeout: config.storeTimeout, storeCalls }),
    keySets,
    settings: config.federation,
    issuerIdentifier: config.issuer,
    clockTolerance: config.clockTolerance,
    storeTimeout: config.storeTimeout,
    storeCalls,
  });
}
