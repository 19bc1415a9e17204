/**
 * The token attack matrix. CONTRACT §3: "token forged, tampered, alg: none, wrong issuer or audience,
 * garbage → 401, WWW-Authenticate: Bearer ..., error="invalid_token"". The app signs with ES256, so
 * algorithm confusion (HS256 keyed with the ES256 public key) can be tried. Each forged token is
 * built from a real token's claims, so only the attacked property differs.
 */
import { createHmac, generateKeyPairSync, sign as cryptoSign, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { MemoryAccountStore } from '../../src/index.js';
import { MAX_TOKEN_LENGTH } from '../../src/access-tokens/access-token.js';
import { createTestApp } from '../helpers/create-app.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const signingKeys = [{ alg: 'ES256' as const, key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }];

const b64url = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** Signs header.payload with ES256 (raw r||s, RFC 7518 §3.4). */
function es256(header: object, payload: object, key: KeyObject = privateKey): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  const signature = cryptoSign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

function hs256(header: object, payload: object, key: Buffer | string): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}

const t = createTestApp({ signingKeys });
const kid = t.sa.config.signingKey.kid;
let token: string;
let claims: Record<string, unknown>;
let account: { clientId: string; secret: { id: string; value: string } };

beforeAll(async () => {
  account = await t.sa.admin.createAccount({ name: 'attacked' });
  const res = await request(t.app)
    .post('/oauth/token')
    .type('form')
    .send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value })
    .expect(200);
  token = res.body.access_token;
  claims = jwt.decode(token) as Record<string, unknown>;
});

const header = (overrides: Record<string, unknown> = {}) => ({ alg: 'ES256', typ: 'at+jwt', kid, ...overrides });

/** The request must be refused 401 invalid_token with a Bearer challenge naming the error. */
async function expectRefused(bearer: string, app = t.app, description?: RegExp): Promise<void> {
  const res = await request(app).get('/api/whoami').set('Authorization', `Bearer ${bearer}`);
  expectOAuthError(res, 401, 'invalid_token');
  expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="[^"]*", error="invalid_token"/);
  if (description) expect(res.body.error_description).toMatch(description);
  expect(res.text).not.toContain(account.clientId);
}

describe('token attack matrix (all → 401 invalid_token)', () => {
  it('admits the untampered token (control)', async () => {
    await request(t.app).get('/api/whoami').set('Authorization', `Bearer ${token}`).expect(200);
    expect(es256(header(), claims)).not.toBe(token); // a fresh signature over the same claims
    await request(t.app).get('/api/whoami').set('Authorization', `Bearer ${es256(header(), claims)}`).expect(200);
  });

  // Issue 6 point 3: "`alg: none` in every casing": all 2^4 = 16 of them, none … NONE.
  const NONE_CASINGS = Array.from({ length: 16 }, (_, bits) =>
    [...'none'].map((c, i) => (bits & (1 << (3 - i)) ? c.toUpperCase() : c)).join(''),
  );
  it('covers the 16 casings of "none"', () => {
    expect(new Set(NONE_CASINGS).size).toBe(16);
    expect(NONE_CASINGS).toEqual(expect.arrayContaining(['none', 'None', 'nOne', 'noNe', 'nonE', 'NONE', 'nOnE']));
    for (const alg of NONE_CASINGS) expect(alg.toLowerCase()).toBe('none');
  });

  for (const alg of NONE_CASINGS) {
    it(`alg: ${alg}, with an empty or a copied signature`, async () => {
      const unsigned = `${b64url(header({ alg }))}.${b64url(claims)}`;
      await expectRefused(`${unsigned}.`);
      await expectRefused(`${unsigned}.${token.split('.')[2]}`);
      // RFC 7519 §6.1 unsecured JWT, and without typ/kid too
      await expectRefused(`${b64url({ alg })}.${b64url(claims)}.`);
    });
  }

  it('HS256 signed with the ES256 public key (algorithm confusion)', async () => {
    const pem = publicKey.export({ type: 'spki', format: 'pem' });
    const der = publicKey.export({ type: 'spki', format: 'der' });
    for (const key of [pem, der, Buffer.from(JSON.stringify(publicKey.export({ format: 'jwk' })))]) {
      await expectRefused(hs256(header({ alg: 'HS256' }), claims, key));
      await expectRefused(hs256({ alg: 'HS256', typ: 'at+jwt' }, claims, key));
    }
  });

  it('an unknown kid', async () => {
    await expectRefused(es256(header({ kid: 'unknown-key' }), claims));
    await expectRefused(es256(header({ kid: undefined }), claims));
    await expectRefused(es256(header({ kid: 42 }), claims));
  });

  for (const evil of ['../../../../etc/passwd', "' OR '1'='1' --", '"; DROP TABLE service_accounts; --', 'kid\u0000', '/dev/null', '%2e%2e%2f']) {
    it(`a kid with path or SQL characters: ${JSON.stringify(evil)}`, async () => {
      await expectRefused(es256(header({ kid: evil }), claims));
    });
  }

  it('an expired token', async () => {
    const { app, sa, clock } = createTestApp({ signingKeys, store: t.store });
    const res = await request(app)
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value })
      .expect(200);
    await request(app).get('/api/whoami').set('Authorization', `Bearer ${res.body.access_token}`).expect(200);
    clock.advance(3600 + 6); // past exp and the 5 s tolerance
    await expectRefused(res.body.access_token, app, /expired/);
    await sa.close();
  });

  it('nbf in the future', async () => {
    await expectRefused(es256(header(), { ...claims, nbf: (claims.iat as number) + 600 }));
  });

  it('a wrong iss', async () => {
    await expectRefused(es256(header(), { ...claims, iss: 'https://evil.example' }));
    const { iss: _iss, ...withoutIss } = claims;
    await expectRefused(es256(header(), withoutIss));
  });

  it('a wrong aud', async () => {
    await expectRefused(es256(header(), { ...claims, aud: 'https://other-api.example' }));
    await expectRefused(es256(header(), { ...claims, aud: ['https://other-api.example'] }));
    const { aud: _aud, ...withoutAud } = claims;
    await expectRefused(es256(header(), withoutAud));
  });

  it('a wrong or missing typ', async () => {
    for (const typ of ['JWT', 'jwt', 'at+jwt2', 'application/jwt', '', null, 1]) {
      await expectRefused(es256(header({ typ }), claims));
    }
    await expectRefused(es256({ alg: 'ES256', kid }, claims));
  });

  it('a truncated token', async () => {
    const [h, p, s] = token.split('.') as [string, string, string];
    for (const cut of [token.slice(0, -1), token.slice(0, -10), `${h}.${p}`, `${h}.${p}.`, h, `${h}.${p.slice(0, -4)}.${s}`, token.slice(1)]) {
      await expectRefused(cut);
    }
  });

  it('an oversized token (> 8192 characters), even when validly signed', async () => {
    const big = es256(header(), { ...claims, padding: 'x'.repeat(MAX_TOKEN_LENGTH) });
    expect(big.length).toBeGreaterThan(MAX_TOKEN_LENGTH);
    await expectRefused(big);
  });

  it('a token from another keyring', async () => {
    // Same kid, another key: the signature fails.
    await expectRefused(es256(header(), claims, other.privateKey));
    // Another keyring entirely, as another deployment would issue it.
    const foreign = createTestApp({ signingKeys: [{ alg: 'ES256', key: other.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }] });
    const a = await foreign.sa.admin.createAccount({ name: 'foreign' });
    const res = await request(foreign.app)
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'client_credentials', client_id: a.clientId, client_secret: a.secret.value })
      .expect(200);
    await expectRefused(res.body.access_token);
    // An HS256 keyring with a kid that collides with ours.
    await expectRefused(jwt.sign(claims, 'another-signing-key-0123456789abcdef', { algorithm: 'HS256', header: { alg: 'HS256', typ: 'at+jwt', kid } }));
    await foreign.sa.close();
  });

  it('a token of an account that no longer exists', async () => {
    // A fresh store sharing the keyring: the account the token names has vanished.
    const vanished = createTestApp({ signingKeys, store: new MemoryAccountStore() });
    await expectRefused(token, vanished.app);
    await vanished.sa.close();
  });

  it('a token replayed after its secret was revoked', async () => {
    const { app, sa } = createTestApp({ signingKeys });
    const victim = await sa.admin.createAccount({ name: 'revoked' });
    const res = await request(app)
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'client_credentials', client_id: victim.clientId, client_secret: victim.secret.value })
      .expect(200);
    const replayed = res.body.access_token as string;
    await request(app).get('/api/whoami').set('Authorization', `Bearer ${replayed}`).expect(200);
    await sa.admin.revokeSecret(victim.clientId, victim.secret.id);
    await expectRefused(replayed, app, /revoked/);
    await expectRefused(replayed, app, /revoked/);
    await sa.close();
  });

  it('a token whose claims were edited but whose signature was kept (tampering)', async () => {
    const [h, , s] = token.split('.') as [string, string, string];
    await expectRefused(`${h}.${b64url({ ...claims, sub: 'esa_someoneelse00000000000', client_id: 'esa_someoneelse00000000000' })}.${s}`);
    await expectRefused(`${h}.${b64url({ ...claims, exp: (claims.exp as number) + 86_400 })}.${s}`);
  });
});

/**
 * Checks beyond the signature: each token is signed with the app's own ES256 key, as someone holding
 * the signing key (or a bug in another issuer sharing the keyring) could make it.
 */
describe('token attack matrix, validly signed (all → 401 invalid_token)', () => {
  const iat = () => claims.iat as number;

  // RFC 7515 §4.1.11: a recipient that does not understand a listed extension must reject the JWS.
  it('a crit header', async () => {
    await expectRefused(es256(header({ crit: ['exp'] }), claims));
    await expectRefused(es256(header({ crit: ['urn:example:ext'], 'urn:example:ext': 1 }), claims));
  });

  // RFC 7797 §3: "b64": false signs the payload unencoded.
  it('b64: false', async () => {
    await expectRefused(es256(header({ b64: false }), claims));
  });

  // RFC 7519 §4.1.6: iat is when the token was issued; not later than now plus the 5 s tolerance.
  it('iat in the future', async () => {
    await expectRefused(es256(header(), { ...claims, iat: iat() + 60, exp: iat() + 3660 }));
  });

  it('iat after exp', async () => {
    await expectRefused(es256(header(), { ...claims, iat: iat() + 3, exp: iat() + 2 }));
  });

  // RFC 7519 §2 NumericDate: whole seconds from 1970 to 9999 only.
  it('exp not a whole number of seconds in range', async () => {
    for (const exp of [iat() + 3600.5, 2 ** 53, 1e15]) await expectRefused(es256(header(), { ...claims, exp }));
  });

  it('iat not a whole number of seconds in range', async () => {
    for (const bad of [iat() - 0.5, 0, -1]) await expectRefused(es256(header(), { ...claims, iat: bad }));
  });

  it('nbf not a whole number of seconds in range', async () => {
    for (const nbf of [iat() - 0.5, 0, -1]) await expectRefused(es256(header(), { ...claims, nbf }));
  });
});
