/**
 * @module library
 * express-service-accounts as a host would mount it: the token router at /oauth and `requireBearer`
 * (with a scope) on the protected route. The store is the memory store or a SQL store by URL; the
 * revocation check is always on (the account status is read from the account cache on every request).
 * With `otelSdk`, the OpenTelemetry metrics SDK is installed with a reader (collected by nobody during
 * the run, as a Prometheus exporter between scrapes); without it, only the OpenTelemetry API is present.
 * With `introspect`, its client may also call the introspection endpoint. With `keyClient`, an account
 * with a registered public key as well (the private_key_jwt case). With `federatedClient`, an outside
 * issuer on loopback (lib/outside-issuer.ts, in this process) and an account with a federated credential
 * for one of its subjects (the federated case); its keys, fetched at the first token, are kept for an
 * hour (`federation.minCacheSeconds`), longer than a run lasts, so no fetch falls inside the counted
 * requests. With `flood` (bench/flood.ts):
 * `trust proxy` on, the failure limiter off unless `flood.limiter`, and fresh accounts reported. With
 * `trustProxy` (bench/fleet.ts): `trust proxy` on; with `limiterOff`, the failure limiter off.
 */
import { generateKeyPairSync } from 'node:crypto';
import express from 'express';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { createServiceAccounts, INTROSPECTION_SCOPE, MemoryAccountStore, type AccountStore } from '../../src/index.js';
import { AUDIENCE, FEDERATED_SUBJECT, HS256_KEY, ISSUER, KID, PROTECTED_PATH, RESOURCE, SCOPE, type ServerReady } from '../lib/fixtures.js';
import { startOutsideIssuer } from '../lib/outside-issuer.js';
import { readConfig, run, serve } from './serve.js';

/** A reader that only holds what the SDK aggregates (what a pull exporter does between scrapes). */
class HeldReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

run(async () => {
  const config = readConfig();
  const storeUrl = config.store ?? 'memory';
  // The SQL stores (Kysely, pg) are loaded only when used, as a host on the memory store would: their
  // modules would otherwise enlarge the heap that every garbage collection walks.
  const store: AccountStore = storeUrl === 'memory' ? new MemoryAccountStore() : (await import('../../src/sql/index.js')).openAccountStore(storeUrl, config.pollIntervalMs ? { pollIntervalMs: config.pollIntervalMs } : {});
  const sa = createServiceAccounts({
    store,
    issuer: ISSUER,
    audience: AUDIENCE,
    signingKeys: [{ alg: 'HS256', key: HS256_KEY, kid: KID }],
    ...(config.otelSdk && { telemetry: { meterProvider: new MeterProvider({ readers: [new HeldReader()] }) } }),
    ...((config.flood && !config.flood.limiter) || config.limiterOff ? { failureLimit: false as const } : {}),
    ...(config.storeTimeout ? { storeTimeout: config.storeTimeout } : {}),
    ...(config.statusCacheTtl ? { statusCacheTtl: config.statusCacheTtl } : {}),
    ...(config.federatedClient && { federation: { allowHttpLoopback: true, minCacheSeconds: 3600 } }),
    // A typical hook: a plan and a region from what the host keeps in memory, per account.
    ...(config.extraClaims && { extraTokenClaims: ({ account }) => ({ plan: 'enterprise', tenant_region: account.clientAccountId ?? 'eu-west' }) }),
  });
  await sa.ready();
  let client = config.client;
  if (!client) {
    const scopes = config.introspect ? [SCOPE, INTROSPECTION_SCOPE] : [SCOPE];
    const created = await sa.admin.createAccount({ name: 'bench-client', scopes });
    client = { clientId: created.clientId, secret: created.secret.value };
  }

  let keyClient: { clientId: string; pkcs8: string } | undefined;
  if (config.keyClient) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const created = await sa.admin.createAccount({ name: 'bench-key-client', scopes: [SCOPE] });
    await sa.admin.addKey(created.clientId, publicKey.export({ format: 'pem', type: 'spki' }).toString());
    keyClient = { clientId: created.clientId, pkcs8: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() };
  }

  let federatedClient: ServerReady['federatedClient'];
  if (config.federatedClient) {
    const { issuer, kid, pkcs8 } = await startOutsideIssuer();
    const created = await sa.admin.createAccount({ name: 'bench-federated-client', scopes: [SCOPE] });
    await sa.admin.addFederatedCredential(created.clientId, { issuer, subject: FEDERATED_SUBJECT });
    federatedClient = { issuer, subject: FEDERATED_SUBJECT, kid, pkcs8 };
  }

  const fresh = [];
  for (let i = 0; i < (config.flood?.accounts ?? 0); i++) {
    const created = await sa.admin.createAccount({ name: `bench-fresh-${i}`, scopes: [SCOPE] });
    fresh.push({ clientId: created.clientId, secret: created.secret.value });
  }

  const app = express();
  if (config.flood || config.trustProxy) app.set('trust proxy', true);
  app.use('/oauth', sa.tokenRouter);
  app.get(PROTECTED_PATH, sa.requireBearer({ scope: SCOPE }), (_req, res) => {
    res.json(RESOURCE);
  });
  await serve(app, { client, ...(config.flood ? { fresh } : {}), ...(keyClient ? { keyClient } : {}), ...(federatedClient ? { federatedClient } : {}) });
});
