/**
 * The admin API's federated credentials (docs/federated-credentials.md): `addFederatedCredential`
 * returns `{id, issuer, subject, audience, [jwksUri,] createdAt}`, `revokeFederatedCredential` returns
 * `{clientId, credentialId, revokedAt}`, listings show each account's federated credentials beside its
 * secrets and keys, they count against the cap on live credentials, and the refusals (a bad field, a
 * subject pattern, a duplicate, unknown IDs) have their own codes.
 */
import { describe, expect, it } from 'vitest';
import { AdminError, createAdminApi, MemoryAccountStore, type AuditEvent } from '../../src/index.js';
import { createTestApp, TEST_ISSUER } from '../helpers/create-app.js';
import { expectAdminError } from '../helpers/expect-admin-error.js';
import { ForwardingStore } from '../helpers/forwarding-store.js';

/** The audit hook runs off the request path (setImmediate): let it run. */
const flushAudit = () => new Promise<void>((resolve) => setImmediate(resolve));

const GITHUB = 'https://token.actions.githubusercontent.com';
const MAIN = 'repo:acme/billing:ref:refs/heads/main';
const CREDENTIAL_ID = /^esaf_[0-9A-Za-z]{16}$/;

describe('admin API: federated credentials', () => {
  // "audience omitted → stored as null meaning this server's issuer identifier"; shown as that identifier.
  it('addFederatedCredential returns {id, issuer, subject, audience, createdAt}, the audience defaulting to the issuer identifier; listings show it', async () => {
    const { sa, clock, store } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'billing-deployer' });
    const created = await sa.admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: MAIN });
    expect(created).toEqual({ id: expect.stringMatching(CREDENTIAL_ID), issuer: GITHUB, subject: MAIN, audience: TEST_ISSUER, createdAt: clock.now(), expiresAt: null });
    expect(Object.keys(created)).toEqual(['id', 'issuer', 'subject', 'audience', 'createdAt', 'expiresAt']);
    // The store keeps "the issuer identifier" (null), so the credential follows a change of it.
    expect((await store.findAccount(a.clientId))?.federated?.[0]?.audience).toBeNull();
    const listed = await sa.admin.getAccount(a.clientId);
    expect(listed?.federated).toEqual([
      { id: created.id, issuer: GITHUB, subject: MAIN, audience: TEST_ISSUER, createdAt: clock.now(), lastUsedAt: null, revokedAt: null, expiresAt: null },
    ]);
    expect(listed?.secrets).toHaveLength(1);
    expect(listed?.keys).toEqual([]);
    expect((await sa.admin.listAccounts()).find((x) => x.clientId === a.clientId)?.federated).toEqual(listed?.federated);
  });

  it('stores an explicit audience and a JWK Set URL as given; jwksUri appears only when set', async () => {
    const { sa } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'exporter' });
    const input = {
      issuer: 'https://oidc.prod-cluster.example.com',
      subject: 'system:serviceaccount:payments:exporter',
      audience: 'api://payments',
      jwksUri: 'https://oidc.prod-cluster.example.com/openid/v1/jwks',
    };
    const created = await sa.admin.addFederatedCredential(a.clientId, input);
    expect(created).toEqual({ id: expect.stringMatching(CREDENTIAL_ID), ...input, createdAt: expect.any(Date), expiresAt: null });
    expect(Object.keys(created)).toEqual(['id', 'issuer', 'subject', 'audience', 'jwksUri', 'createdAt', 'expiresAt']);
    const [listed] = (await sa.admin.getAccount(a.clientId))?.federated ?? [];
    expect(listed).toMatchObject(input);
    // http on a loopback host is allowed (tests, local development).
    const local = await sa.admin.addFederatedCredential(a.clientId, { issuer: 'http://127.0.0.1:8080', subject: 'local' });
    expect('jwksUri' in local).toBe(false);
  });

  // "output null only if unknown": createAdminApi without its `issuer` option does not know it.
  it('shows a default audience as null when the admin API does not know the issuer identifier, and as it when given', async () => {
    const store = new MemoryAccountStore();
    const bare = createAdminApi({ store, secretHashRounds: 4 });
    const a = await bare.createAccount({ name: 'no-issuer' });
    expect((await bare.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: MAIN })).audience).toBeNull();
    expect((await bare.getAccount(a.clientId))?.federated[0]?.audience).toBeNull();
    const knowing = createAdminApi({ store, issuer: 'https://api.example.com' });
    expect((await knowing.getAccount(a.clientId))?.federated[0]?.audience).toBe('https://api.example.com');
    expect(() => createAdminApi({ store, issuer: '' })).toThrow(TypeError);
  });

  it('revokeFederatedCredential revokes once and returns clientId, credentialId and revokedAt', async () => {
    const { sa, clock } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'billing-deployer' });
    const created = await sa.admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: MAIN });
    clock.advance(60);
    expect(await sa.admin.revokeFederatedCredential(a.clientId, created.id)).toEqual({ clientId: a.clientId, credentialId: created.id, revokedAt: clock.now() });
    const revokedAt = clock.now();
    clock.advance(60);
    // A second revocation keeps the first time.
    expect(await sa.admin.revokeFederatedCredential(a.clientId, created.id)).toEqual({ clientId: a.clientId, credentialId: created.id, revokedAt });
    expect((await sa.admin.getAccount(a.clientId))?.federated[0]?.revokedAt).toEqual(revokedAt);
  });

  // "invalid_input errors that name the field".
  it('refuses a bad issuer, subject, audience or JWK Set URL with invalid_input naming the field, storing nothing', async () => {
    const { sa } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'billing-deployer' });
    const add = (input: Record<string, unknown>) => sa.admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: MAIN, ...input } as never);
    await expectAdminError(add({ issuer: 'http://token.actions.githubusercontent.com' }), 'invalid_input', /^issuer must be an https URL/);
    await expectAdminError(add({ issuer: 'token.actions.githubusercontent.com' }), 'invalid_input', /^issuer must be an absolute URL/);
    await expectAdminError(add({ issuer: 'https://user:pass@issuer.example.com' }), 'invalid_input', /^issuer must not hold a user name/);
    await expectAdminError(add({ issuer: 'https://issuer.example.com/?tenant=1' }), 'invalid_input', /^issuer must have no query/);
    await expectAdminError(add({ issuer: undefined }), 'invalid_input', /^issuer /);
    await expectAdminError(add({ jwksUri: 'ftp://issuer.example.com/jwks' }), 'invalid_input', /^jwksUri must be an https URL/);
    await expectAdminError(add({ jwksUri: 'https://issuer.example.com/jwks#keys' }), 'invalid_input', /^jwksUri must have no fragment/);
    await expectAdminError(add({ issuer: ' https://issuer.example.com' }), 'invalid_input', /^issuer must be printable ASCII, without spaces/);
    await expectAdminError(add({ issuer: 'https://issuer.example.com/\u202Etenant' }), 'invalid_input', /^issuer must be printable ASCII/);
    await expectAdminError(add({ issuer: `https://issuer.example.com/${'x'.repeat(600)}` }), 'invalid_input', /^issuer must be a URL of at most 600 characters/);
    await expectAdminError(add({ subject: '' }), 'invalid_input', /^subject must be 1 to 1000 bytes \(UTF-8\) of printable characters/);
    await expectAdminError(add({ subject: 'x'.repeat(1001) }), 'invalid_input', /^subject must be 1 to 1000 bytes/);
    // Bytes, not characters: what a store's index entry holds.
    await expectAdminError(add({ subject: 'é'.repeat(501) }), 'invalid_input', /^subject must be 1 to 1000 bytes/);
    await expectAdminError(add({ subject: 'repo:acme/billing\u202Eniam' }), 'invalid_input', /^subject .*U\+202E/);
    await expectAdminError(add({ subject: `${MAIN} ` }), 'invalid_input', /^subject must not begin or end with white space/);
    await expectAdminError(add({ subject: 42 }), 'invalid_input', /^subject /);
    await expectAdminError(add({ audience: '' }), 'invalid_input', /^audience must be 1 to 600 bytes/);
    await expectAdminError(add({ audience: 'api\nforged' }), 'invalid_input', /^audience .*U\+000A/);
    await expectAdminError(sa.admin.addFederatedCredential(a.clientId, null as never), 'invalid_input', /issuer, subject/);
    expect((await sa.admin.getAccount(a.clientId))?.federated).toEqual([]);
  });

  // A JWK Set URL may have a query, as Azure AD B2C's does; an issuer identifier may not.
  it('accepts a JWK Set URL with a query', async () => {
    const { sa } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'billing-deployer' });
    const jwksUri = 'https://tenant.b2clogin.com/tenant.onmicrosoft.com/discovery/v2.0/keys?p=B2C_1_signin';
    const created = await sa.admin.addFederatedCredential(a.clientId, { issuer: 'https://tenant.b2clogin.com/tenant-id/v2.0/', subject: 'workload', jwksUri });
    expect((await sa.admin.getAccount(a.clientId))?.federated.find((f) => f.id === created.id)?.jwksUri).toBe(jwksUri);
  });

  // Listings and audit events show the subject, audience and claim conditions: a pasted secret would be shown to all who read them.
  it('refuses a client secret pasted into the subject, audience or a claim condition, in any case, without echoing it; a long client ID as subject is accepted', async () => {
    const { sa } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'billing-deployer' });
    const secret = a.secret.value;
    const add = (input: Record<string, unknown>) => sa.admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: MAIN, ...input } as never);
    for (const [input, field] of [
      [{ subject: secret }, 'subject'],
      [{ subject: `repo:acme/${secret.toUpperCase()}` }, 'subject'],
      [{ audience: `api://${secret.slice(0, 30)}` }, 'audience'],
      [{ claims: { repository_owner: secret } }, 'claims'],
    ] as const) {
      const err = await expectAdminError(add(input), 'invalid_input', new RegExp(`^${field} must not contain a client secret \\(esas_\\.\\.\\.\\)`));
      expect(err.message).not.toContain(secret.slice(5, 21));
    }
    expect((await sa.admin.getAccount(a.clientId))?.federated).toEqual([]);
    // A subject that is a 32-character client ID of another system is a real subject.
    await expect(add({ subject: 'f'.repeat(8) + '0123456789abcdef0123456789abcdef' })).resolves.toMatchObject({ subject: 'ffffffff0123456789abcdef0123456789abcdef' });
  });

  // Subject patterns are not supported: exact subjects only, and the message says why.
  it('refuses a subject pattern (*) with a message that says patterns are not supported and why', async () => {
    const { sa } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'billing-deployer' });
    const err = await expectAdminError(
      sa.admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: 'repo:acme/billing:*' }),
      'invalid_input',
      /^subject must be one exact subject: patterns \(\*\) are not supported/,
    );
    expect(err.message).toMatch(/every workload it matches/);
    expect((await sa.admin.getAccount(a.clientId))?.federated).toEqual([]);
  });

  it('refuses a second live credential for the same issuer, subject and audience; another audience, or after revocation, is accepted', async () => {
    const { sa } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'billing-deployer' });
    const first = await sa.admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: MAIN });
    const err = await expectAdminError(sa.admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: MAIN }), 'federated_credential_already_registered');
    expect(err.message).toContain(first.id);
    const other = await sa.admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: MAIN, audience: 'api://billing' });
    expect(other.audience).toBe('api://billing');
    await sa.admin.revokeFederatedCredential(a.clientId, first.id);
    const again = await sa.admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: MAIN });
    expect(again.id).not.toBe(first.id);
  });

  it('refuses unknown accounts with account_not_found and unknown or foreign credential IDs with federated_credential_not_found', async () => {
    const { sa } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'one' });
    const b = await sa.admin.createAccount({ name: 'two' });
    const ofA = await sa.admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: MAIN });
    await expectAdminError(sa.admin.addFederatedCredential('esa_unknown', { issuer: GITHUB, subject: MAIN }), 'account_not_found');
    await expectAdminError(sa.admin.revokeFederatedCredential('esa_unknown', ofA.id), 'account_not_found');
    await expectAdminError(sa.admin.revokeFederatedCredential(a.clientId, 'esaf_0000000000000000'), 'federated_credential_not_found');
    await expectAdminError(sa.admin.revokeFederatedCredential(a.clientId, a.secret.id), 'federated_credential_not_found');
    await expectAdminError(sa.admin.revokeFederatedCredential(b.clientId, ofA.id), 'federated_credential_not_found', new RegExp(ofA.id));
    // A value not shaped like a credential ID (a secret pasted by mistake) is not repeated.
    const pasted = 'esas_0123456789abcdef_' + 'A'.repeat(43);
    const err = await expectAdminError(sa.admin.revokeFederatedCredential(a.clientId, pasted), 'federated_credential_not_found');
    expect(err.message).not.toContain(pasted.slice(0, 20));
    expect((await sa.admin.getAccount(a.clientId))?.federated[0]?.revokedAt).toBeNull();
  });

  // Options: "maxSecretsPerAccount": live credentials, secrets, keys and federated credentials together.
  it('counts federated credentials against maxSecretsPerAccount together with secrets and keys', async () => {
    const { sa } = createTestApp({ maxSecretsPerAccount: 2 });
    const a = await sa.admin.createAccount({ name: 'capped' });
    const first = await sa.admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: MAIN });
    await expectAdminError(
      sa.admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: 'repo:acme/billing:environment:prod' }),
      'credential_limit_reached',
      /1 live secrets, 0 live keys and 1 live federated credentials.*limit is 2/,
    );
    await expectAdminError(sa.admin.addSecret(a.clientId), 'secret_limit_reached', /1 live federated credentials/);
    await sa.admin.revokeFederatedCredential(a.clientId, first.id);
    await sa.admin.addSecret(a.clientId);
    await expectAdminError(sa.admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: MAIN }), 'credential_limit_reached', /2 live secrets and 0 live keys/);
  });

  it('keeps the cap when federated credentials are added concurrently', async () => {
    const { sa } = createTestApp({ maxSecretsPerAccount: 3 });
    const a = await sa.admin.createAccount({ name: 'concurrent' });
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => sa.admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: `repo:acme/billing:environment:e${i}` })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as AdminError).code).toBe('credential_limit_reached');
  });

  it('emits federated_credential.created and .revoked naming the account, the credential, its issuer and subject, with the actor when named', async () => {
    const events: AuditEvent[] = [];
    const { sa } = createTestApp({ onAudit: (e) => void events.push(e) });
    const a = await sa.admin.createAccount({ name: 'billing-deployer' });
    const created = await sa.admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: MAIN });
    const actor = { id: 'u_42', name: 'Ada Lovelace' };
    await sa.admin.withActor(actor).revokeFederatedCredential(a.clientId, created.id);
    await flushAudit();
    const common = { at: expect.any(Date), clientId: a.clientId, name: 'billing-deployer', credentialId: created.id, issuer: GITHUB, subject: MAIN };
    expect(events.filter((e) => e.type.startsWith('federated_credential.'))).toEqual([
      { type: 'federated_credential.created', ...common },
      { type: 'federated_credential.revoked', ...common, actor },
    ]);
  });

  // docs/writing-a-store.md: a store without the federated credential methods cannot hold them.
  // A standalone admin API given the server's allow-list refuses what that server would never fetch.
  it('with allowedIssuers, refuses another issuer and a JWK Set URL of the credential\'s own', async () => {
    const admin = createAdminApi({ store: new MemoryAccountStore(), issuer: TEST_ISSUER, allowedIssuers: [GITHUB] });
    const a = await admin.createAccount({ name: 'billing-deployer' });
    await expectAdminError(admin.addFederatedCredential(a.clientId, { issuer: 'https://issuer.example.com', subject: MAIN }), 'invalid_input', /^issuer https:\/\/issuer\.example\.com is not one this server accepts/);
    await expectAdminError(admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: MAIN, jwksUri: `${GITHUB}/.well-known/jwks` }), 'invalid_input', /^jwksUri is not accepted on this server/);
    expect(await admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: MAIN })).toMatchObject({ issuer: GITHUB, subject: MAIN, audience: TEST_ISSUER });
  });

  it('over a store without federated credential methods: listings show none and addFederatedCredential fails with a clear message', async () => {
    const { sa } = createTestApp({ store: new ForwardingStore(new MemoryAccountStore()) });
    const a = await sa.admin.createAccount({ name: 'legacy' });
    expect((await sa.admin.getAccount(a.clientId))?.federated).toEqual([]);
    await expect(sa.admin.addFederatedCredential(a.clientId, { issuer: GITHUB, subject: MAIN })).rejects.toThrow(
      /store cannot hold federated credentials.*addFederatedCredential/,
    );
    await expectAdminError(sa.admin.revokeFederatedCredential(a.clientId, 'esaf_0000000000000000'), 'federated_credential_not_found');
  });
});
