/**
 * Key-pair assertions shaped as widely used clients make them (docs/private-key-jwt.md, docs/clients.md),
 * made with `jose`: each header and claim set is accepted when its audience is the issuer identifier,
 * and refused with the audit reason the docs give when it is not.
 */
import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import { base64url, SignJWT, type JWTPayload } from 'jose';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/index.js';
import { createTestApp, TEST_ISSUER } from '../helpers/create-app.js';
import { assertionFields } from '../helpers/client-assertions.js';

const flushAudit = () => new Promise<void>((resolve) => setImmediate(resolve));
const TOKEN_ENDPOINT = `${TEST_ISSUER}/oauth/token`;

async function setUp(bits = 2048) {
  const t = createTestApp();
  const account = await t.sa.admin.createAccount({ name: 'partner' });
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  await t.sa.admin.addKey(account.clientId, publicKey.export({ type: 'spki', format: 'pem' }) as string);
  const now = Math.floor(t.clock.now().getTime() / 1000);
  const id = account.clientId;
  const sign = (header: Record<string, unknown>, claims: JWTPayload) =>
    new SignJWT({ iss: id, sub: id, ...claims }).setProtectedHeader({ alg: 'RS256', ...header }).sign(privateKey);
  const post = (assertion: string, extra: Record<string, string> = {}) => request(t.app).post('/oauth/token').type('form').send(assertionFields(assertion, extra));
  const lastReason = async () => {
    await flushAudit();
    return t.events.filter((e): e is Extract<AuditEvent, { type: 'client.authentication_failed' }> => e.type === 'client.authentication_failed').at(-1)?.reason;
  };
  return { id, now, spki, sign, post, lastReason };
}

describe('assertions as real clients make them', () => {
  // Authlib PrivateKeyJWT: typ JWT, exp = iat + 3600, a 36-character jti; aud the URL it posts to
  // unless given the issuer (docs/clients.md#python-authlib).
  it('Authlib: accepted with the issuer as aud; its default, the token endpoint URL, is wrong_audience', async () => {
    const t = await setUp();
    const authlib = (aud: string) => t.sign({ typ: 'JWT' }, { aud, iat: t.now, exp: t.now + 3600, jti: randomUUID().replace(/-/g, '').padEnd(36, '0') });
    await t.post(await authlib(TEST_ISSUER)).expect(200);
    expect((await t.post(await authlib(TOKEN_ENDPOINT))).status).toBe(401);
    expect(await t.lastReason()).toBe('wrong_audience');
  });

  // MSAL: x5t (SHA-1) or x5t#S256 of the certificate and no kid, nbf = iat, exp 10 minutes, client_id in the body.
  it.each(['x5t', 'x5t#S256'])('MSAL-style: a %s header and no kid is tried on the registered key', async (name) => {
    const t = await setUp();
    const thumbprint = base64url.encode(createHash(name === 'x5t' ? 'sha1' : 'sha256').update(t.spki).digest());
    const claims = { aud: TEST_ISSUER, jti: randomUUID(), nbf: t.now, iat: t.now, exp: t.now + 600 };
    await t.post(await t.sign({ typ: 'JWT', [name]: thumbprint }, claims), { client_id: t.id }).expect(200);
  });

  // Spring Security: a kid of the client's own (its JWK's), exp = iat + 60, client_id in the body.
  it('Spring Security-style: a kid that is no key ID of ours falls back to the registered key', async () => {
    const t = await setUp();
    await t.post(await t.sign({ kid: randomUUID() }, { aud: TEST_ISSUER, jti: randomUUID(), iat: t.now, exp: t.now + 60 }), { client_id: t.id }).expect(200);
  });

  // golang.org/x/oauth2/jws: typ JWT, iat = now - 10 s, exp = iat + 1 h, and no jti unless the caller adds one.
  it('Go jws-style: accepted with a jti in its private claims; without one, invalid_assertion', async () => {
    const t = await setUp();
    const go = (extra: JWTPayload) => t.sign({ typ: 'JWT' }, { aud: TEST_ISSUER, iat: t.now - 10, exp: t.now - 10 + 3600, ...extra });
    await t.post(await go({ jti: randomUUID() })).expect(200);
    expect((await t.post(await go({}))).status).toBe(401);
    expect(await t.lastReason()).toBe('invalid_assertion');
  });

  // Keycloak's JWT client authentication: nbf 0, a short exp; and NumericDates with fractions (RFC 7519 §2).
  it('Keycloak-style nbf 0, and fractional NumericDates', async () => {
    const t = await setUp();
    await t.post(await t.sign({ typ: 'JWT', kid: 'kc' }, { aud: TEST_ISSUER, jti: randomUUID(), nbf: 0, iat: t.now, exp: t.now + 10 })).expect(200);
    await t.post(await t.sign({}, { aud: TEST_ISSUER, jti: randomUUID(), iat: t.now + 0.25, exp: t.now + 60.5 })).expect(200);
  });

  it.each([3072, 4096])('an RSA key of %i bits, with RS256, PS256 and RS512', async (bits) => {
    const t = await setUp(bits);
    for (const alg of ['RS256', 'PS256', 'RS512']) {
      await t.post(await t.sign({ alg }, { aud: TEST_ISSUER, jti: randomUUID(), exp: t.now + 60 })).expect(200);
    }
  });
});
