/**
 * Federated credentials across instances on real PostgreSQL (needs POSTGRES_URL; skipped with a note
 * otherwise, a failure under CI=true): two instances share one schema, as two processes of one
 * deployment do. docs/federated-credentials.md: an outside token's `jti` is single-use "across every
 * instance sharing the store", and revoking a federated credential or disabling its account "refuses
 * every token issued through it on every instance within 1 second".
 */
import { performance } from 'node:perf_hooks';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresAccountStore, type SqlAccountStore } from '../../src/sql/index.js';
import { JWT_BEARER_ASSERTION_TYPE } from '../../src/client-auth/presented-credentials.js';
import { createTestApp, TEST_ISSUER } from '../helpers/create-app.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';
import { startLocalIssuer, type LocalIssuer } from '../helpers/local-oidc-issuer.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';

/** The documented bound on revocation reaching every instance. */
const BOUND_MS = 1000;
const SUBJECT = 'system:serviceaccount:payments:exporter';

withPostgres('federated credentials across instances', (connectionString) => {
  describe('federated credentials across two instances on PostgreSQL', () => {
    const schemas = usePostgresSchemas(connectionString);
    let stores: SqlAccountStore[];
    let one: ReturnType<typeof createTestApp>;
    let two: ReturnType<typeof createTestApp>;
    let idp: LocalIssuer;

    beforeEach(async () => {
      const schema = schemas.name('federated_');
      idp = await startLocalIssuer();
      stores = [0, 1].map(() => createPostgresAccountStore({ connectionString, schema }));
      one = createTestApp({ store: stores[0], federation: { allowHttpLoopback: true } });
      two = createTestApp({ store: stores[1], federation: { allowHttpLoopback: true } });
      await Promise.all([one.sa.ready(), two.sa.ready()]);
    });
    afterEach(async () => {
      await Promise.all([one.sa.close(), two.sa.close(), idp.close()]);
    });

    async function federatedAccount() {
      const account = await one.sa.admin.createAccount({ name: 'exporter' });
      const credential = await one.sa.admin.addFederatedCredential(account.clientId, { issuer: idp.issuer, subject: SUBJECT });
      const outsideToken = () => idp.kubernetesToken({ audience: TEST_ISSUER, subject: SUBJECT, now: one.clock.now() });
      const exchange = (app: typeof one.app, token: string) =>
        request(app).post('/oauth/token').type('form').send({ grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: token });
      return { account, credential, outsideToken, exchange };
    }

    /** Milliseconds until instance two refuses `token` on a protected route, polling as fast as it answers. */
    async function refusedAfter(token: string): Promise<number | undefined> {
      const started = performance.now();
      while (performance.now() - started < 3 * BOUND_MS) {
        const res = await request(two.app).get('/api/whoami').set('authorization', `Bearer ${token}`);
        if (res.status === 401) {
          expect(res.headers['www-authenticate']).toMatch(/error="invalid_token"/);
          return performance.now() - started;
        }
        expect(res.status).toBe(200);
      }
      return undefined;
    }

    it('refuses on one instance an outside token already exchanged on the other (a replay of its jti)', async () => {
      const { outsideToken, exchange } = await federatedAccount();
      const used = await outsideToken();
      await exchange(one.app, used).expect(200);
      expectOAuthError(await exchange(two.app, used), 401, 'invalid_client');
      await exchange(two.app, await outsideToken()).expect(200);
    });

    it(`refuses, on the other instance within ${BOUND_MS} ms, the tokens of a federated credential revoked on one`, async () => {
      const { account, credential, outsideToken, exchange } = await federatedAccount();
      const token = (await exchange(one.app, await outsideToken()).expect(200)).body.access_token as string;
      await request(two.app).get('/api/whoami').set('authorization', `Bearer ${token}`).expect(200); // cached on two
      await one.sa.admin.revokeFederatedCredential(account.clientId, credential.id);
      const after = await refusedAfter(token);
      expect(after).toBeDefined();
      expect(after!).toBeLessThan(BOUND_MS);
      expectOAuthError(await exchange(two.app, await outsideToken()), 401, 'invalid_client');
    });

    // PostgreSQL refuses a NUL in a text parameter: such a value must be answered as unknown (and
    // counted by the limiter), never as a store outage.
    it('answers an outside token or client ID holding a control character 401, counted, with no store outage', async () => {
      const events: string[] = [];
      const app = createTestApp({ store: stores[0], failureLimit: { max: 4, windowSeconds: 60 }, onEvent: (event) => void events.push(event.type) });
      const { secret } = await app.sa.admin.createAccount({ name: 'secret-holder' });
      const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const now = Math.floor(app.clock.now().getTime() / 1000);
      const unsigned = (claims: object) => `${encode({ alg: 'RS256' })}.${encode({ aud: TEST_ISSUER, exp: now + 60, ...claims })}.c2ln`;
      const attempts = [
        { client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: unsigned({ iss: idp.issuer, sub: 'a\u0000' }) },
        { client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: unsigned({ iss: 'https://x.example/\u0000', sub: SUBJECT }) },
        { client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: unsigned({ iss: idp.issuer, sub: SUBJECT }), client_id: 'esa_\u0000' },
        { client_id: 'esa_\u0000', client_secret: secret.value },
        { client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: unsigned({ iss: 'esa_\u0000', sub: 'esa_\u0000' }) },
      ];
      const statuses: number[] = [];
      for (const fields of attempts) statuses.push((await request(app.app).post('/oauth/token').type('form').send({ grant_type: 'client_credentials', ...fields })).status);
      expect(statuses).toEqual([401, 401, 401, 401, 429]);
      // The admin API looks such a client ID up no more than the token endpoint does.
      expect(await app.sa.admin.getAccount('esa_\u0000')).toBeUndefined();
      await app.sa.close();
      expect(events).not.toContain('store.unavailable');
    });

    it(`refuses, on the other instance within ${BOUND_MS} ms, the tokens of an account disabled on one`, async () => {
      const { account, outsideToken, exchange } = await federatedAccount();
      const token = (await exchange(two.app, await outsideToken()).expect(200)).body.access_token as string;
      await request(two.app).get('/api/whoami').set('authorization', `Bearer ${token}`).expect(200);
      await one.sa.admin.disableAccount(account.clientId);
      const after = await refusedAfter(token);
      expect(after).toBeDefined();
      expect(after!).toBeLessThan(BOUND_MS);
    });
  });
});
