/**
 * Claim conditions of federated credentials (docs/federated-credentials.md#claim-conditions): a
 * credential may require other claims of the outside token to have exact values, all of which must
 * hold. The outside issuer is a real OpenID Connect issuer on loopback (test/helpers/local-oidc-issuer.ts)
 * signing GitHub-Actions- and Kubernetes-shaped tokens. One test per rule, quoting it.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdminApi, MemoryAccountStore, type AuditEvent, type FederatedCredentialInput } from '../../src/index.js';
import { JWT_BEARER_ASSERTION_TYPE } from '../../src/client-auth/presented-credentials.js';
import { createTestApp, TEST_ISSUER } from '../helpers/create-app.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';
import { startLocalIssuer, type LocalIssuer } from '../helpers/local-oidc-issuer.js';

/** The audit hook runs off the request path (setImmediate): let it run. */
const flushAudit = () => new Promise<void>((resolve) => setImmediate(resolve));

const PRODUCTION = 'repo:acme/billing:environment:production';
const DEPLOY_MAIN = 'acme/billing/.github/workflows/deploy.yml@refs/heads/main';
const K8S_SUBJECT = 'system:serviceaccount:payments:exporter';

const issuers: LocalIssuer[] = [];
afterEach(async () => {
  await Promise.all(issuers.splice(0).map((idp) => idp.close()));
});

type Failure = Extract<AuditEvent, { type: 'client.authentication_failed' }>;

async function setUp(subject: string, claims: FederatedCredentialInput['claims']) {
  const idp = await startLocalIssuer();
  issuers.push(idp);
  const debugLines: string[] = [];
  const test = createTestApp({ federation: { allowHttpLoopback: true, fetchTimeout: 1000 }, debug: (line) => debugLines.push(line) });
  const account = await test.sa.admin.createAccount({ name: 'deployer' });
  const credential = await test.sa.admin.addFederatedCredential(account.clientId, { issuer: idp.issuer, subject, claims });
  const post = (assertion: string) =>
    request(test.app)
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: assertion });
  const github = (opts: { ref?: string; environment?: string } = {}) =>
    idp.githubActionsToken({ audience: TEST_ISSUER, now: test.clock.now(), environment: 'production', ...opts });
  /** A token of `idp` for `subject` with these claims (standard ones filled in). */
  const token = (extra: Record<string, unknown>) => {
    const iat = Math.floor(test.clock.now().getTime() / 1000);
    return idp.sign({ iss: idp.issuer, sub: subject, aud: TEST_ISSUER, iat, exp: iat + 300, ...extra });
  };
  const lastFailure = async (): Promise<Failure | undefined> => {
    await flushAudit();
    return test.events.filter((e): e is Failure => e.type === 'client.authentication_failed').at(-1);
  };
  return { ...test, idp, account, credential, post, github, token, lastFailure, debugLines };
}

describe('claim conditions of federated credentials', () => {
  // "a federated credential with a condition refuses a token whose claim differs"
  it('refuses a token whose claim differs: invalid_client, audited as claim_condition_failed naming the claim but not its value', async () => {
    const t = await setUp(PRODUCTION, { repository_owner: 'acme', job_workflow_ref: DEPLOY_MAIN });
    // Same repository and environment (so the same subject), but the deploy workflow of another branch.
    const res = await t.post(await t.github({ ref: 'refs/heads/experiment' }));
    expectOAuthError(res, 401, 'invalid_client');
    const failure = await t.lastFailure();
    expect(failure).toMatchObject({ reason: 'claim_condition_failed', claim: 'job_workflow_ref', clientId: t.account.clientId });
    expect(JSON.stringify(failure)).not.toContain('experiment');
    expect(t.debugLines.at(-1)).toContain('claim_condition_failed (claim "job_workflow_ref") for client');
  });

  // "... and accepts when it matches"
  it('accepts a token whose claims all match, and the token names the credential', async () => {
    const t = await setUp(PRODUCTION, { repository_owner: 'acme', job_workflow_ref: DEPLOY_MAIN });
    const res = await t.post(await t.github()).expect(200);
    const whoami = await request(t.app).get('/api/whoami').set('authorization', `Bearer ${res.body.access_token}`).expect(200);
    expect(whoami.body).toMatchObject({ clientId: t.account.clientId, secretId: t.credential.id });
  });

  // "all of which must hold"
  it('refuses a token that meets one condition but not another', async () => {
    const t = await setUp(PRODUCTION, { repository_owner: 'acme', runner_environment: 'self-hosted' });
    expectOAuthError(await t.post(await t.github()), 401, 'invalid_client');
    expect(await t.lastFailure()).toMatchObject({ reason: 'claim_condition_failed', claim: 'runner_environment' });
  });

  // "missing claim refused"
  it('refuses a token that lacks the claim', async () => {
    const t = await setUp('repo:acme/billing:ref:refs/heads/main', { environment: 'production' });
    // A workflow job without an environment: its token has no environment claim.
    expectOAuthError(await t.post(await t.github({ environment: undefined })), 401, 'invalid_client');
    expect(await t.lastFailure()).toMatchObject({ reason: 'claim_condition_failed', claim: 'environment' });
  });

  // "nested claim": a JSON Pointer, since the claim `kubernetes.io` itself holds a dot.
  it('reads a nested claim through a JSON Pointer (/kubernetes.io/namespace), and refuses another value there', async () => {
    const t = await setUp(K8S_SUBJECT, { '/kubernetes.io/namespace': 'payments', '/kubernetes.io/node/name': 'node-a' });
    await t.post(await t.idp.kubernetesToken({ audience: TEST_ISSUER, now: t.clock.now(), subject: K8S_SUBJECT })).expect(200);
    const elsewhere = await t.token({ 'kubernetes.io': { namespace: 'payments', node: { name: 'node-b' } } });
    expectOAuthError(await t.post(elsewhere), 401, 'invalid_client');
    expect(await t.lastFailure()).toMatchObject({ reason: 'claim_condition_failed', claim: '/kubernetes.io/node/name' });
  });

  it('a dotted name is one top-level claim: kubernetes.io.namespace does not reach into the kubernetes.io object', async () => {
    const t = await setUp(K8S_SUBJECT, { 'kubernetes.io.namespace': 'payments' });
    expectOAuthError(await t.post(await t.idp.kubernetesToken({ audience: TEST_ISSUER, now: t.clock.now(), subject: K8S_SUBJECT })), 401, 'invalid_client');
    expect(await t.lastFailure()).toMatchObject({ reason: 'claim_condition_failed', claim: 'kubernetes.io.namespace' });
    await t.post(await t.token({ 'kubernetes.io.namespace': 'payments' })).expect(200);
  });

  it('compares strings exactly and booleans as true or false; a number, an array, an object or null never matches', async () => {
    const t = await setUp(K8S_SUBJECT, { verified: 'true', tier: '1' });
    expectOAuthError(await t.post(await t.token({ verified: true, tier: 1 })), 401, 'invalid_client');
    expect(await t.lastFailure()).toMatchObject({ claim: 'tier' });
    await t.post(await t.token({ verified: true, tier: '1' })).expect(200);
    await t.post(await t.token({ verified: 'true', tier: '1' })).expect(200);
    for (const tier of [['1'], { value: '1' }, null, ' 1', '01']) {
      expectOAuthError(await t.post(await t.token({ verified: true, tier })), 401, 'invalid_client');
      expect(await t.lastFailure()).toMatchObject({ reason: 'claim_condition_failed', claim: 'tier' });
    }
    expectOAuthError(await t.post(await t.token({ verified: 'True', tier: '1' })), 401, 'invalid_client');
  });

  it('is checked only on a token the issuer signed: a forged token with matching claims is invalid_assertion', async () => {
    const t = await setUp(PRODUCTION, { repository_owner: 'acme' });
    const genuine = await t.github();
    const [header, payload] = genuine.split('.');
    const forged = `${header}.${payload}.${Buffer.from('not the signature').toString('base64url')}`;
    expectOAuthError(await t.post(forged), 401, 'invalid_client');
    expect(await t.lastFailure()).toMatchObject({ reason: 'invalid_assertion' });
  });

  it('a credential without conditions still trusts every token of its issuer and subject', async () => {
    const t = await setUp(PRODUCTION, undefined);
    expect(t.credential).not.toHaveProperty('claims');
    await t.post(await t.github({ ref: 'refs/heads/experiment' })).expect(200);
  });
});

describe('claim conditions in the admin API', () => {
  const GITHUB = 'https://token.actions.githubusercontent.com';

  it('are returned by addFederatedCredential, listed, and carried by the audit events', async () => {
    const { sa, events } = createTestApp();
    const { clientId } = await sa.admin.createAccount({ name: 'deployer' });
    const claims = { repository_owner: 'acme', '/kubernetes.io/namespace': 'payments' };
    const created = await sa.admin.addFederatedCredential(clientId, { issuer: GITHUB, subject: PRODUCTION, claims });
    expect(created.claims).toEqual(claims);
    expect((await sa.admin.getAccount(clientId))?.federated?.[0]?.claims).toEqual(claims);
    await sa.admin.revokeFederatedCredential(clientId, created.id);
    await flushAudit();
    const changes = events.filter((e) => e.type === 'federated_credential.created' || e.type === 'federated_credential.revoked');
    expect(changes.map((e) => ('claims' in e ? e.claims : undefined))).toEqual([claims, claims]);
  });

  it.each<[string, unknown, RegExp]>([
    ['a pattern in a value', { environment: 'prod*' }, /patterns \(\*\) are not supported/],
    ['a claim decided by its own rule', { sub: 'x' }, /sub is checked by its own rule/],
    ['the same claim by JSON Pointer', { aud: 'x' }, /aud is checked by its own rule/],
    ['a bad JSON Pointer escape', { '/a~2b': 'x' }, /~0 .* ~1/],
    ['an empty JSON Pointer member', { '/kubernetes.io//namespace': 'x' }, /empty member name/],
    ['one claim named twice', { environment: 'a', '/environment': 'b' }, /named twice/],
    ['white space around a value', { environment: ' production' }, /compared exactly/],
    ['an empty value', { environment: '' }, /1 to 1000 bytes/],
    ['a value that is no string', { run_number: 42 }, /1 to 1000 bytes/],
    ['a control character in a name', { 'env\u001b[31m': 'x' }, /U\+001B/],
    ['a value too long', { environment: 'x'.repeat(1001) }, /1 to 1000 bytes/],
    ['a name too long', { ['n'.repeat(201)]: 'x' }, /1 to 200 bytes/],
    ['more than 16 conditions', Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`c${i}`, 'x'])), /at most 16/],
    ['a list instead of an object', ['environment=production'], /must be an object/],
  ])('refuses %s with invalid_input, storing nothing', async (_label, claims, message) => {
    const { sa } = createTestApp();
    const { clientId } = await sa.admin.createAccount({ name: 'deployer' });
    await expect(
      sa.admin.addFederatedCredential(clientId, { issuer: GITHUB, subject: PRODUCTION, claims: claims as Record<string, string> }),
    ).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringMatching(message) });
    expect((await sa.admin.getAccount(clientId))?.federated).toEqual([]);
  });

  it('accepts 16 conditions and a claim named __proto__ as a plain name', async () => {
    const { sa } = createTestApp();
    const { clientId } = await sa.admin.createAccount({ name: 'deployer' });
    const claims = Object.fromEntries([...Array.from({ length: 15 }, (_, i) => [`c${i}`, 'x']), ['__proto__', 'y']]) as Record<string, string>;
    const created = await sa.admin.addFederatedCredential(clientId, { issuer: GITHUB, subject: PRODUCTION, claims });
    expect(Object.entries(created.claims ?? {})).toEqual(Object.entries(claims));
  });

  // docs/writing-a-store.md: "without it, the admin API refuses to register conditions before anything is stored".
  it('refuses conditions before storing anything with a store that does not say keepsClaimConditions', async () => {
    class StoreWithoutClaims extends MemoryAccountStore {
      override readonly keepsClaimConditions = false;
    }
    const admin = createAdminApi({ store: new StoreWithoutClaims(), issuer: TEST_ISSUER });
    const { clientId } = await admin.createAccount({ name: 'deployer' });
    await expect(admin.addFederatedCredential(clientId, { issuer: GITHUB, subject: PRODUCTION, claims: { repository_owner: 'acme' } })).rejects.toThrow(
      /cannot hold claim conditions.*keepsClaimConditions/,
    );
    expect((await admin.getAccount(clientId))?.federated).toEqual([]);
    await admin.addFederatedCredential(clientId, { issuer: GITHUB, subject: PRODUCTION });
  });

  it('refuses conditions with a store that gives the credential back without them, and leaves no live credential behind', async () => {
    // A store written before claim conditions: it keeps every field it knows, and drops `claims`.
    class StoreBeforeClaims extends MemoryAccountStore {
      override addFederatedCredential(...[clientId, credential, options]: Parameters<MemoryAccountStore['addFederatedCredential']>) {
        const { claims: _dropped, ...known } = credential;
        return super.addFederatedCredential(clientId, known, options);
      }
    }
    const store = new StoreBeforeClaims();
    const admin = createAdminApi({ store, issuer: TEST_ISSUER });
    const { clientId } = await admin.createAccount({ name: 'deployer' });
    await expect(admin.addFederatedCredential(clientId, { issuer: GITHUB, subject: PRODUCTION, claims: { repository_owner: 'acme' } })).rejects.toThrow(
      /cannot hold claim conditions/,
    );
    const [held] = (await admin.getAccount(clientId))?.federated ?? [];
    expect(held?.revokedAt).toBeInstanceOf(Date);
    // Without conditions, the same store still works.
    await admin.addFederatedCredential(clientId, { issuer: GITHUB, subject: PRODUCTION });
  });
});
