/**
 * DPoP server nonces (RFC 9449 §8, §9) across two instances sharing one store and one
 * `dpop.nonceSecret`; and strict replay detection on the limiter's Redis (`dpop.replay: 'redis'`).
 */
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { MemoryAccountStore, type CreatedAccount } from '../../src/index.js';
import { createTestApp, TestClock, TEST_ISSUER, type TestAppOptions } from '../helpers/create-app.js';
import { DpopKey } from '../helpers/dpop-proofs.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';
import { redisUrl, testKeyPrefix } from '../hardening/helpers.js';

const TOKEN_URL = `${TEST_ISSUER}/oauth/token`;
const WHOAMI = `${TEST_ISSUER}/api/whoami`;
const NONCE_SECRET = 'nonce-secret-0123456789abcdef-0123456789';

describe('DPoP nonces across two instances', () => {
  let clock: TestClock;
  let a: ReturnType<typeof createTestApp>;
  let b: ReturnType<typeof createTestApp>;
  let account: CreatedAccount;
  let key: DpopKey;
  const now = () => Math.floor(clock.now().getTime() / 1000);
  const make = (store: MemoryAccountStore, options: TestAppOptions = {}) =>
    createTestApp({ store, now: clock.now, dpop: { origins: [TEST_ISSUER], nonceSecret: NONCE_SECRET }, ...options });
  const tokenRequest = async (app: typeof a.app, nonce?: string, iat = now()) =>
    request(app)
      .post('/oauth/token')
      .type('form')
      .set('DPoP', await key.proof({ htu: TOKEN_URL, iat, ...(nonce !== undefined ? { nonce } : {}) }))
      .send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });

  beforeEach(async () => {
    clock = new TestClock();
    const store = new MemoryAccountStore();
    a = make(store);
    b = make(store);
    account = await a.sa.admin.createAccount({ name: 'billing-sync' });
    key = await DpopKey.create();
  });

  // "Missing or stale: 400 `use_dpop_nonce` (token endpoint), 401 `WWW-Authenticate: DPoP error="use_dpop_nonce"` (`requireBearer()`), both with `DPoP-Nonce`; successes carry the next nonce."
  it('token endpoint and requireBearer ask for a nonce, and a nonce from one instance works on the other', async () => {
    const asked = await tokenRequest(a.app);
    expectOAuthError(asked, 400, 'use_dpop_nonce', { challenge: null });
    const nonce = asked.headers['dpop-nonce'] as string;
    expect(nonce).toMatch(/^[a-z0-9]+\.[A-Za-z0-9_-]{22}$/);
    const issued = await tokenRequest(b.app, nonce);
    expect(issued.status, issued.text).toBe(200);
    expect(issued.body.token_type).toBe('DPoP');
    expect(issued.headers['dpop-nonce']).toBe(nonce);
    const token = issued.body.access_token as string;

    const resource = async (app: typeof a.app, proofNonce?: string) =>
      request(app)
        .get('/api/whoami')
        .set('Authorization', `DPoP ${token}`)
        .set('DPoP', await key.proof({ htm: 'GET', htu: WHOAMI, iat: now(), accessToken: token, ...(proofNonce !== undefined ? { nonce: proofNonce } : {}) }));
    const noNonce = await resource(a.app);
    expectOAuthError(noNonce, 401, 'use_dpop_nonce', { challenge: /^DPoP realm="service-accounts", algs="ES256 PS256", error="use_dpop_nonce"/ });
    expect(noNonce.headers['dpop-nonce']).toBe(nonce);
    const ok = await resource(a.app, nonce);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.headers['dpop-nonce']).toBe(nonce);

    // "successes carry the next nonce before the old expires": one step later the old one still works, and the answer carries the new one.
    clock.advance(60);
    const later = await resource(b.app, nonce);
    expect(later.status).toBe(200);
    const next = later.headers['dpop-nonce'] as string;
    expect(next).not.toBe(nonce);
    // Two steps later the old nonce is stale.
    clock.advance(60);
    expectOAuthError(await resource(a.app, nonce), 401, 'use_dpop_nonce');
    expect((await resource(a.app, next)).status).toBe(200);
  });

  // "A stale `iat` also gets `use_dpop_nonce`, and a valid nonce replaces the `iat` check: a skewed client recovers."
  it('a client whose clock is 10 minutes behind recovers with the nonce', async () => {
    const skewed = now() - 600;
    const asked = await tokenRequest(a.app, undefined, skewed);
    expectOAuthError(asked, 400, 'use_dpop_nonce');
    const issued = await tokenRequest(a.app, asked.headers['dpop-nonce'] as string, skewed);
    expect(issued.status, issued.text).toBe(200);
  });

  // dpop.nonceSecret: "every answer carries the next one in `DPoP-Nonce`": a refused token request too,
  // so the client's next proof has a nonce whatever was wrong with this one.
  it('a token request refused for its scope or as a replay carries the next nonce', async () => {
    const nonce = (await tokenRequest(a.app)).headers['dpop-nonce'] as string;
    const scoped = await a.sa.admin.createAccount({ name: 'scoped', scopes: ['jobs:read'] });
    const refused = await request(a.app)
      .post('/oauth/token')
      .type('form')
      .set('DPoP', await key.proof({ htu: TOKEN_URL, iat: now(), nonce }))
      .send({ grant_type: 'client_credentials', client_id: scoped.clientId, client_secret: scoped.secret.value, scope: 'jobs:write' });
    expectOAuthError(refused, 400, 'invalid_scope');
    expect(refused.headers['dpop-nonce']).toBe(nonce);
    const proof = await key.proof({ htu: TOKEN_URL, iat: now(), nonce });
    const send = () => request(a.app).post('/oauth/token').type('form').set('DPoP', proof).send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });
    expect((await send()).status).toBe(200);
    const replayed = await send();
    expectOAuthError(replayed, 400, 'invalid_dpop_proof');
    expect(replayed.headers['dpop-nonce']).toBe(nonce);
  });

  it('a forged nonce is refused', async () => {
    const forged = await tokenRequest(a.app, `${Math.floor(now() / 60).toString(36)}.AAAAAAAAAAAAAAAAAAAAAA`);
    expectOAuthError(forged, 400, 'use_dpop_nonce');
  });

  /** A DPoP-bound token from `app`, its nonce fetched first when the token endpoint asks for one. */
  const tokenFrom = async (app: typeof a.app): Promise<string> => {
    let issued = await tokenRequest(app);
    if (issued.status === 400) issued = await tokenRequest(app, issued.headers['dpop-nonce'] as string);
    expect(issued.status, issued.text).toBe(200);
    return issued.body.access_token as string;
  };
  const whoami = async (app: typeof a.app, token: string, proof: { nonce?: string; iat?: number } = {}) =>
    request(app)
      .get('/api/whoami')
      .set('Authorization', `DPoP ${token}`)
      .set('DPoP', await key.proof({ htm: 'GET', htu: WHOAMI, iat: proof.iat ?? now(), accessToken: token, ...(proof.nonce !== undefined ? { nonce: proof.nonce } : {}) }));

  // RFC 9449 §8 and §9: the authorization server and the resource server each decide whether they ask for nonces.
  it("with nonceAt 'token-endpoint', asks at the token endpoint only: API calls are checked by iat and carry no DPoP-Nonce", async () => {
    const app = make(new MemoryAccountStore(), { dpop: { origins: [TEST_ISSUER], nonceSecret: NONCE_SECRET, nonceAt: 'token-endpoint' } });
    account = await app.sa.admin.createAccount({ name: 'token-endpoint-nonces' });
    const asked = await tokenRequest(app.app);
    expectOAuthError(asked, 400, 'use_dpop_nonce', { challenge: null });
    const token = await tokenFrom(app.app);
    const ok = await whoami(app.app, token);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.headers['dpop-nonce']).toBeUndefined();
    // Freshness at the route is the proof's iat again: a proof made 10 minutes ago is refused, not asked for a nonce.
    expectOAuthError(await whoami(app.app, token, { iat: now() - 600 }), 401, 'invalid_dpop_proof');
  });

  it("with nonceAt 'protected-routes', asks at protected routes only: a token request is checked by iat and carries no DPoP-Nonce", async () => {
    const app = make(new MemoryAccountStore(), { dpop: { origins: [TEST_ISSUER], nonceSecret: NONCE_SECRET, nonceAt: 'protected-routes' } });
    account = await app.sa.admin.createAccount({ name: 'route-nonces' });
    const issued = await tokenRequest(app.app);
    expect(issued.status, issued.text).toBe(200);
    expect(issued.headers['dpop-nonce']).toBeUndefined();
    expectOAuthError(await tokenRequest(app.app, undefined, now() - 600), 400, 'invalid_dpop_proof');
    const token = issued.body.access_token as string;
    const asked = await whoami(app.app, token);
    expectOAuthError(asked, 401, 'use_dpop_nonce', { challenge: /error="use_dpop_nonce"/ });
    const nonce = asked.headers['dpop-nonce'] as string;
    const ok = await whoami(app.app, token, { nonce });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.headers['dpop-nonce']).toBe(nonce);
  });
});

const url = redisUrl('DPoP strict replay');
if (!url) {
  describe.skip('DPoP strict replay on Redis (REDIS_URL not set)', () => {
    it('needs Redis', () => {});
  });
} else {
  describe('DPoP strict replay on Redis', () => {
    const prefix = testKeyPrefix();
    const redis = new Redis(url, { keyPrefix: prefix, maxRetriesPerRequest: 1 });
    const admin = new Redis(url, { maxRetriesPerRequest: 1 });
    afterAll(async () => {
      const left = await admin.keys(`${prefix}*`);
      if (left.length > 0) await admin.del(...left);
      await Promise.all([redis.quit(), admin.quit()]);
    });

    // "Opt-in strict mode: one `SET NX PX` per request on `failureLimit`'s ioredis client."
    it('a proof used on one instance is refused on the other', async () => {
      const clock = new TestClock(Date.now());
      const store = new MemoryAccountStore();
      const make = () => createTestApp({ store, now: clock.now, failureLimit: { redis }, dpop: { origins: [TEST_ISSUER], replay: 'redis' } });
      const a = make();
      const b = make();
      const account = await a.sa.admin.createAccount({ name: 'billing-sync' });
      const key = await DpopKey.create();
      const iat = Math.floor(clock.now().getTime() / 1000);
      const issued = await request(a.app)
        .post('/oauth/token')
        .type('form')
        .set('DPoP', await key.proof({ htu: TOKEN_URL, iat }))
        .send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });
      expect(issued.status, issued.text).toBe(200);
      const token = issued.body.access_token as string;
      const proof = await key.proof({ htm: 'GET', htu: WHOAMI, iat, accessToken: token });
      const send = (app: typeof a.app) => request(app).get('/api/whoami').set('Authorization', `DPoP ${token}`).set('DPoP', proof);
      expect((await send(a.app)).status).toBe(200);
      expectOAuthError(await send(b.app), 401, 'invalid_dpop_proof');
      expectOAuthError(await send(a.app), 401, 'invalid_dpop_proof');
      expect(await admin.pttl(`${prefix}dpop-jti:${key.jkt}:${JSON.parse(Buffer.from(proof.split('.')[1]!, 'base64url').toString()).jti}`)).toBeGreaterThan(60_000);
    });

    // "Redis down: 503."
    it('Redis down: 503 temporarily_unavailable, never admitted', async () => {
      const down = new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
      const clock = new TestClock(Date.now());
      const t = createTestApp({ now: clock.now, failureLimit: { redis: down }, dpop: { origins: [TEST_ISSUER], replay: 'redis' } });
      const account = await t.sa.admin.createAccount({ name: 'billing-sync' });
      const key = await DpopKey.create();
      const iat = Math.floor(clock.now().getTime() / 1000);
      // The token endpoint records proofs in the store; only resource requests use Redis. The limiter needs Redis too, so issue from another instance.
      const issuer = createTestApp({ store: t.store, now: clock.now, dpop: { origins: [TEST_ISSUER] } });
      const issued = await request(issuer.app)
        .post('/oauth/token')
        .type('form')
        .set('DPoP', await key.proof({ htu: TOKEN_URL, iat }))
        .send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });
      expect(issued.status, issued.text).toBe(200);
      const token = issued.body.access_token as string;
      const res = await request(t.app)
        .get('/api/whoami')
        .set('Authorization', `DPoP ${token}`)
        .set('DPoP', await key.proof({ htm: 'GET', htu: WHOAMI, iat, accessToken: token }));
      expectOAuthError(res, 503, 'temporarily_unavailable');
      down.disconnect();
    });
  });
}
