/**
 * Two instances (`createServiceAccounts`) built on one store object, as a process serving two APIs
 * does. `sa.close()` of one closes the store (docs/deployment.md), which stops the change feed the
 * other listens to. The other must then stop trusting its cache (the store is gone: 503, or a refusal)
 * rather than go on admitting, from a cache that no longer hears of changes, a token whose secret was
 * revoked meanwhile by another process.
 */
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CreatedAccount } from '../../src/index.js';
import { createPostgresAccountStore, type SqlAccountStore } from '../../src/sql/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { issueToken } from '../helpers/tokens.js';
import { withPostgres } from '../helpers/with-postgres.js';

withPostgres('a store shared by two instances, closed by one', (connectionString) => {
  describe('a store shared by two instances, closed by one', () => {
    const schemas = usePostgresSchemas(connectionString);
    let schema: string;
    let shared: SqlAccountStore;
    let revoker: SqlAccountStore;
    let one: ReturnType<typeof createTestApp>;
    let two: ReturnType<typeof createTestApp>;
    let client: CreatedAccount;

    beforeEach(async () => {
      schema = schemas.name('esa_sharedclose_');
      shared = createPostgresAccountStore({ connectionString, schema });
      revoker = createPostgresAccountStore({ connectionString, schema });
      one = createTestApp({ store: shared });
      two = createTestApp({ store: shared });
      await Promise.all([one.sa.ready(), two.sa.ready()]);
      client = await one.sa.admin.createAccount({ name: 'procurement-portal' });
    });
    afterEach(async () => {
      await Promise.all([one.sa.close(), two.sa.close(), revoker.close()]);
      await schemas.drop(schema);
    });

    it('the instance left open no longer admits a token whose secret was revoked elsewhere after 1 s', async () => {
      const token = await issueToken(two.app, client.clientId, client.secret.value);
      const whoami = () => request(two.app).get('/api/whoami').set('Authorization', `Bearer ${token}`);
      expect((await whoami()).status).toBe(200); // the account is cached at instance 2
      await one.sa.close(); // closes the shared store, and with it the change feed instance 2 listens to
      await revoker.revokeSecret(client.clientId, client.secret.id, new Date());
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const res = await whoami();
      expect([401, 503], res.text).toContain(res.status);
    });
  });
});
