/**
 * DPoP (RFC 9449) in `requireBearer()`: `Authorization: DPoP <token>` with a proof of the key the token
 * is bound to; §7.2 (a bound token as Bearer, an unbound one as DPoP: 401 invalid_token); the DPoP
 * challenges; `dpop: 'required'`; single use of proofs; `htu` behind a proxy. Express 5 and 4; time
 * from the injected TestClock.
 */
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryAccountStore, type CreatedAccount, type OperationalEvent } from '../../src/index.js';
import { createTestApp, TEST_ISSUER, type TestAppOptions } from '../helpers/create-app.js';
import { DpopKey } from '../helpers/dpop-proofs.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';
import { recordServiceAccountOnFinish } from '../helpers/finish-log.js';
import { longExponentRsaKey } from '../helpers/long-exponent-rsa-key.js';
import { issueToken } from '../helpers/tokens.js';

const TOKEN_URL = `${TEST_ISSUER}/oauth/token`;
const WHOAMI = `${TEST_ISSUER}/api/whoami`;
const DPOP_OFFER = 'DPoP realm="service-accounts", algs="ES256 PS256"';

describe.each([5, 4] as const)('requireBearer() with DPoP on Express %i', (version) => {
  const make = (options: TestAppOptions = {}) => createTestApp({ express: version, dpop: { origins: [TEST_ISSUER] }, ...options });
  let t: ReturnType<typeof make>;
  let account: CreatedAccount;
  let key: DpopKey;
  const now = () => Math.floor(t.clock.now().getTime() / 1000);

  /** A DPoP-bound token for `key`. */
  const boundToken = async (app = t.app, signer = key, who = account): Promise<string> => {
    const res = await request(app)
      .post('/oauth/token')
      .type('form')
      .set('DPoP', await signer.proof({ htu: TOKEN_URL, iat: now() }))
      .send({ grant_type: 'client_credentials', client_id: who.clientId, client_secret: who.secret.value, scope: 'jobs:read' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    return res.body.access_token as string;
  };
  const dpopGet = (token: string, proof: string | undefined, app = t.app, path = '/api/whoami') => {
    const req = request(app).get(path).set('Authorization', `DPoP ${token}`);
    return proof === undefined ? req : req.set('DPoP', proof);
  };

  beforeEach(async () => {
    t = make();
    account = await t.sa.admin.createAccount({ name: 'billing-sync', scopes: ['jobs:read', 'jobs:write'] });
    key = await DpopKey.create();
  });

  // "`requireBearer()` accepts `Authorization: DPoP <token>` with a `DPoP` proof (the example's `/api/whoami` included)."
  it('admits a DPoP-bound token sent with Authorization: DPoP and a proof of its key', async () => {
    const token = await boundToken();
    const res = await dpopGet(token, await key.proof({ htm: 'GET', htu: WHOAMI, iat: now(), accessToken: token }));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ clientId: account.clientId, name: 'billing-sync', scopes: ['jobs:read'] });
  });

  // docs/require-bearer.md: "`req.serviceAccount` is also set on a request refused `403 insufficient_scope`", DPoP too.
  it('a DPoP request refused for its scope names its account on req.serviceAccount, with the token\'s scopes', async () => {
    const seen: unknown[] = [];
    t.app.get('/api/logged', recordServiceAccountOnFinish(seen), t.sa.requireBearer({ scope: 'jobs:write' }), (_req, res) => void res.json({ ran: true }));
    const token = await boundToken();
    const res = await dpopGet(token, await key.proof({ htm: 'GET', htu: `${TEST_ISSUER}/api/logged`, iat: now(), accessToken: token }), t.app, '/api/logged');
    expectOAuthError(res, 403, 'insufficient_scope');
    expect(seen).toEqual([expect.objectContaining({ clientId: account.clientId, scopes: ['jobs:read'] })]);
  });

  // "a 401 without credentials offers a `DPoP` challenge beside `Bearer`"; "(only DPoP on required routes)".
  it('401 without credentials offers Bearer and DPoP; a route that requires DPoP offers DPoP only', async () => {
    expectOAuthError(await request(t.app).get('/api/whoami'), 401, 'invalid_request', { challenge: `Bearer realm="service-accounts", ${DPOP_OFFER}` });
    t.app.get('/api/strict', t.sa.requireBearer({ dpop: 'required' }), (_req, res) => res.json({ ok: true }));
    expectOAuthError(await request(t.app).get('/api/strict'), 401, 'invalid_request', { challenge: DPOP_OFFER });
  });

  // "`requireBearer({ dpop: 'required' })` refuses Bearer."
  it('a route that requires DPoP refuses a Bearer token and admits a DPoP-bound one', async () => {
    t.app.get('/api/strict', t.sa.requireBearer({ dpop: 'required' }), (_req, res) => res.json({ ok: true }));
    const bearer = await issueToken(t.app, account.clientId, account.secret.value);
    const refused = await request(t.app).get('/api/strict').auth(bearer, { type: 'bearer' });
    expectOAuthError(refused, 401, 'invalid_token', { challenge: new RegExp(`^${DPOP_OFFER}, error="invalid_token"`) });
    const token = await boundToken();
    const res = await dpopGet(token, await key.proof({ htm: 'GET', htu: `${TEST_ISSUER}/api/strict`, iat: now(), accessToken: token }), t.app, '/api/strict');
    expect(res.status, res.text).toBe(200);
  });

  // RFC 9449 §7.2: a bound token sent as Bearer, or an unbound one sent as DPoP: 401 invalid_token.
  it('a stolen DPoP-bound token sent as Bearer is refused; an unbound token sent as DPoP is refused', async () => {
    const token = await boundToken();
    const asBearer = await request(t.app).get('/api/whoami').auth(token, { type: 'bearer' });
    expectOAuthError(asBearer, 401, 'invalid_token', { challenge: /^Bearer realm="service-accounts", error="invalid_token"/ });
    expect(asBearer.body.error_description).toMatch(/bound to a DPoP key/);
    const bearer = await issueToken(t.app, account.clientId, account.secret.value);
    const asDpop = await dpopGet(bearer, await key.proof({ htm: 'GET', htu: WHOAMI, iat: now(), accessToken: bearer }));
    expectOAuthError(asDpop, 401, 'invalid_token', { challenge: new RegExp(`^${DPOP_OFFER}, error="invalid_token"`) });
  });

  // "a stolen token ... with another key": the proof's key is not the one in cnf.jkt (RFC 9449 §4.3 step 12).
  it('a stolen token with a proof of another key is refused', async () => {
    const token = await boundToken();
    const thief = await DpopKey.create();
    const res = await dpopGet(token, await thief.proof({ htm: 'GET', htu: WHOAMI, iat: now(), accessToken: token }));
    expectOAuthError(res, 401, 'invalid_token', { challenge: new RegExp(`^${DPOP_OFFER}, error="invalid_token"`) });
  });

  // "malformed header (`Bearer` with no token, two tokens) | 400 | `Bearer realm="...", error="invalid_request"`", and
  // "`requireBearer()` accepts `Authorization: DPoP <token>`": the DPoP scheme with no token is malformed too, not a missing credential.
  it('400 invalid_request for the DPoP scheme with no token or two tokens, with the DPoP challenge', async () => {
    t.app.get('/api/strict', t.sa.requireBearer({ dpop: 'required' }), (_req, res) => res.json({ ok: true }));
    for (const path of ['/api/whoami', '/api/strict']) {
      for (const header of ['DPoP', 'dpop', 'DPoP  ', 'DPoP a b']) {
        const res = await request(t.app).get(path).set('Authorization', header).set('DPoP', await key.proof({ htm: 'GET', htu: `${TEST_ISSUER}${path}`, iat: now() }));
        expectOAuthError(res, 400, 'invalid_request', { challenge: new RegExp(`^${DPOP_OFFER}, error="invalid_request"`) });
      }
    }
  });

  // RFC 8017 §3.1: a verify costs a modular exponentiation by the key's public exponent; a proof whose RSA
  // jwk carries one as long as its modulus is refused before its signature is checked, here as at the token endpoint.
  it('401 invalid_dpop_proof for a proof whose RSA jwk has a public exponent outside 3 to 2^32 - 1', async () => {
    const token = await boundToken();
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const header = part({ typ: 'dpop+jwt', alg: 'PS256', jwk: { kty: 'RSA', ...longExponentRsaKey() } });
    const claims = part({ htm: 'GET', htu: WHOAMI, iat: now(), jti: 'long-exponent', ath: 'x' });
    const res = await dpopGet(token, `${header}.${claims}.${randomBytes(384).toString('base64url')}`);
    expectOAuthError(res, 401, 'invalid_dpop_proof', { challenge: new RegExp(`^${DPOP_OFFER}, error="invalid_dpop_proof"`) });
    expect(res.body.error_description).toContain('public exponent');
  });

  // RFC 9449 §4.3: other URL or method, no or a wrong ath, no proof: 401 invalid_dpop_proof with the DPoP challenge (§7.1).
  it('401 invalid_dpop_proof for a proof for another URL or method, without or with a wrong ath, or no proof at all', async () => {
    const token = await boundToken();
    const other = await boundToken();
    const proofs = [
      await key.proof({ htm: 'GET', htu: `${TEST_ISSUER}/api/jobs`, iat: now(), accessToken: token }),
      await key.proof({ htm: 'POST', htu: WHOAMI, iat: now(), accessToken: token }),
      await key.proof({ htm: 'GET', htu: WHOAMI, iat: now() }),
      await key.proof({ htm: 'GET', htu: WHOAMI, iat: now(), accessToken: other }),
      await key.proof({ htm: 'GET', htu: WHOAMI, iat: now() - 120, accessToken: token }),
      await key.proof({ htm: 'GET', htu: WHOAMI, iat: -1e13, accessToken: token }), // before any date
      undefined,
    ];
    for (const proof of proofs) {
      expectOAuthError(await dpopGet(token, proof), 401, 'invalid_dpop_proof', { challenge: new RegExp(`^${DPOP_OFFER}, error="invalid_dpop_proof"`) });
    }
  });

  // "refusals of DPoP requests, 403 too, carry the DPoP challenge".
  it('403 insufficient_scope of a DPoP request carries the DPoP challenge', async () => {
    const token = await boundToken();
    const res = await request(t.app)
      .post('/api/jobs')
      .set('Authorization', `DPoP ${token}`)
      .set('DPoP', await key.proof({ htm: 'POST', htu: `${TEST_ISSUER}/api/jobs`, iat: now(), accessToken: token }));
    expectOAuthError(res, 403, 'insufficient_scope', { challenge: new RegExp(`^${DPOP_OFFER}, error="insufficient_scope"`) });
  });

  // RFC 9449 §11.1: a proof is single use; per instance by default, so another instance takes it once.
  it('a replayed proof is refused; another instance sharing the store accepts it at most once', async () => {
    const store = new MemoryAccountStore();
    const a = make({ store, now: t.clock.now });
    const b = make({ store, now: t.clock.now });
    account = await a.sa.admin.createAccount({ name: 'billing-sync', scopes: ['jobs:read'] });
    const token = await boundToken(a.app);
    const proof = await key.proof({ htm: 'GET', htu: WHOAMI, iat: now(), accessToken: token });
    expect((await dpopGet(token, proof, a.app)).status).toBe(200);
    const replay = await dpopGet(token, proof, a.app);
    expectOAuthError(replay, 401, 'invalid_dpop_proof');
    expect(replay.body.error_description).toMatch(/already used/);
    expect((await dpopGet(token, proof, b.app)).status).toBe(200);
    expectOAuthError(await dpopGet(token, proof, b.app), 401, 'invalid_dpop_proof');
  });

  // "written after every other check": a request refused for another reason does not use up its proof.
  it('a proof refused for another reason (scope) is not recorded as used', async () => {
    const strict = t.sa.requireBearer({ scope: 'jobs:write' });
    const lenient = t.sa.requireBearer({ scope: 'jobs:read' });
    let route = strict;
    t.app.post('/api/reports', (req, res, next) => route(req, res, next), (_req, res) => res.json({ ok: true }));
    const token = await boundToken();
    const proof = await key.proof({ htm: 'POST', htu: `${TEST_ISSUER}/api/reports`, iat: now(), accessToken: token });
    const send = () => request(t.app).post('/api/reports').set('Authorization', `DPoP ${token}`).set('DPoP', proof);
    expect((await send()).status).toBe(403);
    route = lenient;
    expect((await send()).status).toBe(200);
    expectOAuthError(await send(), 401, 'invalid_dpop_proof');
  });

  // "a revoked secret's DPoP tokens refused everywhere within 1 s".
  it('DPoP tokens of a revoked secret are refused', async () => {
    const token = await boundToken();
    await t.sa.admin.revokeSecret(account.clientId, account.secret.id);
    const res = await dpopGet(token, await key.proof({ htm: 'GET', htu: WHOAMI, iat: now(), accessToken: token }));
    expectOAuthError(res, 401, 'invalid_token', { challenge: new RegExp(`^${DPOP_OFFER}, error="invalid_token", error_description="The access token was revoked"`) });
  });

  // "bounded with a share per key, never evicting live entries (full: 503, `onEvent`)": the share is a
  // client's, since a client makes up keys at will (ten keys would be ten shares, the whole cache).
  it('a client that fills its share of the replay cache, over many keys, gets 503 and an operational event; other clients are served; live entries are kept', async () => {
    const events: OperationalEvent[] = [];
    t = make({ dpop: { origins: [TEST_ISSUER], maxReplayEntries: 1000 }, onEvent: (event) => void events.push(event) });
    account = await t.sa.admin.createAccount({ name: 'billing-sync', clientAccountId: 'evil', scopes: ['jobs:read'] });
    const sibling = await t.sa.admin.createAccount({ name: 'billing-sync-2', clientAccountId: 'evil', scopes: ['jobs:read'] });
    const victim = await t.sa.admin.createAccount({ name: 'payroll', clientAccountId: 'acme', scopes: ['jobs:read'] });
    const keys = [key, ...(await Promise.all([1, 2, 3].map(() => DpopKey.create())))];
    const tokens = await Promise.all(keys.map((k) => boundToken(t.app, k)));
    const first = await key.proof({ htm: 'GET', htu: WHOAMI, iat: now(), accessToken: tokens[0] });
    expect((await dpopGet(tokens[0]!, first)).status).toBe(200);
    for (let i = 1; i < 100; i++) {
      const k = keys[i % 4]!;
      const token = tokens[i % 4]!;
      expect((await dpopGet(token, await k.proof({ htm: 'GET', htu: WHOAMI, iat: now(), accessToken: token }))).status).toBe(200);
    }
    // The share is full under a key of its own and for another account of the same client account.
    const fresh = await DpopKey.create();
    const freshToken = await boundToken(t.app, fresh);
    const full = await dpopGet(freshToken, await fresh.proof({ htm: 'GET', htu: WHOAMI, iat: now(), accessToken: freshToken }));
    expectOAuthError(full, 503, 'temporarily_unavailable');
    expect(full.headers['retry-after']).toBeDefined();
    const siblingToken = await boundToken(t.app, fresh, sibling);
    expectOAuthError(await dpopGet(siblingToken, await fresh.proof({ htm: 'GET', htu: WHOAMI, iat: now(), accessToken: siblingToken })), 503, 'temporarily_unavailable');
    expect(events.filter((e) => e.type === 'dpop_replay_cache.full')).toEqual([expect.objectContaining({ scope: 'client', entries: 100 })]);
    // Another client account is served.
    const victimKey = await DpopKey.create();
    const victimToken = await boundToken(t.app, victimKey, victim);
    expect((await dpopGet(victimToken, await victimKey.proof({ htm: 'GET', htu: WHOAMI, iat: now(), accessToken: victimToken }))).status).toBe(200);
    // The first proof is still remembered: its replay is refused, not admitted.
    expectOAuthError(await dpopGet(tokens[0]!, first), 401, 'invalid_dpop_proof');
    // Once the window passes, the client is served again.
    t.clock.advance(66);
    expect((await dpopGet(tokens[0]!, await key.proof({ htm: 'GET', htu: WHOAMI, iat: now(), accessToken: tokens[0] }))).status).toBe(200);
  });
});

describe('htu behind a proxy (no dpop.origins)', () => {
  // "Origin from `dpop.origins`, else `req.protocol` and Host as `trust proxy` resolves them; path from `req.originalUrl`."
  it.each([5, 4] as const)('Express %i: the origin comes from X-Forwarded-Proto and X-Forwarded-Host of a trusted proxy, the path from originalUrl', async (version) => {
    const t = createTestApp({ express: version });
    t.app.set('trust proxy', 'loopback');
    const account = await t.sa.admin.createAccount({ name: 'billing-sync' });
    const key = await DpopKey.create();
    const iat = Math.floor(t.clock.now().getTime() / 1000);
    const viaProxy = (req: request.Test) => req.set('X-Forwarded-Proto', 'https').set('X-Forwarded-Host', 'api.example.com');
    const tokenRes = await viaProxy(request(t.app).post('/oauth/token'))
      .type('form')
      .set('DPoP', await key.proof({ htu: 'https://API.example.com:443/oauth/./token', iat }))
      .send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });
    expect(tokenRes.status, tokenRes.text).toBe(200);
    const token = tokenRes.body.access_token as string;
    const ok = await viaProxy(request(t.app).get('/api/whoami?x=1'))
      .set('Authorization', `DPoP ${token}`)
      .set('DPoP', await key.proof({ htm: 'GET', htu: 'https://api.example.com/api/%77hoami', iat, accessToken: token }));
    expect(ok.status, ok.text).toBe(200);
    // The Host the proxy saw is not the one the client addressed: refused.
    const wrongHost = await request(t.app)
      .get('/api/whoami')
      .set('Authorization', `DPoP ${token}`)
      .set('DPoP', await key.proof({ htm: 'GET', htu: 'https://api.example.com/api/whoami', iat, accessToken: token }));
    expectOAuthError(wrongHost, 401, 'invalid_dpop_proof');
  });

  // "a hook for prefix-stripping proxies".
  it('dpop.requestUrl maps the URL a prefix-stripping proxy forwards to the one the client used', async () => {
    const t = createTestApp({
      dpop: { origins: ['https://gateway.example.com'], requestUrl: (_req, derived) => derived.replace('https://gateway.example.com/', 'https://gateway.example.com/billing/') },
    });
    const account = await t.sa.admin.createAccount({ name: 'billing-sync' });
    const key = await DpopKey.create();
    const iat = Math.floor(t.clock.now().getTime() / 1000);
    const res = await request(t.app)
      .post('/oauth/token')
      .type('form')
      .set('DPoP', await key.proof({ htu: 'https://gateway.example.com/billing/oauth/token', iat }))
      .send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });
    expect(res.status, res.text).toBe(200);
  });
});
