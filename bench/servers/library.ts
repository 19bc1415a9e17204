/**
 * @module library
 * express-service-accounts as a host would mount it: the token router at /oauth and `requireBearer`
 * (with a scope) on the protected route. The store is the memory store or a SQL store by URL; the
 * revocation check is always on (the account status is read from the account cache on every request).
 */
import express from 'express';
import { createServiceAccounts, MemoryAccountStore, type AccountStore } from '../../src/index.js';
import { AUDIENCE, HS256_KEY, ISSUER, KID, PROTECTED_PATH, RESOURCE, SCOPE } from '../lib/fixtures.js';
import { readConfig, run, serve } from './serve.js';

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
    ...(config.storeTimeout ? { storeTimeout: config.storeTimeout } : {}),
  });
  await sa.ready();
  let client = config.client;
  if (!client) {
    const created = await sa.admin.createAccount({ name: 'bench-client', scopes: [SCOPE] });
    client = { clientId: created.clientId, secret: created.secret.value };
  }

  const app = express();
  app.use('/oauth', sa.tokenRouter);
  app.get(PROTECTED_PATH, sa.requireBearer({ scope: SCOPE }), (_req, res) => {
    res.json(RESOURCE);
  });
  await serve(app, { client });
});
