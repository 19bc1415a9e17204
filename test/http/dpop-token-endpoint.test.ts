/**
 * DPoP (RFC 9449) at the token endpoint: a request with a valid `DPoP` proof gets a token bound to the
 * proof's key (`cnf.jkt`, `token_type: "DPoP"`); a bad proof is 400 `invalid_dpop_proof`, checked
 * before the client's secret and not counted as a failed authentication; a proof is used once on
 * every instance sharing the store. Time comes from the injected TestClock.
 */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryAccountStore, type AccountRecord, type CreatedAccount } from '../../src/index.js';
import { createTestApp, TEST_ISSUER, type TestAppOptions } from '../helpers/create-app.js';
import { DpopKey, publicKeyPem, unsignedJwt } from '../helpers/dpop-proofs.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';
import { ForwardingStore } from '../helpers/forwarding-store.js';
import { decodeToken } from '../helpers/tokens.js';
import { longExponentRsaKey } from '../helpers/long-exponent-rsa-key.js';

const HTU = `${TEST_ISSUER}/oauth/token`;
const DPOP = { origins: [TEST_ISSUER] };

describe.each([5, 4] as const)('DPoP at the token endpoint on Express %i', (version) => {
  const make = (options: TestAppOptions = {}) => createTestApp({ express: version, dpop: DPOP, ...options });
  let t: ReturnType<typeof make>;
  let account: CreatedAccount;
  let key: DpopKey;
  const now = () => Math.floor(t.clock.now().getTime() / 1000);
  const tokenRequest = (proof?: string, secret = account.secret.value) => {
    const req = request(t.app).post('/oauth/token').type('form');
    if (proof !== undefined) req.set('DPoP', proof);
    return req.send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: secret });
  };

  beforeEach(async () => {
    t = make();
    account = await t.sa.admin.createAccount({ name: 'billing-sync' });
    key = await DpopKey.create();
  });

  // "A token request with a valid `DPoP` header answers `token_type: "DPoP"` and the token carries `cnf.jkt`."
  it('a valid DPoP proof gets token_type DPoP and a token whose cnf.jkt is the proof key thumbprint (RFC 7638)', async () => {
    const res = await tokenRequest(await key.proof({ htu: HTU, iat: now() }));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'DPoP', expires_in: 3600 });
    expect(decodeToken(res.body.access_token).payload).toMatchObject({ cnf: { jkt: key.jkt } });
  });

  // RFC 9449 §5: without a DPoP header, the token is a plain Bearer token.
  it('no DPoP header: a Bearer token without cnf', async () => {
    const res = await tokenRequest();
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('Bearer');
    expect(decodeToken(res.body.access_token).payload).not.toHaveProperty('cnf');
  });

  // "Metadata lists `dpop_signing_alg_values_supported` (with `ES256`)."
  it('the authorization server metadata lists dpop_signing_alg_values_supported with ES256', () => {
    const metadata = t.sa.authorizationServerMetadata({ tokenEndpoint: HTU });
    expect(metadata.dpop_signing_alg_values_supported).toEqual(['ES256', 'PS256']);
  });

  // RFC 9864: `Ed25519` is the fully specified name of EdDSA with an Ed25519 key, which oauth4webapi
  // signs DPoP proofs with; accepted when the server lists it, refused (with the algs it takes) when not.
  it('a proof signed with alg Ed25519 is accepted when dpop.algorithms lists Ed25519, refused when not', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const jwk = publicKey.export({ format: 'jwk' });
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const proof = (jti: string) => {
      const input = `${part({ typ: 'dpop+jwt', alg: 'Ed25519', jwk })}.${part({ htm: 'POST', htu: HTU, iat: now(), jti })}`;
      return `${input}.${sign(null, Buffer.from(input), privateKey).toString('base64url')}`;
    };
    const refused = await tokenRequest(proof('first'));
    expectOAuthError(refused, 400, 'invalid_dpop_proof');
    expect(refused.body.error_description).toMatch(/ES256 PS256/);
    t = make({ dpop: { ...DPOP, algorithms: ['ES256', 'Ed25519'] } });
    account = await t.sa.admin.createAccount({ name: 'billing-sync' });
    const res = await tokenRequest(proof('second'));
    expect(res.status, res.text).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    expect(t.sa.authorizationServerMetadata({ tokenEndpoint: HTU }).dpop_signing_alg_values_supported).toEqual(['ES256', 'Ed25519']);
  });

  // RFC 9449 §4.3: every check of the proof; a failed one is 400 invalid_dpop_proof (§5).
  it('400 invalid_dpop_proof for proofs for another URL or method, alg none, HS256 keyed with the public key, a private jwk, the wrong typ', async () => {
    const iat = now();
    const hs256 = await new SignJWT({ htm: 'POST', htu: HTU, iat, jti: 'hs' })
      .setProtectedHeader({ typ: 'dpop+jwt', alg: 'HS256', jwk: key.publicJwk } as never)
      .sign(new TextEncoder().encode(publicKeyPem(key.publicJwk)));
    const { exportJWK } = await import('jose');
    const privateJwk = await exportJWK(key.privateKey);
    const proofs = [
      await key.proof({ htu: `${TEST_ISSUER}/oauth/other`, iat }),
      await key.proof({ htu: 'https://evil.example/oauth/token', iat }),
      await key.proof({ htm: 'GET', htu: HTU, iat }),
      unsignedJwt({ typ: 'dpop+jwt', alg: 'none', jwk: key.publicJwk }, { htm: 'POST', htu: HTU, iat, jti: 'none' }),
      hs256,
      await key.proof({ htu: HTU, iat, header: { jwk: privateJwk } }),
      await key.proof({ htu: HTU, iat, header: { typ: 'JWT' } }),
      await key.proof({ htu: HTU, iat, jti: 'x'.repeat(129) }),
      await key.proof({ htu: HTU, iat, claims: { pad: 'x'.repeat(4096) } }),
      'not-a-jwt',
    ];
    for (const proof of proofs) {
      const res = await tokenRequest(proof);
      expectOAuthError(res, 400, 'invalid_dpop_proof', { challenge: null });
    }
  });

  // "`iat` within `dpop.proofMaxAge` (60 s) back, `clockTolerance` ahead; the error names both times."
  it('400 invalid_dpop_proof for a stale or future iat, naming the proof time and the server time', async () => {
    const stale = await tokenRequest(await key.proof({ htu: HTU, iat: now() - 61 }));
    expectOAuthError(stale, 400, 'invalid_dpop_proof');
    expect(stale.body.error_description).toContain('2026-11-22T09:58:59Z');
    expect(stale.body.error_description).toContain('2026-11-22T10:00:00Z');
    const future = await tokenRequest(await key.proof({ htu: HTU, iat: now() + 6 }));
    expectOAuthError(future, 400, 'invalid_dpop_proof');
    expect(future.body.error_description).toMatch(/after the server's time \(2026-11-22T10:00:00Z\)/);
    // Within the bounds: accepted.
    expect((await tokenRequest(await key.proof({ htu: HTU, iat: now() - 60 }))).status).toBe(200);
    expect((await tokenRequest(await key.proof({ htu: HTU, iat: now() + 5 }))).status).toBe(200);
  });

  // RFC 9449 §4.3: an iat beyond what a date can hold is as stale or as early as any other, not a server error.
  it('400 invalid_dpop_proof for an iat too far off for any date, before any client authentication', async () => {
    for (const iat of [1e13, -1e13, 1e300]) {
      const res = await tokenRequest(await key.proof({ htu: HTU, iat }));
      expectOAuthError(res, 400, 'invalid_dpop_proof');
      expect(res.body.error_description).toContain(`${iat} s since 1970`);
    }
  });

  // RFC 9449 §4.3 (the proof's signature verifies with its jwk) and RFC 8017 §3.1: a verify costs a modular
  // exponentiation by the key's public exponent, so one as long as the modulus made every unauthenticated
  // request pay a hundred signature checks' work on the event loop. Refused before any signature check.
  it('400 invalid_dpop_proof for an RSA jwk whose public exponent is not 3 to 2^32 - 1, before its signature is checked', async () => {
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const header = part({ typ: 'dpop+jwt', alg: 'PS256', jwk: { kty: 'RSA', ...longExponentRsaKey() } });
    const claims = part({ htm: 'POST', htu: HTU, iat: now(), jti: 'big-exponent' });
    const res = await tokenRequest(`${header}.${claims}.${randomBytes(384).toString('base64url')}`);
    expectOAuthError(res, 400, 'invalid_dpop_proof');
    expect(res.body.error_description).toContain('public exponent');
  });

  it('400 invalid_dpop_proof for an RSA jwk of more than 8192 bits, before its signature is checked', async () => {
    const modulus = randomBytes(1025); // 8200 bits
    modulus[0]! |= 0x80;
    modulus[1024]! |= 1;
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const header = part({ typ: 'dpop+jwt', alg: 'PS256', jwk: { kty: 'RSA', n: modulus.toString('base64url'), e: 'AQAB' } });
    const claims = part({ htm: 'POST', htu: HTU, iat: now(), jti: 'large-modulus' });
    const res = await tokenRequest(`${header}.${claims}.${randomBytes(1025).toString('base64url')}`);
    expectOAuthError(res, 400, 'invalid_dpop_proof');
    expect(res.body.error_description).toContain('at most 8192 bits');
  });

  // "A `DPoP` header ... is checked per §4.3 before any bcrypt work ... A bad proof: 400 `invalid_dpop_proof`, not a limiter failure."
  it('a bad proof is answered before the secret is checked and does not count towards the failure limit', async () => {
    t = make({ failureLimit: { max: 1, windowSeconds: 60 } });
    account = await t.sa.admin.createAccount({ name: 'billing-sync' });
    const bad = await key.proof({ htu: `${TEST_ISSUER}/elsewhere`, iat: now() });
    for (let i = 0; i < 3; i++) expectOAuthError(await tokenRequest(bad, 'esas_wrong'), 400, 'invalid_dpop_proof');
    expect(t.events.filter((e) => e.type === 'client.authentication_failed')).toEqual([]);
    const res = await tokenRequest(await key.proof({ htu: HTU, iat: now() }));
    expect(res.status, res.text).toBe(200);
  });

  // "once the client is authenticated, its `jti` is single-use on every instance through the store record `client_assertion` uses."
  it('a proof is used once, on this instance and on another sharing the store', async () => {
    const store = new MemoryAccountStore();
    const a = make({ store, now: t.clock.now });
    const b = make({ store, now: t.clock.now });
    account = await a.sa.admin.createAccount({ name: 'billing-sync' });
    const proof = await key.proof({ htu: HTU, iat: now() });
    const send = ({ app }: typeof a) => request(app).post('/oauth/token').type('form').set('DPoP', proof).send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });
    expect((await send(a)).status).toBe(200);
    const again = await send(a);
    expectOAuthError(again, 400, 'invalid_dpop_proof');
    expect(again.body.error_description).toMatch(/already used/);
    expectOAuthError(await send(b), 400, 'invalid_dpop_proof');
  });

  // docs/dpop.md: "It is recorded after every other check passed, so a refused request never uses up a proof."
  it('a token request refused for its scope or resource does not use up its proof', async () => {
    account = await t.sa.admin.createAccount({ name: 'reports', scopes: ['jobs:read'] });
    const proof = await key.proof({ htu: HTU, iat: now() });
    const send = (parameters: Record<string, string>) =>
      request(t.app).post('/oauth/token').type('form').set('DPoP', proof).send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value, ...parameters });
    expectOAuthError(await send({ scope: 'jobs:write' }), 400, 'invalid_scope');
    expectOAuthError(await send({ resource: 'https://elsewhere.example.com' }), 400, 'invalid_target');
    const res = await send({ scope: 'jobs:read' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    expectOAuthError(await send({ scope: 'jobs:read' }), 400, 'invalid_dpop_proof');
  });

  // Same rule for the host's extraTokenClaims hook: a request it fails (500) keeps its proof.
  it('a token request whose extraTokenClaims hook fails does not use up its proof', async () => {
    let fail = true;
    t = make({ extraTokenClaims: () => {
      if (fail) throw new Error('claims service down');
      return { team: 'billing' };
    } });
    account = await t.sa.admin.createAccount({ name: 'reports' });
    const proof = await key.proof({ htu: HTU, iat: now() });
    expectOAuthError(await tokenRequest(proof), 500, 'server_error');
    fail = false;
    const res = await tokenRequest(proof);
    expect(res.status, res.text).toBe(200);
    expect(decodeToken(res.body.access_token).payload).toMatchObject({ team: 'billing', cnf: { jkt: key.jkt } });
    expectOAuthError(await tokenRequest(proof), 400, 'invalid_dpop_proof');
  });

  // With a store that cannot record used proofs (no consumeAssertionId), each instance remembers them in
  // its replay cache, where a client (a client account, or a service account without one) holds a tenth.
  it('over a store without consumeAssertionId, a client account that fills its share of the replay cache gets 503; another client account is served', async () => {
    t = make({ store: new ForwardingStore(new MemoryAccountStore()), dpop: { ...DPOP, maxReplayEntries: 1000 } });
    const [first, sibling, other] = await Promise.all([
      t.sa.admin.createAccount({ name: 'evil-1', clientAccountId: 'evil' }),
      t.sa.admin.createAccount({ name: 'evil-2', clientAccountId: 'evil' }),
      t.sa.admin.createAccount({ name: 'acme-1', clientAccountId: 'acme' }),
    ]);
    const send = async (who: CreatedAccount) =>
      request(t.app).post('/oauth/token').type('form').set('DPoP', await key.proof({ htu: HTU, iat: now() })).send({ grant_type: 'client_credentials', client_id: who.clientId, client_secret: who.secret.value });
    const proof = await key.proof({ htu: HTU, iat: now() });
    const once = () => request(t.app).post('/oauth/token').type('form').set('DPoP', proof).send({ grant_type: 'client_credentials', client_id: first.clientId, client_secret: first.secret.value });
    expect((await once()).status).toBe(200);
    expectOAuthError(await once(), 400, 'invalid_dpop_proof');
    for (let i = 1; i < 100; i++) expect((await send(i % 2 === 0 ? first : sibling)).status).toBe(200);
    expectOAuthError(await send(sibling), 503, 'temporarily_unavailable');
    expect((await send(other)).status).toBe(200);
  });

  // RFC 9449 §4.3 step 1: "there is not more than one DPoP HTTP request header field".
  it('400 invalid_dpop_proof for two DPoP headers (Node would join them)', async () => {
    const server = t.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const proof = await key.proof({ htu: HTU, iat: now() });
      const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value }).toString();
      const answer = await new Promise<{ status: number; body: { error: string } }>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port, method: 'POST', path: '/oauth/token', headers: { 'Content-Type': 'application/x-www-form-urlencoded', DPoP: [proof, proof] } },
          (res) => {
            let text = '';
            res.on('data', (chunk) => (text += chunk));
            res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect(answer.status).toBe(400);
      expect(answer.body.error).toBe('invalid_dpop_proof');
    } finally {
      server.close();
    }
  });

  // RFC 9449 §5.2 `dpop_bound_access_tokens`: such an account without a proof gets 400 invalid_dpop_proof.
  it('an account that requires DPoP-bound tokens is refused without a proof, and served with one', async () => {
    const inner = new MemoryAccountStore();
    class DpopRequiringStore extends ForwardingStore {
      override async findAccount(clientId: string): Promise<AccountRecord | undefined> {
        const found = await this.inner.findAccount(clientId);
        return found && { ...found, dpopBoundAccessTokens: true };
      }
    }
    t = make({ store: new DpopRequiringStore(inner) });
    account = await t.sa.admin.createAccount({ name: 'billing-sync' });
    const refused = await tokenRequest();
    expectOAuthError(refused, 400, 'invalid_dpop_proof');
    const res = await tokenRequest(await key.proof({ htu: HTU, iat: now() }));
    expect(res.status, res.text).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
  });
});

// RFC 9449 §6.2: introspection of a DPoP-bound token tells `token_type: "DPoP"` and `cnf.jkt`.
describe('introspection of a DPoP-bound token', () => {
  it('answers token_type DPoP and cnf.jkt', async () => {
    const t = createTestApp({ dpop: DPOP, allowUnrestrictedIntrospection: true });
    const account = await t.sa.admin.createAccount({ name: 'billing-sync' });
    const key = await DpopKey.create();
    const iat = Math.floor(t.clock.now().getTime() / 1000);
    const issued = await request(t.app)
      .post('/oauth/token')
      .type('form')
      .set('DPoP', await key.proof({ htu: HTU, iat }))
      .send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });
    const res = await request(t.app)
      .post('/oauth/introspect')
      .type('form')
      .send({ token: issued.body.access_token, client_id: account.clientId, client_secret: account.secret.value });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: key.jkt } });
  });
});
