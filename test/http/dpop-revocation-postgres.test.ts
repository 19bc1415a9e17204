/**
 * DPoP-bound tokens of a revoked secret across instances on real PostgreSQL (needs POSTGRES_URL): two
 * instances share one schema and one injected clock. Tokens bound to a client's DPoP key, issued by
 * either instance and admitted by both, are refused by every instance within 1 second of the secret's
 * revocation at one of them (the account change feed), with the DPoP challenge; each attempt carries
 * a fresh proof, so a refusal is the token's, never a replayed proof's.
 */
import { performance } from 'node:perf_hooks';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CreatedAccount } from '../../src/index.js';
import { createPostgresAccountStore } from '../../src/sql/index.js';
import { createTestApp, TestClock, TEST_ISSUER } from '../helpers/create-app.js';
import { DpopKey } from '../helpers/dpop-proofs.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';

const TOKEN_URL = `${TEST_ISSUER}/oauth/token`;
const WHOAMI = `${TEST_ISSUER}/api/whoami`;

withPostgres('DPoP token revocation across instances', (connectionString) => {
  describe('DPoP-bound tokens of a revoked secret across instances on PostgreSQL', () => {
    const schemas = usePostgresSchemas(connectionString);
    let schema: string;
    let clock: TestClock;
    let instances: ReturnType<typeof createTestApp>[];
    let client: CreatedAccount;
    let key: DpopKey;
    const now = () => Math.floor(clock.now().getTime() / 1000);

    beforeEach(async () => {
      schema = schemas.name('esa_dpop_revoke_');
      clock = new TestClock();
      const make = () => createTestApp({ store: createPostgresAccountStore({ connectionString, schema }), now: clock.now, dpop: { origins: [TEST_ISSUER] } });
      instances = [make(), make()];
      await Promise.all(instances.map((t) => t.sa.ready()));
      client = await instances[1]!.sa.admin.createAccount({ name: 'procurement-portal' });
      key = await DpopKey.create();
    });
    afterEach(async () => {
      await Promise.all(instances.map((t) => t.sa.close()));
      await schemas.drop(schema);
    });

    const boundToken = async (t: ReturnType<typeof createTestApp>): Promise<string> => {
      const res = await request(t.app)
        .post('/oauth/token')
        .type('form')
        .set('DPoP', await key.proof({ htu: TOKEN_URL, iat: now() }))
        .send({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret.value });
      expect(res.status, res.text).toBe(200);
      expect(res.body.token_type).toBe('DPoP');
      return res.body.access_token as string;
    };
    /** A protected request with the token and a fresh proof of its key. */
    const whoami = async (t: ReturnType<typeof createTestApp>, token: string) =>
      request(t.app)
        .get('/api/whoami')
        .set('Authorization', `DPoP ${token}`)
        .set('DPoP', await key.proof({ htm: 'GET', htu: WHOAMI, iat: now(), accessToken: token }));

    // "a revoked secret's DPoP tokens refused everywhere within 1 s".
    it('a secret revoked at instance 2 takes its DPoP-bound tokens with it on both instances within 1 s', async () => {
      const tokens = [await boundToken(instances[0]!), await boundToken(instances[1]!)];
      // Every instance admits every token (and caches the account).
      for (const t of instances) for (const token of tokens) expect((await whoami(t, token)).status).toBe(200);

      await instances[1]!.sa.admin.revokeSecret(client.clientId, client.secret.id);
      const revokedAt = performance.now();
      // One budget of 1 s for all: each attempt asks both instances with both tokens.
      await vi.waitFor(
        async () => {
          for (const t of instances) {
            for (const token of tokens) {
              const res = await whoami(t, token);
              expect(res.status).toBe(401);
              expect(res.body).toEqual({ error: 'invalid_token', error_description: 'The access token was revoked' });
              expect(res.headers['www-authenticate']).toMatch(/^DPoP realm="service-accounts", algs="ES256 PS256", error="invalid_token"/);
            }
          }
        },
        { timeout: 1000, interval: 10 },
      );
      console.log(`secret revoked at instance 2: its DPoP-bound tokens refused on both instances after ${(performance.now() - revokedAt).toFixed(0)} ms`);
    });
  });
});
