/**
 * The token endpoint's key-pair client authentication (`private_key_jwt`, docs/private-key-jwt.md):
 * `client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer` with a JWT whose `iss`
 * and `sub` are the client ID, whose `aud` is the issuer identifier, with `exp` and a single-use `jti`,
 * signed by a live registered key. Every failure is the same 401 `invalid_client` as for secrets.
 * Assertions are made with `jose`, as a client would make them. One test per rule, quoting it.
 */
import { randomUUID } from 'node:crypto';
import { base64url, SignJWT } from 'jose';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import type { AuditEvent } from '../../src/index.js';
import { createTestApp, TEST_HS256_KEY, TEST_ISSUER } from '../helpers/create-app.js';
import { assertionFields, newKeyPair, signAssertion, signRawEs256, type AssertionOptions, type TestKeyPair } from '../helpers/client-assertions.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';
import { WatchlessStore } from '../helpers/watchless-store.js';

/** The audit hook runs off the request path (setImmediate): let it run. */
const flushAudit = () => new Promise<void>((resolve) => setImmediate(resolve));

async function setUp(alg: TestKeyPair['alg'] = 'ES256', options: Parameters<typeof createTestApp>[0] = {}) {
  const test = createTestApp(options);
  const account = await test.sa.admin.createAccount({ name: 'ci-deployer' });
  const pair = await newKeyPair(alg);
  const key = await test.sa.admin.addKey(account.clientId, pair.publicPem);
  const now = () => Math.floor(test.clock.now().getTime() / 1000);
  const assertion = (opts: AssertionOptions = {}, by: TestKeyPair = pair) => signAssertion(by, account.clientId, { now: now(), ...opts });
  const post = (fields: Record<string, string>) => request(test.app).post('/oauth/token').type('form').send(fields);
  const failures = () => test.events.filter((e): e is Extract<AuditEvent, { type: 'client.authentication_failed' }> => e.type === 'client.authentication_failed');
  return { ...test, account, pair, key, now, assertion, post, failures };
}

/** The answer to every refused assertion (RFC 7523 §3.2: "invalid_client"), and the audit reason. */
async function expectRefused(t: Awaited<ReturnType<typeof setUp>>, res: request.Response, reason: string): Promise<void> {
  expectOAuthError(res, 401, 'invalid_client');
  await flushAudit();
  expect(t.failures().at(-1)?.reason).toBe(reason);
}

describe('private_key_jwt at the token endpoint', () => {
  // RFC 7523 §2.2 and §3: a JWT signed by the client's registered key authenticates it. RFC 9864 §2:
  // `Ed25519` is the fully specified name of EdDSA with an Ed25519 key (openid-client 6 signs with it).
  it.each(['ES256', 'RS256', 'PS256', 'EdDSA', 'Ed25519'] as const)('issues a token for an assertion signed with a registered %s key', async (alg) => {
    const t = await setUp(alg);
    const res = await t.post(assertionFields(await t.assertion())).expect(200);
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600 });
    expect(res.headers['cache-control']).toBe('no-store');
    // The token names the key it was issued against, where a secret's token names the secret.
    const whoami = await request(t.app).get('/api/whoami').set('authorization', `Bearer ${res.body.access_token}`).expect(200);
    expect(whoami.body).toMatchObject({ clientId: t.account.clientId, name: 'ci-deployer', secretId: t.key.id });
  });

  // RFC 7521 §4.2: client_id MAY be sent with the assertion; it must then name the same client.
  it('accepts the client_id beside the assertion when it names the same client, and refuses another', async () => {
    const t = await setUp();
    await t.post(assertionFields(await t.assertion(), { client_id: t.account.clientId })).expect(200);
    const other = await t.sa.admin.createAccount({ name: 'other' });
    await expectRefused(t, await t.post(assertionFields(await t.assertion(), { client_id: other.clientId })), 'invalid_assertion');
  });

  // RFC 7523 §3 item 7: the jti "may be used ... to prevent the JWT from being replayed".
  it('refuses an assertion used a second time (single-use jti)', async () => {
    const t = await setUp();
    const assertion = await t.assertion();
    await t.post(assertionFields(assertion)).expect(200);
    await expectRefused(t, await t.post(assertionFields(assertion)), 'replayed_assertion');
  });

  // The jti is kept as long as the assertion could be accepted: past its exp, within the clock
  // tolerance (5 s by default), a replay is still refused.
  it('refuses a replay within the clock tolerance after the assertion expired', async () => {
    const t = await setUp();
    const assertion = await t.assertion({ claims: { exp: t.now() + 10 } });
    await t.post(assertionFields(assertion)).expect(200);
    t.clock.advance(13); // 3 s past exp: still within the tolerance, so the signature and claims pass
    await expectRefused(t, await t.post(assertionFields(assertion)), 'replayed_assertion');
  });

  // Audience update to RFC 7523 (client authentication audiences): the aud is the issuer identifier,
  // as its sole value; the token endpoint's URL is not accepted unless acceptTokenEndpointAudience is on
  // (test/http/token-endpoint-audience-assertion.test.ts).
  it.each([
    ['the token endpoint URL', `${TEST_ISSUER}/oauth/token`],
    ['another server', 'https://other.example'],
    ['a list with the issuer and another value', [TEST_ISSUER, 'https://other.example']],
  ])('refuses an assertion whose aud is %s', async (_name, aud) => {
    const t = await setUp();
    await expectRefused(t, await t.post(assertionFields(await t.assertion({ claims: { aud } }))), 'wrong_audience');
  });

  it('accepts the issuer identifier as a one-element aud list', async () => {
    const t = await setUp();
    await t.post(assertionFields(await t.assertion({ claims: { aud: [TEST_ISSUER] } }))).expect(200);
  });

  // RFC 7523 §3 items 1 and 2: iss and sub are the client ID.
  it.each([
    ['sub names another client', { sub: 'esa_000000000000000000000000' }],
    ['iss names another client', { iss: 'esa_000000000000000000000000' }],
  ])('refuses an assertion whose %s', async (_name, claims) => {
    const t = await setUp();
    const res = await t.post(assertionFields(await t.assertion({ claims })));
    expectOAuthError(res, 401, 'invalid_client');
  });

  // RFC 7523 §3 item 4: exp is required and the JWT must be rejected after it; this server also
  // refuses assertions that live longer than maxAssertionLifetime (3600 s by default). The audit
  // reason names the rule (docs/errors.md); the client is answered the same either way.
  it.each([
    ['expired', (now: number) => ({ claims: { iat: now - 120, exp: now - 60 } }), 'expired_assertion'],
    ['without exp', () => ({ omit: ['exp'] }), 'invalid_assertion'],
    ['expiring more than 3600 seconds ahead', (now: number) => ({ claims: { exp: now + 7200 } }), 'assertion_lifetime_too_long'],
    ['not valid before a time still to come (nbf)', (now: number) => ({ claims: { nbf: now + 120 } }), 'assertion_not_yet_valid'],
    ['issued in the future (iat)', (now: number) => ({ claims: { iat: now + 120 } }), 'assertion_not_yet_valid'],
    ['without jti', () => ({ omit: ['jti'] }), 'invalid_assertion'],
  ])('refuses an assertion %s', async (_name, options, reason) => {
    const t = await setUp();
    await expectRefused(t, await t.post(assertionFields(await t.assertion(options(t.now())))), reason);
  });

  // docs/private-key-jwt.md: "`exp` at most `maxAssertionLifetime` seconds ahead (3600 by default),
  // plus `clockTolerance` (5 s) for clocks that run ahead of the server's".
  it('accepts exp up to maxAssertionLifetime plus the clock tolerance ahead, and not a second more', async () => {
    const t = await setUp();
    await t.post(assertionFields(await t.assertion({ claims: { exp: t.now() + 3605 } }))).expect(200);
    await expectRefused(t, await t.post(assertionFields(await t.assertion({ claims: { exp: t.now() + 3606 } }))), 'assertion_lifetime_too_long');
  });

  it('accepts exp up to maxAssertionLifetime ahead, and iat/nbf within the clock tolerance', async () => {
    const t = await setUp('ES256', { maxAssertionLifetime: 600 });
    await t.post(assertionFields(await t.assertion({ claims: { exp: t.now() + 600 } }))).expect(200);
    await expectRefused(t, await t.post(assertionFields(await t.assertion({ claims: { exp: t.now() + 606 } }))), 'assertion_lifetime_too_long');
    await t.post(assertionFields(await t.assertion({ claims: { iat: t.now() + 4, nbf: t.now() + 4 } }))).expect(200);
  });

  // RFC 7518 §3.6 / RFC 8725 §3.1: "none" is never accepted; an HMAC keyed with the public key is the
  // classic algorithm confusion: only the asymmetric algorithm of the registered key's type counts.
  it('refuses an unsigned assertion (alg none)', async () => {
    const t = await setUp();
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    const claims = { iss: t.account.clientId, sub: t.account.clientId, aud: TEST_ISSUER, exp: t.now() + 60, jti: randomUUID() };
    const unsigned = `${header}.${base64url.encode(JSON.stringify(claims))}.`;
    await expectRefused(t, await t.post(assertionFields(unsigned)), 'invalid_assertion');
  });

  it('refuses an assertion HMAC-signed with the public key as the shared secret', async () => {
    const t = await setUp('RS256');
    const claims = { iss: t.account.clientId, sub: t.account.clientId, aud: TEST_ISSUER, exp: t.now() + 60, jti: randomUUID(), iat: t.now() };
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(t.pair.publicPem));
    await expectRefused(t, await t.post(assertionFields(forged)), 'invalid_assertion');
  });

  it("refuses an algorithm that is not the registered key's type (an RSA key's assertion claiming ES256)", async () => {
    const t = await setUp('RS256');
    const ec = await newKeyPair('ES256');
    await expectRefused(t, await t.post(assertionFields(await t.assertion({}, ec))), 'unknown_key');
  });

  // RFC 7515 §4.1.11: a recipient must reject a JWS with a critical header parameter it does not understand.
  it('refuses an assertion with a crit header', async () => {
    const t = await setUp();
    const claims = { iss: t.account.clientId, sub: t.account.clientId, aud: TEST_ISSUER, exp: t.now() + 60, jti: randomUUID() };
    const critical = signRawEs256(t.pair, { crit: ['urn:example:policy'], 'urn:example:policy': 'strict' }, claims);
    await expectRefused(t, await t.post(assertionFields(critical)), 'invalid_assertion');
    // The same claims and key without the critical header pass: the header alone is refused.
    await t.post(assertionFields(signRawEs256(t.pair, {}, { ...claims, jti: randomUUID() }))).expect(200);
  });

  it('refuses an assertion signed by a key the account does not hold', async () => {
    const t = await setUp();
    const stranger = await newKeyPair('ES256');
    await expectRefused(t, await t.post(assertionFields(await t.assertion({}, stranger))), 'unknown_key');
  });

  it('refuses an assertion signed by a revoked key, and the tokens issued against that key', async () => {
    const t = await setUp();
    const token = (await t.post(assertionFields(await t.assertion())).expect(200)).body.access_token as string;
    await request(t.app).get('/api/whoami').set('authorization', `Bearer ${token}`).expect(200);
    await t.sa.admin.revokeKey(t.account.clientId, t.key.id);
    await expectRefused(t, await t.post(assertionFields(await t.assertion())), 'revoked_key');
    const refused = await request(t.app).get('/api/whoami').set('authorization', `Bearer ${token}`).expect(401);
    expect(refused.headers['www-authenticate']).toMatch(/error="invalid_token"/);
  });

  // Bounded work per assertion (docs/private-key-jwt.md): at most 3 keys are tried on one assertion;
  // one without kid is refused untried when the account holds more live keys of its type.
  it('refuses an assertion without kid when the account holds more than 3 live keys of its type; its kid picks the key', async () => {
    const t = await setUp();
    const others = [];
    for (let i = 0; i < 3; i++) others.push(await t.sa.admin.addKey(t.account.clientId, (await newKeyPair('ES256')).publicPem));
    await expectRefused(t, await t.post(assertionFields(await t.assertion())), 'invalid_assertion');
    await t.post(assertionFields(await t.assertion({ header: { kid: t.key.id } }))).expect(200);
    // Keys of another type do not count: an RSA key's assertion has one candidate.
    const rsa = await newKeyPair('RS256');
    await t.sa.admin.revokeKey(t.account.clientId, others[0]!.id);
    await t.sa.admin.addKey(t.account.clientId, rsa.publicPem);
    await t.post(assertionFields(await t.assertion({}, rsa))).expect(200);
    // Three live keys of the type again: tried without kid.
    await t.post(assertionFields(await t.assertion())).expect(200);
  });

  it('uses the key the kid names, by key ID or by thumbprint', async () => {
    const t = await setUp();
    await t.post(assertionFields(await t.assertion({ header: { kid: t.key.id } }))).expect(200);
    await t.post(assertionFields(await t.assertion({ header: { kid: t.key.thumbprint } }))).expect(200);
    await t.post(assertionFields(await t.assertion({ header: { kid: 'a-kid-of-the-client' } }))).expect(200);
  });

  // SPEC: a disabled account fails with invalid_client, whatever the credential.
  it('refuses a disabled account', async () => {
    const t = await setUp();
    await t.sa.admin.disableAccount(t.account.clientId);
    await expectRefused(t, await t.post(assertionFields(await t.assertion())), 'disabled_account');
  });

  it('refuses an assertion naming an unknown client, and one that is not a JWT', async () => {
    const t = await setUp();
    const unknown = await signAssertion(t.pair, 'esa_000000000000000000000000', { now: t.now() });
    await expectRefused(t, await t.post(assertionFields(unknown)), 'unknown_client');
    await expectRefused(t, await t.post(assertionFields('not-a-jwt')), 'invalid_assertion');
  });

  // RFC 6749 §2.3: "The client MUST NOT use more than one authentication method in each request."
  it('answers 400 invalid_request to an assertion sent with a client secret or with Basic credentials', async () => {
    const t = await setUp();
    const assertion = await t.assertion();
    expectOAuthError(await t.post(assertionFields(assertion, { client_id: t.account.clientId, client_secret: t.account.secret.value })), 400, 'invalid_request');
    const basic = await request(t.app).post('/oauth/token').auth(t.account.clientId, t.account.secret.value).type('form').send(assertionFields(assertion));
    expectOAuthError(basic, 400, 'invalid_request');
  });

  // RFC 7521 §4.2: client_assertion_type and client_assertion go together; only the JWT bearer type is ours.
  it('answers 400 invalid_request to an assertion without its type, with another type, or a type without an assertion', async () => {
    const t = await setUp();
    const assertion = await t.assertion();
    expectOAuthError(await t.post({ grant_type: 'client_credentials', client_assertion: assertion }), 400, 'invalid_request');
    expectOAuthError(await t.post({ ...assertionFields(assertion), client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer' }), 400, 'invalid_request');
    const { client_assertion: _dropped, ...typeOnly } = assertionFields(assertion);
    expectOAuthError(await t.post(typeOnly), 400, 'invalid_request');
  });

  // docs/security.md: failed assertions are counted like wrong secrets.
  it('counts refused assertions in the failure limiter: past the limit, 429', async () => {
    const t = await setUp('ES256', { failureLimit: { max: 2, windowSeconds: 60 } });
    const stranger = await newKeyPair('ES256');
    for (let i = 0; i < 2; i++) expectOAuthError(await t.post(assertionFields(await t.assertion({}, stranger))), 401, 'invalid_client');
    const limited = await t.post(assertionFields(await t.assertion()));
    expectOAuthError(limited, 429, 'too_many_requests');
  });

  // CONTRACT, 429 row: "the first N failures get 401 and every attempt after them, right or wrong,
  // gets 429", also for a burst of assertions sent at once.
  it('answers a burst of refused assertions 401 up to the limit and 429 past it, and a right one 429 after them', async () => {
    const t = await setUp('ES256', { failureLimit: { max: 5, windowSeconds: 60 } });
    const stranger = await newKeyPair('ES256');
    const burst = await Promise.all(Array.from({ length: 20 }, async () => t.post(assertionFields(await t.assertion({}, stranger)))));
    const statuses = burst.map((res) => res.status).sort();
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(15).fill(429)]);
    expectOAuthError(await t.post(assertionFields(await t.assertion())), 429, 'too_many_requests');
  });

  // docs/security.md, "Concurrent attempts": assertions are not counted in advance, so a busy client's
  // successes in the last second of a window (whose counts could not be given back) never add up to 429.
  it('serves a busy key client in the last second of the limiter window without 429', async () => {
    const t = await setUp('ES256', { failureLimit: { max: 3, windowSeconds: 60 } });
    // The limiter reads Date: held still from before the window opens, so it opens at `start` exactly
    // and the requests below fall in its last second, however long each request takes.
    const start = Date.now();
    vi.useFakeTimers({ toFake: ['Date'], now: start });
    try {
      await t.post(assertionFields(await t.assertion())).expect(200); // the window starts
      vi.setSystemTime(start + 59_500);
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await t.post(assertionFields(await t.assertion()))).status);
      expect(statuses).toEqual(Array(8).fill(200));
    } finally {
      vi.useRealTimers();
    }
  });

  it('never writes the assertion into an audit event', async () => {
    const t = await setUp();
    const stranger = await newKeyPair('ES256');
    const assertion = await t.assertion({}, stranger);
    await t.post(assertionFields(assertion));
    await flushAudit();
    expect(JSON.stringify(t.events)).not.toContain(assertion.split('.')[2]);
    expect(JSON.stringify(t.events)).not.toContain(TEST_HS256_KEY);
  });

  // RFC 8414 §2: token_endpoint_auth_methods_supported and token_endpoint_auth_signing_alg_values_supported.
  it('lists private_key_jwt and its asymmetric algorithms in the authorization server metadata', async () => {
    const { sa } = createTestApp();
    const metadata = sa.authorizationServerMetadata({ tokenEndpoint: `${TEST_ISSUER}/oauth/token` });
    expect(metadata.token_endpoint_auth_methods_supported).toContain('private_key_jwt');
    expect(metadata.token_endpoint_auth_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'RS256', 'PS256', 'EdDSA', 'Ed25519']));
    expect((metadata.token_endpoint_auth_signing_alg_values_supported ?? []).some((alg) => /^HS|none/i.test(alg))).toBe(false);
  });

  // RFC 8414 §2: the metadata describes what the server supports; a store without key-pair credentials
  // refuses every assertion and keeps no deny-list, so neither private_key_jwt nor revocation is listed.
  it('lists neither private_key_jwt nor the revocation endpoint when the store supports neither', async () => {
    const { sa } = createTestApp({ store: new WatchlessStore() });
    const metadata = sa.authorizationServerMetadata({ tokenEndpoint: `${TEST_ISSUER}/oauth/token` });
    expect(metadata.token_endpoint_auth_methods_supported).toEqual(['client_secret_basic', 'client_secret_post']);
    expect(metadata).not.toHaveProperty('token_endpoint_auth_signing_alg_values_supported');
    expect(metadata).not.toHaveProperty('revocation_endpoint');
    expect(metadata.introspection_endpoint).toBe(`${TEST_ISSUER}/oauth/introspect`);
  });
});
