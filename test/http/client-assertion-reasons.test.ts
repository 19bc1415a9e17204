/**
 * Which rule a refused key-pair assertion broke (docs/errors.md#invalid_client): one audit reason per
 * rule, given to `onAudit` only, while the client gets the same `401 invalid_client` with the same
 * description as for a wrong secret. And `acceptTokenEndpointAudience` (docs/private-key-jwt.md#audience):
 * off by default; on, the token endpoint URL is accepted as the sole audience of an untyped assertion only.
 */
import { randomUUID, sign, type KeyObject } from 'node:crypto';
import express from 'express';
import { base64url } from 'jose';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createServiceAccounts, MemoryAccountStore, type AuditEvent } from '../../src/index.js';
import { createTestApp, TEST_HS256_KEY, TEST_ISSUER, TestClock } from '../helpers/create-app.js';
import { assertionFields, newKeyPair, signAssertion, signRawEs256, type AssertionOptions, type TestKeyPair } from '../helpers/client-assertions.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';

/** The audit hook runs off the request path (setImmediate): let it run. */
const flushAudit = () => new Promise<void>((resolve) => setImmediate(resolve));

async function setUp(options: Parameters<typeof createTestApp>[0] = {}) {
  const test = createTestApp(options);
  const account = await test.sa.admin.createAccount({ name: 'ci-deployer' });
  const pair = await newKeyPair('ES256');
  const key = await test.sa.admin.addKey(account.clientId, pair.publicPem);
  const now = () => Math.floor(test.clock.now().getTime() / 1000);
  const assertion = (opts: AssertionOptions = {}, by: TestKeyPair = pair) => signAssertion(by, account.clientId, { now: now(), ...opts });
  const post = (fields: Record<string, string>, path = '/oauth/token') => request(test.app).post(path).type('form').send(fields);
  const reasons = () => test.events.filter((e): e is Extract<AuditEvent, { type: 'client.authentication_failed' }> => e.type === 'client.authentication_failed').map((e) => e.reason);
  // The answer to a wrong secret: every refused assertion must look exactly like it.
  const secret = account.secret.value;
  const wrong = `${secret.slice(0, -1)}${secret.endsWith('x') ? 'y' : 'x'}`; // always differs from the secret
  const wrongSecret = await request(test.app).post('/oauth/token').auth(account.clientId, wrong).type('form').send({ grant_type: 'client_credentials' });
  expect(wrongSecret.status).toBe(401);
  return { ...test, account, pair, key, now, assertion, post, reasons, wrongSecretBody: wrongSecret.body as unknown };
}

type Setup = Awaited<ReturnType<typeof setUp>>;

/** 401 invalid_client with the wrong secret's exact body, and `reason` as the last audit reason. */
async function expectReason(t: Setup, res: request.Response, reason: string): Promise<void> {
  expectOAuthError(res, 401, 'invalid_client');
  expect(res.body).toEqual(t.wrongSecretBody);
  await flushAudit();
  expect(t.reasons().at(-1)).toBe(reason);
}

describe('a refused key-pair assertion names the rule it broke (audit only)', () => {
  it('wrong_audience: aud is not the issuer identifier', async () => {
    const t = await setUp();
    await expectReason(t, await t.post(assertionFields(await t.assertion({ claims: { aud: 'https://other.example' } }))), 'wrong_audience');
  });

  it('assertion_lifetime_too_long: exp further ahead than maxAssertionLifetime plus the clock tolerance', async () => {
    const t = await setUp({ maxAssertionLifetime: 300 });
    await expectReason(t, await t.post(assertionFields(await t.assertion({ claims: { exp: t.now() + 306 } }))), 'assertion_lifetime_too_long');
  });

  it('expired_assertion: exp passed beyond the clock tolerance', async () => {
    const t = await setUp();
    await expectReason(t, await t.post(assertionFields(await t.assertion({ claims: { iat: t.now() - 60, exp: t.now() - 6 } }))), 'expired_assertion');
  });

  it('assertion_not_yet_valid: nbf, or iat, in the future beyond the clock tolerance', async () => {
    const t = await setUp();
    await expectReason(t, await t.post(assertionFields(await t.assertion({ claims: { nbf: t.now() + 6 } }))), 'assertion_not_yet_valid');
    await expectReason(t, await t.post(assertionFields(await t.assertion({ claims: { iat: t.now() + 6 } }))), 'assertion_not_yet_valid');
  });

  it('replayed_assertion: its jti was used before', async () => {
    const t = await setUp();
    const assertion = await t.assertion();
    await t.post(assertionFields(assertion)).expect(200);
    await expectReason(t, await t.post(assertionFields(assertion)), 'replayed_assertion');
  });

  it('unknown_key: signed by a key the account does not hold, named or not', async () => {
    const t = await setUp();
    const stranger = await newKeyPair('ES256');
    await expectReason(t, await t.post(assertionFields(await t.assertion({}, stranger))), 'unknown_key');
    await expectReason(t, await t.post(assertionFields(await t.assertion({ header: { kid: 'laptop-2024' } }, stranger))), 'unknown_key');
  });

  it('bad_signature: the key its kid names does not verify it', async () => {
    const t = await setUp();
    const stranger = await newKeyPair('ES256');
    await expectReason(t, await t.post(assertionFields(await t.assertion({ header: { kid: t.key.id } }, stranger))), 'bad_signature');
    // Altered after signing, by the registered key's name.
    const [header, , signature] = (await t.assertion({ header: { kid: t.key.thumbprint } })).split('.');
    const payload = Buffer.from(JSON.stringify({ iss: t.account.clientId, sub: t.account.clientId, aud: TEST_ISSUER, exp: t.now() + 60, jti: 'altered' })).toString('base64url');
    await expectReason(t, await t.post(assertionFields(`${header}.${payload}.${signature}`)), 'bad_signature');
  });

  // RFC 7518 §3.4: an ES256 signature is R and S, 32 bytes each, concatenated. The ASN.1 DER form that
  // OpenSSL, Go's ecdsa.SignASN1 and Java's Signature("SHA256withECDSA") produce is no JWS signature:
  // refused as a malformed assertion, not as a key the account does not hold or a signature altered.
  it('invalid_assertion: an ES256 signature in DER form, whether its kid names the key or not', async () => {
    const t = await setUp();
    const claims = { iss: t.account.clientId, sub: t.account.clientId, aud: TEST_ISSUER, exp: t.now() + 60 };
    for (const header of [{ alg: 'ES256' }, { alg: 'ES256', kid: t.key.id }]) {
      const input = `${base64url.encode(JSON.stringify(header))}.${base64url.encode(JSON.stringify({ ...claims, jti: randomUUID() }))}`;
      const der = sign('sha256', Buffer.from(input), { key: t.pair.privateKey as KeyObject, dsaEncoding: 'der' });
      await expectReason(t, await t.post(assertionFields(`${input}.${base64url.encode(der)}`)), 'invalid_assertion');
    }
    // The same key's signature in the JWS form passes.
    await t.post(assertionFields(signRawEs256(t.pair, {}, { ...claims, jti: randomUUID() }))).expect(200);
  });

  it('a right assertion still passes, and 3600 s is the default longest lifetime', async () => {
    const t = await setUp();
    await t.post(assertionFields(await t.assertion({ claims: { exp: t.now() + 3600 } }))).expect(200);
    await expectReason(t, await t.post(assertionFields(await t.assertion({ claims: { exp: t.now() + 3606 } }))), 'assertion_lifetime_too_long');
  });
});

describe('acceptTokenEndpointAudience', () => {
  const TOKEN_ENDPOINT = `${TEST_ISSUER}/oauth/token`;

  it('is off by default: the token endpoint URL is refused as the audience', async () => {
    const t = await setUp();
    await expectReason(t, await t.post(assertionFields(await t.assertion({ claims: { aud: TOKEN_ENDPOINT } }))), 'wrong_audience');
  });

  // The update to RFC 7523 on client authentication audiences: an explicitly typed assertion's
  // audience is the issuer identifier; an untyped one may carry the token endpoint URL while clients move over.
  it('true: accepts the token endpoint URL (issuer origin + mount path + /token) as the sole audience of an untyped assertion', async () => {
    const t = await setUp({ acceptTokenEndpointAudience: true });
    await t.post(assertionFields(await t.assertion({ claims: { aud: TOKEN_ENDPOINT } }))).expect(200);
    await t.post(assertionFields(await t.assertion({ claims: { aud: [TOKEN_ENDPOINT] } }))).expect(200);
    await t.post(assertionFields(await t.assertion({ header: { typ: 'JWT' }, claims: { aud: TOKEN_ENDPOINT } }))).expect(200);
    // The issuer identifier stays accepted, typed or not.
    await t.post(assertionFields(await t.assertion())).expect(200);
    await t.post(assertionFields(await t.assertion({ header: { typ: 'client-authentication+jwt' } }))).expect(200);
    // The same client authentication at the revocation endpoint: the token endpoint URL is the audience there too.
    const token = (await t.post(assertionFields(await t.assertion())).expect(200)).body.access_token as string;
    const { grant_type: _unused, ...clientFields } = assertionFields(await t.assertion({ claims: { aud: TOKEN_ENDPOINT } }));
    await t.post({ ...clientFields, token }, '/oauth/revoke').expect(200);
  });

  it('true: refuses it for an explicitly typed assertion, in a list with another value, and any other URL', async () => {
    const t = await setUp({ acceptTokenEndpointAudience: true });
    for (const typ of ['client-authentication+jwt', 'application/Client-Authentication+JWT']) {
      await expectReason(t, await t.post(assertionFields(await t.assertion({ header: { typ }, claims: { aud: TOKEN_ENDPOINT } }))), 'wrong_audience');
    }
    await expectReason(t, await t.post(assertionFields(await t.assertion({ claims: { aud: [TOKEN_ENDPOINT, TEST_ISSUER] } }))), 'wrong_audience');
    await expectReason(t, await t.post(assertionFields(await t.assertion({ claims: { aud: `${TEST_ISSUER}/oauth/revoke` } }))), 'wrong_audience');
    await expectReason(t, await t.post(assertionFields(await t.assertion({ claims: { aud: `${TEST_ISSUER}/token` } }))), 'wrong_audience');
  });

  it('true: the URL follows the path the token router is mounted on', async () => {
    const clock = new TestClock();
    const sa = createServiceAccounts({
      store: new MemoryAccountStore(),
      issuer: 'https://api.test',
      signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY }],
      secretHashRounds: 4,
      now: clock.now,
      acceptTokenEndpointAudience: true,
    });
    const app = express().use('/auth/v2', sa.tokenRouter);
    const account = await sa.admin.createAccount({ name: 'mounted' });
    const pair = await newKeyPair('ES256');
    await sa.admin.addKey(account.clientId, pair.publicPem);
    const now = Math.floor(clock.now().getTime() / 1000);
    const post = async (aud: string) =>
      request(app).post('/auth/v2/token').type('form').send(assertionFields(await signAssertion(pair, account.clientId, { now, claims: { aud } })));
    // The issuer's origin and the path the router is mounted on: the URL clients post to.
    await post('https://api.test/auth/v2/token').then((res) => expect(res.status).toBe(200));
    await post('https://api.test/oauth/token').then((res) => expect(res.status).toBe(401));
    await post('https://api.test').then((res) => expect(res.status).toBe(200));
    await sa.close();
  });

  it('true is refused at start for an issuer with a path: its token endpoint URL must be given', () => {
    const options = { store: new MemoryAccountStore(), signingKeys: [{ alg: 'HS256' as const, key: TEST_HS256_KEY }], acceptTokenEndpointAudience: true };
    expect(() => createServiceAccounts({ ...options, issuer: 'https://api.test/tenant-a' })).toThrow(/acceptTokenEndpointAudience.*must be the token endpoint URL itself/);
    expect(() => createServiceAccounts({ ...options, issuer: 'https://api.test/tenant-a', acceptTokenEndpointAudience: 'https://api.test/tenant-a/oauth/token' })).not.toThrow();
  });

  it('a URL: accepts exactly that URL (behind a proxy that changes the path), not the derived one', async () => {
    const t = await setUp({ acceptTokenEndpointAudience: 'https://gateway.test/identity/oauth/token' });
    await t.post(assertionFields(await t.assertion({ claims: { aud: 'https://gateway.test/identity/oauth/token' } }))).expect(200);
    await expectReason(t, await t.post(assertionFields(await t.assertion({ claims: { aud: TOKEN_ENDPOINT } }))), 'wrong_audience');
  });

  it('refuses a value that is neither a boolean nor an absolute http(s) URL, at start-up', () => {
    for (const value of ['oauth/token', 'ftp://api.test/oauth/token', 'https://api.test/oauth/token?x=1', 1]) {
      expect(() => createTestApp({ acceptTokenEndpointAudience: value as never })).toThrow(/option "acceptTokenEndpointAudience"/);
    }
  });
});
