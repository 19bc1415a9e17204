/**
 * Federated credentials at the token endpoint (docs/federated-credentials.md): an outside issuer's
 * token, sent as `client_assertion` (RFC 7523 §2.2), authenticates the account holding a live
 * federated credential for exactly its issuer and subject. The issuer is a real OpenID Connect issuer
 * on loopback (test/helpers/local-oidc-issuer.ts) that signs Kubernetes- and GitHub-Actions-shaped
 * tokens. One test per rule, quoting it.
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { generateKeyPair, SignJWT } from 'jose';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdminApi, MemoryAccountStore, type AuditEvent, type OperationalEvent } from '../../src/index.js';
import { JWT_BEARER_ASSERTION_TYPE } from '../../src/client-auth/presented-credentials.js';
import { createTestApp, TEST_ISSUER, type TestAppOptions } from '../helpers/create-app.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';
import { ForwardingStore } from '../helpers/forwarding-store.js';
import { startLocalIssuer, type LocalIssuer } from '../helpers/local-oidc-issuer.js';

/** The audit hook runs off the request path (setImmediate): let it run. */
const flushAudit = () => new Promise<void>((resolve) => setImmediate(resolve));

const K8S_SUBJECT = 'system:serviceaccount:payments:exporter';
const GITHUB_SUBJECT = 'repo:acme/billing:ref:refs/heads/main';

const issuers: LocalIssuer[] = [];
afterEach(async () => {
  await Promise.all(issuers.splice(0).map((idp) => idp.close()));
});

async function localIssuer(...args: Parameters<typeof startLocalIssuer>): Promise<LocalIssuer> {
  const idp = await startLocalIssuer(...args);
  issuers.push(idp);
  return idp;
}

async function setUp(options: TestAppOptions = {}) {
  const idp = await localIssuer();
  const operational: OperationalEvent[] = [];
  const test = createTestApp({
    // A failed fetch is answered at the fetch timeout: a short one keeps the failure tests short.
    federation: { allowHttpLoopback: true, fetchTimeout: 1000, ...options.federation },
    onEvent: (event) => void operational.push(event),
    ...options,
  });
  const account = await test.sa.admin.createAccount({ name: 'payments-exporter' });
  const credential = await test.sa.admin.addFederatedCredential(account.clientId, { issuer: idp.issuer, subject: K8S_SUBJECT });
  const kubernetesToken = (opts: Partial<Parameters<LocalIssuer['kubernetesToken']>[0]> = {}) =>
    idp.kubernetesToken({ audience: TEST_ISSUER, now: test.clock.now(), subject: K8S_SUBJECT, ...opts });
  const post = (assertion: string, extra: Record<string, string> = {}) =>
    request(test.app)
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: assertion, ...extra });
  const failures = () => test.events.filter((e): e is Extract<AuditEvent, { type: 'client.authentication_failed' }> => e.type === 'client.authentication_failed');
  const nowSeconds = () => Math.floor(test.clock.now().getTime() / 1000);
  return { ...test, idp, account, credential, kubernetesToken, post, failures, operational, nowSeconds };
}
type Setup = Awaited<ReturnType<typeof setUp>>;

/** Every refused outside token gets the answer of every refused client (RFC 6749 §5.2 "invalid_client"); the audit tells why. */
async function expectRefused(t: Setup, res: request.Response, reason: string): Promise<void> {
  expectOAuthError(res, 401, 'invalid_client');
  await flushAudit();
  expect(t.failures().at(-1)?.reason).toBe(reason);
}

describe('federated credentials at the token endpoint', () => {
  // "a workload obtains our access token with the token its platform already mounted"
  it('issues a token for a Kubernetes service-account token of the trusted issuer and subject', async () => {
    const t = await setUp();
    const res = await t.post(await t.kubernetesToken()).expect(200);
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600 });
    // The token names the federated credential it was issued through, as a secret's token names the secret.
    const whoami = await request(t.app).get('/api/whoami').set('authorization', `Bearer ${res.body.access_token}`).expect(200);
    expect(whoami.body).toMatchObject({ clientId: t.account.clientId, secretId: t.credential.id });
  });

  it('issues a token for a GitHub Actions OIDC token of the trusted repository and ref', async () => {
    const t = await setUp();
    await t.sa.admin.addFederatedCredential(t.account.clientId, { issuer: t.idp.issuer, subject: GITHUB_SUBJECT });
    await t.post(await t.idp.githubActionsToken({ audience: TEST_ISSUER, now: t.clock.now() })).expect(200);
  });

  it('records the last use of the credential', async () => {
    const t = await setUp();
    await t.post(await t.kubernetesToken()).expect(200);
    await flushAudit();
    const [summary] = await t.sa.admin.listAccounts();
    expect(summary?.federated?.[0]).toMatchObject({ id: t.credential.id, lastUsedAt: t.clock.now() });
  });

  // "The account is found by (issuer, subject), or by client_id when given, which must then match."
  it('accepts client_id when it names the account holding the credential, and refuses another account', async () => {
    const t = await setUp();
    await t.post(await t.kubernetesToken(), { client_id: t.account.clientId }).expect(200);
    const other = await t.sa.admin.createAccount({ name: 'other' });
    await expectRefused(t, await t.post(await t.kubernetesToken(), { client_id: other.clientId }), 'untrusted_token');
  });

  it('refuses a subject several accounts trust unless client_id chooses one', async () => {
    const t = await setUp();
    const second = await t.sa.admin.createAccount({ name: 'second' });
    await t.sa.admin.addFederatedCredential(second.clientId, { issuer: t.idp.issuer, subject: K8S_SUBJECT });
    await expectRefused(t, await t.post(await t.kubernetesToken()), 'ambiguous_token');
    const res = await t.post(await t.kubernetesToken(), { client_id: second.clientId }).expect(200);
    const whoami = await request(t.app).get('/api/whoami').set('authorization', `Bearer ${res.body.access_token}`).expect(200);
    expect(whoami.body.clientId).toBe(second.clientId);
  });

  // AccountStore.findFederatedClients: "a credential past its expiresAt at now is left out like a
  // revoked one". A workload moved to another account by letting its old credential expire (instead of
  // revoking it) is served by the new account, not refused as ambiguous.
  it('a credential past its expiry does not make its subject ambiguous', async () => {
    const t = await setUp();
    const subject = 'system:serviceaccount:payments:moved';
    const before = await t.sa.admin.createAccount({ name: 'before' });
    await t.sa.admin.addFederatedCredential(before.clientId, { issuer: t.idp.issuer, subject, expiresIn: '60s' });
    const after = await t.sa.admin.createAccount({ name: 'after' });
    await t.sa.admin.addFederatedCredential(after.clientId, { issuer: t.idp.issuer, subject });
    t.clock.advance(61);
    const res = await t.post(await t.kubernetesToken({ subject })).expect(200);
    const whoami = await request(t.app).get('/api/whoami').set('authorization', `Bearer ${res.body.access_token}`).expect(200);
    expect(whoami.body.clientId).toBe(after.clientId);
  });

  // Same rule, when the pair was refused as ambiguous while both credentials were live: the refusal is
  // not remembered past the old credential's expiry.
  it('a subject refused as ambiguous is served once the other credential has expired', async () => {
    const t = await setUp();
    const subject = 'system:serviceaccount:payments:moving';
    const before = await t.sa.admin.createAccount({ name: 'before' });
    await t.sa.admin.addFederatedCredential(before.clientId, { issuer: t.idp.issuer, subject, expiresIn: '60s' });
    const after = await t.sa.admin.createAccount({ name: 'after' });
    await t.sa.admin.addFederatedCredential(after.clientId, { issuer: t.idp.issuer, subject });
    await expectRefused(t, await t.post(await t.kubernetesToken({ subject })), 'ambiguous_token');
    t.clock.advance(61);
    const res = await t.post(await t.kubernetesToken({ subject })).expect(200);
    const whoami = await request(t.app).get('/api/whoami').set('authorization', `Bearer ${res.body.access_token}`).expect(200);
    expect(whoami.body.clientId).toBe(after.clientId);
  });

  // "an attacker-chosen iss never causes a request"
  it('refuses a token of an issuer no credential trusts without a single request to that issuer', async () => {
    const t = await setUp();
    const stranger = await localIssuer();
    await expectRefused(t, await t.post(await stranger.kubernetesToken({ audience: TEST_ISSUER, now: t.clock.now(), subject: K8S_SUBJECT })), 'untrusted_token');
    expect(stranger.requests).toHaveLength(0);
    expect(t.idp.requests).toHaveLength(0);
  });

  it('refuses a token of a trusted issuer for a subject no credential trusts, without fetching keys', async () => {
    const t = await setUp();
    for (const subject of ['system:serviceaccount:payments:default', 'system:serviceaccount:payments:exporte', 'SYSTEM:SERVICEACCOUNT:PAYMENTS:EXPORTER', 'system:serviceaccount:payments:*']) {
      await expectRefused(t, await t.post(await t.kubernetesToken({ subject })), 'untrusted_token');
    }
    expect(t.idp.requests).toHaveLength(0);
  });

  // "the audience the outside token must carry (default: our issuer identifier)"
  it("refuses a token for another audience, such as the platform's own default", async () => {
    const t = await setUp();
    await expectRefused(t, await t.post(await t.kubernetesToken({ audience: 'https://kubernetes.default.svc' })), 'wrong_audience');
    // Sent without client_id, the failure is audited under the account the token was found to name.
    expect(t.failures().at(-1)).toMatchObject({ clientId: t.account.clientId, name: 'payments-exporter' });
    await t.post(await t.kubernetesToken({ audience: [TEST_ISSUER] })).expect(200);
  });

  // A token made out to other parties as well could be replayed here by any of them: the credential's
  // audience must be the token's only one (as for key-pair assertions).
  it('refuses a token whose audiences include others beside ours', async () => {
    const t = await setUp();
    await expectRefused(t, await t.post(await t.kubernetesToken({ audience: ['https://vault.example.com', TEST_ISSUER] })), 'wrong_audience');
  });

  it('checks the audience the credential names when it names one', async () => {
    const t = await setUp();
    const account = await t.sa.admin.createAccount({ name: 'ci' });
    await t.sa.admin.addFederatedCredential(account.clientId, { issuer: t.idp.issuer, subject: GITHUB_SUBJECT, audience: 'api://billing' });
    await t.post(await t.idp.githubActionsToken({ audience: 'api://billing', now: t.clock.now() })).expect(200);
    await expectRefused(t, await t.post(await t.idp.githubActionsToken({ audience: TEST_ISSUER, now: t.clock.now() })), 'wrong_audience');
  });

  // "iss, sub, aud, exp, nbf, iat checked"
  it('refuses an expired token, one not yet valid, and one issued in the future (beyond the clock tolerance)', async () => {
    const t = await setUp();
    const now = t.nowSeconds();
    const claims = { iss: t.idp.issuer, sub: K8S_SUBJECT, aud: TEST_ISSUER };
    await expectRefused(t, await t.post(await t.idp.sign({ ...claims, iat: now - 600, exp: now - 10 })), 'expired_assertion');
    await expectRefused(t, await t.post(await t.idp.sign({ ...claims, iat: now, nbf: now + 60, exp: now + 600 })), 'assertion_not_yet_valid');
    await expectRefused(t, await t.post(await t.idp.sign({ ...claims, iat: now + 60, exp: now + 600 })), 'assertion_not_yet_valid');
    await expectRefused(t, await t.post(await t.idp.sign({ ...claims, iat: now })), 'invalid_assertion'); // no exp at all
    await t.post(await t.idp.sign({ ...claims, iat: now - 3, nbf: now + 3, exp: now + 600 })).expect(200); // within the tolerance
  });

  // "a maximum accepted remaining lifetime (configurable; Kubernetes tokens live up to an hour)"
  it('refuses a token with more than maxTokenLifetime left (3600 s by default), and honours the option', async () => {
    const t = await setUp();
    await t.post(await t.kubernetesToken({ lifetime: 3600 })).expect(200);
    await expectRefused(t, await t.post(await t.kubernetesToken({ lifetime: 7200 })), 'assertion_lifetime_too_long');
    const short = await setUp({ federation: { allowHttpLoopback: true, maxTokenLifetime: 600 } });
    await short.post(await short.kubernetesToken({ lifetime: 600 })).expect(200);
    await expectRefused(short, await short.post(await short.kubernetesToken({ lifetime: 900 })), 'assertion_lifetime_too_long');
  });

  // "jti single-use when present"
  it('refuses a token whose jti was already used, and accepts a token without jti again', async () => {
    const t = await setUp();
    const token = await t.kubernetesToken();
    await t.post(token).expect(200);
    await expectRefused(t, await t.post(token), 'replayed_assertion');
    const now = t.nowSeconds();
    const withoutJti = await t.idp.sign({ iss: t.idp.issuer, sub: K8S_SUBJECT, aud: TEST_ISSUER, iat: now, exp: now + 600 });
    await t.post(withoutJti).expect(200);
    await t.post(withoutJti).expect(200);
  });

  it('refuses a token signed by a key the issuer does not publish, even under a published kid', async () => {
    const t = await setUp();
    const impostor = await localIssuer();
    const now = t.nowSeconds();
    const forged = await impostor.sign({ iss: t.idp.issuer, sub: K8S_SUBJECT, aud: TEST_ISSUER, iat: now, exp: now + 600, jti: 'forged' }, { header: { kid: t.idp.currentKid } });
    await expectRefused(t, await t.post(forged), 'invalid_assertion');
  });

  it('refuses unsigned and HMAC-signed tokens', async () => {
    const t = await setUp();
    const now = t.nowSeconds();
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const payload = encode({ iss: t.idp.issuer, sub: K8S_SUBJECT, aud: TEST_ISSUER, iat: now, exp: now + 600 });
    await expectRefused(t, await t.post(`${encode({ alg: 'none' })}.${payload}.`), 'invalid_assertion');
    const { createHmac } = await import('node:crypto');
    const header = encode({ alg: 'HS256', kid: t.idp.currentKid });
    const mac = createHmac('sha256', JSON.stringify(t.idp.jwks())).update(`${header}.${payload}`).digest('base64url');
    await expectRefused(t, await t.post(`${header}.${payload}.${mac}`), 'invalid_assertion');
  });

  // "Revoking a federated credential or disabling the account refuses every token issued through it"
  it('refuses, once the credential is revoked, both the outside token and the access tokens issued through it', async () => {
    const t = await setUp();
    const access = (await t.post(await t.kubernetesToken()).expect(200)).body.access_token as string;
    expect(await t.sa.admin.revokeFederatedCredential(t.account.clientId, t.credential.id)).toEqual({
      clientId: t.account.clientId,
      credentialId: t.credential.id,
      revokedAt: t.clock.now(),
    });
    const res = await request(t.app).get('/api/whoami').set('authorization', `Bearer ${access}`);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    // Without client_id, no live credential trusts the token any more; with it, the audit says why.
    await expectRefused(t, await t.post(await t.kubernetesToken()), 'untrusted_token');
    await expectRefused(t, await t.post(await t.kubernetesToken(), { client_id: t.account.clientId }), 'revoked_federated_credential');
  });

  it('refuses a disabled account and its tokens', async () => {
    const t = await setUp();
    const access = (await t.post(await t.kubernetesToken()).expect(200)).body.access_token as string;
    await t.sa.admin.disableAccount(t.account.clientId);
    expect((await request(t.app).get('/api/whoami').set('authorization', `Bearer ${access}`)).status).toBe(401);
    await expectRefused(t, await t.post(await t.kubernetesToken()), 'disabled_account');
  });

  // "Failures are 401 invalid_client like every other method, counted by the limiter"
  it('counts refused outside tokens against the failure limit', async () => {
    const t = await setUp({ failureLimit: { max: 3, windowSeconds: 60 } });
    const wrongAudience = () => t.kubernetesToken({ audience: 'https://kubernetes.default.svc' });
    for (let i = 0; i < 3; i++) expectOAuthError(await t.post(await wrongAudience()), 401, 'invalid_client');
    const limited = await t.post(await t.kubernetesToken());
    expect(limited.status).toBe(429);
  });

  it('refuses outside tokens, with no request to the issuer, when the store holds no federated credentials', async () => {
    const idp = await localIssuer();
    const inner = new MemoryAccountStore();
    const provisioning = createAdminApi({ store: inner });
    const account = await provisioning.createAccount({ name: 'exporter' });
    await provisioning.addFederatedCredential(account.clientId, { issuer: idp.issuer, subject: K8S_SUBJECT, audience: TEST_ISSUER });
    // A store written for an earlier version: none of the federated methods.
    const t = createTestApp({ store: new ForwardingStore(inner), federation: { allowHttpLoopback: true } });
    const res = await request(t.app)
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: await idp.kubernetesToken({ audience: TEST_ISSUER, now: t.clock.now() }) });
    expectOAuthError(res, 401, 'invalid_client');
    expect(idp.requests).toHaveLength(0);
  });

  // "an issuer's keys found through OIDC discovery or a JWK Set URL or inline JWK Set configured for that issuer"
  it("uses the credential's JWK Set URL instead of discovery", async () => {
    const t = await setUp();
    const account = await t.sa.admin.createAccount({ name: 'by-jwks-uri' });
    await t.sa.admin.addFederatedCredential(account.clientId, { issuer: t.idp.issuer, subject: GITHUB_SUBJECT, jwksUri: t.idp.jwksUri });
    await t.post(await t.idp.githubActionsToken({ audience: TEST_ISSUER, now: t.clock.now() })).expect(200);
    expect(t.idp.fetches('discovery')).toBe(0);
  });

  it("verifies with another credential's keys when one credential's key URL cannot be reached", async () => {
    const t = await setUp();
    const account = await t.sa.admin.createAccount({ name: 'two-sources' });
    // Oldest first: a credential whose key URL is down, then one found through discovery.
    await t.sa.admin.addFederatedCredential(account.clientId, { issuer: t.idp.issuer, subject: GITHUB_SUBJECT, audience: TEST_ISSUER, jwksUri: 'http://127.0.0.1:9/jwks' });
    await t.sa.admin.addFederatedCredential(account.clientId, { issuer: t.idp.issuer, subject: GITHUB_SUBJECT });
    await t.post(await t.idp.githubActionsToken({ audience: TEST_ISSUER, now: t.clock.now() })).expect(200);
  });

  // federation.allowedIssuers: "no key is ever fetched for any other, whatever the store holds".
  it('neither registers nor fetches keys for an issuer outside federation.allowedIssuers', async () => {
    const idp = await localIssuer();
    const allowed = await localIssuer();
    const store = new MemoryAccountStore();
    const t = createTestApp({ store, failureLimit: false, federation: { allowHttpLoopback: true, allowedIssuers: [allowed.issuer] } });
    const account = await t.sa.admin.createAccount({ name: 'outside-the-list' });
    await expect(t.sa.admin.addFederatedCredential(account.clientId, { issuer: idp.issuer, subject: K8S_SUBJECT })).rejects.toMatchObject({ code: 'invalid_input' });
    await t.sa.admin.addFederatedCredential(account.clientId, { issuer: allowed.issuer, subject: GITHUB_SUBJECT });
    // Registered behind the server's back (another admin tool, an older list): still never fetched.
    await createAdminApi({ store }).addFederatedCredential(account.clientId, { issuer: idp.issuer, subject: K8S_SUBJECT, audience: TEST_ISSUER });
    const exchange = async (token: string) =>
      request(t.app).post('/oauth/token').type('form').send({ grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: token });
    expectOAuthError(await exchange(await idp.kubernetesToken({ audience: TEST_ISSUER, now: t.clock.now() })), 401, 'invalid_client');
    expect(idp.requests).toHaveLength(0);
    expect((await exchange(await allowed.githubActionsToken({ audience: TEST_ISSUER, now: t.clock.now() }))).status).toBe(200);
  });

  // With allowedIssuers, the operator alone chooses the addresses fetched: a credential's own JWK Set
  // URL is refused at registration, and ignored when the store holds one anyway.
  it("with federation.allowedIssuers, neither accepts nor uses a credential's own JWK Set URL", async () => {
    const allowed = await localIssuer();
    const elsewhere = await localIssuer(); // only its URL matters: it must never be asked
    const store = new MemoryAccountStore();
    const t = createTestApp({ store, failureLimit: false, federation: { allowHttpLoopback: true, allowedIssuers: [allowed.issuer] } });
    const account = await t.sa.admin.createAccount({ name: 'pinned' });
    await expect(
      t.sa.admin.addFederatedCredential(account.clientId, { issuer: allowed.issuer, subject: GITHUB_SUBJECT, jwksUri: elsewhere.jwksUri }),
    ).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/^jwksUri is not accepted on this server/) });
    await createAdminApi({ store }).addFederatedCredential(account.clientId, { issuer: allowed.issuer, subject: GITHUB_SUBJECT, audience: TEST_ISSUER, jwksUri: elsewhere.jwksUri });
    const res = await request(t.app)
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: await allowed.githubActionsToken({ audience: TEST_ISSUER, now: t.clock.now() }) });
    expect(res.status).toBe(200); // verified with the allowed issuer's own keys, found through its discovery document
    expect(elsewhere.requests).toHaveLength(0);
    expect(allowed.fetches('discovery')).toBe(1);
  });

  it('uses an inline JWK Set configured for the issuer, with no request at all', async () => {
    const idp = await localIssuer();
    const t = await setUp({ federation: { allowHttpLoopback: true, issuers: { [idp.issuer]: { jwks: idp.jwks() } } } });
    const account = await t.sa.admin.createAccount({ name: 'inline' });
    await t.sa.admin.addFederatedCredential(account.clientId, { issuer: idp.issuer, subject: K8S_SUBJECT });
    await t.post(await idp.kubernetesToken({ audience: TEST_ISSUER, now: t.clock.now() })).expect(200);
    expect(idp.requests).toHaveLength(0);
  });
});

describe('federated credentials: the issuer and its keys', () => {
  // "tests cover issuer key rotation"
  it('follows a key rotation of the issuer with one new fetch', async () => {
    const t = await setUp();
    await t.post(await t.kubernetesToken()).expect(200);
    const before = t.idp.fetches('jwks');
    t.clock.advance(30); // an unknown key is looked for at most once per refreshInterval (30 s)
    await t.idp.rotateKeys();
    await t.post(await t.kubernetesToken()).expect(200);
    expect(t.idp.fetches('jwks')).toBe(before + 1);
  });

  // "An issuer that cannot be reached while its cached keys still verify the token is no outage"
  it('keeps issuing tokens while the issuer is down and its cached keys verify', async () => {
    const t = await setUp();
    await t.post(await t.kubernetesToken()).expect(200);
    await t.idp.setMode('down');
    t.clock.advance(4000); // well past the cache lifetime: a refresh is due and fails
    await t.post(await t.kubernetesToken()).expect(200);
    await t.post(await t.kubernetesToken()).expect(200);
  });

  // "an issuer that cannot be reached when keys are needed is a 503 temporarily_unavailable with Retry-After, an onEvent report and a metric"
  it('answers 503 with Retry-After and reports the issuer once when its keys are needed and it is down', async () => {
    const t = await setUp();
    await t.idp.setMode('down');
    for (let i = 0; i < 3; i++) {
      const res = await t.post(await t.kubernetesToken());
      expectOAuthError(res, 503, 'temporarily_unavailable');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    await new Promise((resolve) => setImmediate(resolve));
    const reports = t.operational.filter((e) => e.type === 'federation.issuer_unavailable');
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ issuer: t.idp.issuer });
    await t.idp.setMode('normal');
    t.clock.advance(60); // past the refresh interval
    await t.post(await t.kubernetesToken()).expect(200);
    await new Promise((resolve) => setImmediate(resolve));
    expect(t.operational.filter((e) => e.type === 'federation.issuer_recovered')).toHaveLength(1);
  });

  it('answers 503 within the fetch timeout when the issuer hangs', async () => {
    const t = await setUp({ federation: { allowHttpLoopback: true, fetchTimeout: 300 } });
    await t.idp.setMode('hang');
    const started = Date.now();
    expectOAuthError(await t.post(await t.kubernetesToken()), 503, 'temporarily_unavailable');
    expect(Date.now() - started).toBeLessThan(5000); // cut at the timeout, not left hanging
  });

  it.each([
    ['garbage', 'garbage' as const],
    ['a huge body', { huge: 5 }],
    ['a redirect to another host', { redirect: 'http://localhost:9/jwks' }],
  ])('answers 503 when the issuer answers %s, and never crashes', async (_name, mode) => {
    const t = await setUp();
    await t.idp.setMode(mode);
    expectOAuthError(await t.post(await t.kubernetesToken()), 503, 'temporarily_unavailable');
  });

  it('verifies a token when the issuer serves its kid twice', async () => {
    const t = await setUp();
    await t.idp.setMode('duplicateKid');
    await t.post(await t.kubernetesToken()).expect(200);
  });

  // Bounded work per token: "try at most a small number of candidate keys per token, and refuse a
  // kid-less token when more than that match its algorithm" (docs/federated-credentials.md).
  it('refuses a token without kid when the issuer publishes more than 3 keys of its algorithm, and accepts it with its kid', async () => {
    const t = await setUp();
    for (let i = 0; i < 3; i++) await t.idp.rotateKeys({ keepOld: true });
    await expectRefused(t, await t.post(await t.kubernetesToken({ withoutKid: true })), 'invalid_assertion');
    await t.post(await t.kubernetesToken()).expect(200);
  });

  it('accepts a token without kid while the issuer publishes at most 3 keys of its algorithm', async () => {
    const t = await setUp();
    for (let i = 0; i < 2; i++) await t.idp.rotateKeys({ keepOld: true });
    await t.post(await t.kubernetesToken({ withoutKid: true })).expect(200);
  });

  // "a kid-less token that no cached key verifies may trigger the one refetch per refreshInterval
  // that an unknown kid already gets".
  it('follows a key rotation for tokens without kid too, with one new fetch per refresh interval', async () => {
    const t = await setUp();
    await t.post(await t.kubernetesToken({ withoutKid: true })).expect(200);
    const before = t.idp.fetches('jwks');
    await t.idp.rotateKeys();
    // Within the refresh interval of the last fetch: refused, nothing fetched.
    await expectRefused(t, await t.post(await t.kubernetesToken({ withoutKid: true })), 'invalid_assertion');
    expect(t.idp.fetches('jwks')).toBe(before);
    t.clock.advance(30);
    await t.post(await t.kubernetesToken({ withoutKid: true })).expect(200);
    expect(t.idp.fetches('jwks')).toBe(before + 1);
  });

  // "cap the keys accepted in a fetched or inline key set (and say the cap)": 100 keys.
  it('answers 503 and reports the issuer when its JWK Set holds more than 100 keys, whatever the token', async () => {
    const t = await setUp();
    const [real] = t.idp.jwks().keys;
    const keys = Array.from({ length: 300 }, (_, i) => ({ ...real, kid: `${real!.kid}-${i}` }));
    await t.idp.setMode({ body: JSON.stringify({ keys: [real, ...keys] }) }, 'jwks');
    expectOAuthError(await t.post(await t.kubernetesToken()), 503, 'temporarily_unavailable');
    await new Promise((resolve) => setImmediate(resolve));
    const reports = t.operational.filter((e) => e.type === 'federation.issuer_unavailable');
    expect(reports).toHaveLength(1);
    expect(JSON.stringify(reports[0])).toContain('holds 301 keys, more than the 100 a JWK Set may hold');
  });

  // "over https (plain http only for loopback issuers when explicitly allowed)": without the
  // permission, no request is made and the token cannot be verified (a retry would not help: 401).
  it('refuses to fetch keys over plain http unless loopback http is allowed', async () => {
    const t = await setUp({ federation: { allowHttpLoopback: false } });
    await expectRefused(t, await t.post(await t.kubernetesToken()), 'invalid_assertion');
    expect(t.idp.requests).toHaveLength(0);
  });

  // docs/security.md, "Fetching outside issuers' documents": an issuer on a loopback, private or
  // link-local address is never fetched unless allowed (no connection is made), and a client cannot
  // tell such a refusal from an issuer that is down: the same 503, the same Retry-After.
  it('never connects to an issuer on a loopback, private or link-local address, and answers as for a closed port', async () => {
    let accepted = 0;
    const listener = createServer((socket: Socket) => {
      accepted += 1;
      socket.destroy();
    });
    await new Promise<void>((done) => listener.listen(0, '127.0.0.1', done));
    const closedPort = await new Promise<number>((done) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => done(port));
      });
    });
    try {
      const { privateKey } = await generateKeyPair('ES256');
      const answer = async (t: ReturnType<typeof createTestApp>, issuer: string) => {
        const account = await t.sa.admin.createAccount({ name: 'outside' });
        await t.sa.admin.addFederatedCredential(account.clientId, { issuer, subject: K8S_SUBJECT });
        const now = Math.floor(t.clock.now().getTime() / 1000);
        const token = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(issuer).setSubject(K8S_SUBJECT).setAudience(TEST_ISSUER).setIssuedAt(now).setExpirationTime(now + 600).sign(privateKey);
        const res = await request(t.app).post('/oauth/token').type('form').send({ grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: token });
        return { status: res.status, body: res.body as unknown, retryAfter: res.headers['retry-after'], challenge: res.headers['www-authenticate'] };
      };
      const events: OperationalEvent[] = [];
      const refusing = createTestApp({ failureLimit: false, federation: { fetchTimeout: 300 }, onEvent: (event) => void events.push(event) });
      const refused = [
        await answer(refusing, `https://127.0.0.1:${(listener.address() as AddressInfo).port}`),
        await answer(refusing, `https://localhost:${(listener.address() as AddressInfo).port}`),
        await answer(refusing, 'https://10.1.2.3'),
        await answer(refusing, 'https://169.254.169.254'),
        await answer(refusing, 'https://[fd12::1]'),
      ];
      // The closed port: loopback allowed, nothing listening.
      const closed = await answer(createTestApp({ failureLimit: false, federation: { allowHttpLoopback: true, fetchTimeout: 300 } }), `http://127.0.0.1:${closedPort}`);
      expect(closed).toMatchObject({ status: 503, body: { error: 'temporarily_unavailable' } });
      for (const one of refused) expect(one).toEqual(closed);
      expect(accepted).toBe(0);
      // The operator's log says why.
      await new Promise((resolve) => setImmediate(resolve));
      const reasons = events.flatMap((e) => (e.type === 'federation.issuer_unavailable' ? [String(e.error)] : []));
      expect(reasons).toHaveLength(5);
      for (const reason of reasons) expect(reason).toMatch(/could not be fetched: \S+ is a (loopback|private network|link-local or reserved) address/);
    } finally {
      await new Promise((done) => listener.close(done));
    }
  });
});
