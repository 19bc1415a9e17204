/**
 * A host's own account store may leave optional features out (docs/writing-a-store.md): keys,
 * federated credentials, credential expiry, account resources, token policies, claim conditions,
 * single-token revocation. Using one anyway is refused with a stable reason: the admin API's
 * `AdminError` code `not_supported`, and the admin router's 501 `not-implemented` problem (RFC 9110
 * §15.6.2: the server does not support the functionality required), whose detail says what the store
 * lacks. Every router answer is checked against the committed OpenAPI document by `adminClient`.
 */
import { generateKeyPairSync } from 'node:crypto';
import type request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createAdminApi, MemoryAccountStore } from '../../src/index.js';
import { adminClient } from '../helpers/admin-openapi-check.js';
import { createAdminRouterApp } from '../helpers/admin-router-app.js';
import { expectAdminError } from '../helpers/expect-admin-error.js';
import { ForwardingStore } from '../helpers/forwarding-store.js';

const PROBLEM = 'https://github.com/express-service-accounts/express-service-accounts/blob/main/docs/errors.md#admin-';
const GITHUB = 'https://token.actions.githubusercontent.com';
const publicPem = (): string => generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'pem', type: 'spki' }).toString();

/** A store written for an earlier version: the required methods only. */
const requiredOnly = () => new ForwardingStore(new MemoryAccountStore());

/** A store that holds federated credentials but not their claim conditions. */
class StoreWithoutClaims extends MemoryAccountStore {
  override readonly keepsClaimConditions = false;
}

function expectNotImplemented(res: request.Response, reason: RegExp): void {
  expect(res.status).toBe(501);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: PROBLEM + 'not-implemented', status: 501, title: expect.any(String), detail: expect.stringMatching(reason) });
}

describe('a store without an optional feature', () => {
  it('admin API: refuses each feature with AdminError not_supported, naming what the store lacks', async () => {
    const admin = createAdminApi({ store: requiredOnly(), secretHashRounds: 4 });
    // `supports` says so beforehand, for a UI that offers only what the store can hold.
    expect(admin.supports).toEqual({ keys: false, federated: false, accountPolicy: false, resources: false, credentialExpiry: false, claimConditions: false, tokenRevocation: false });
    const { clientId } = await admin.createAccount({ name: 'legacy' });
    await expectAdminError(admin.createAccount({ name: 'x', resources: ['https://billing.example.com'] }), 'not_supported', /setAccountResources/);
    await expectAdminError(admin.setResources(clientId, ['https://billing.example.com']), 'not_supported', /setAccountResources/);
    await expectAdminError(admin.createAccount({ name: 'x', accessTokenLifetime: 60 }), 'not_supported', /setAccountPolicy/);
    await expectAdminError(admin.setPolicy(clientId, { accessTokenLifetime: 60 }), 'not_supported', /setAccountPolicy/);
    await expectAdminError(admin.addSecret(clientId, { expiresIn: '1d' }), 'not_supported', /keepsCredentialExpiry/);
    await expectAdminError(admin.addKey(clientId, publicPem()), 'not_supported', /addKey/);
    await expectAdminError(admin.addFederatedCredential(clientId, { issuer: GITHUB, subject: 'repo:acme/x:ref:refs/heads/main' }), 'not_supported', /addFederatedCredential/);
    await expectAdminError(admin.revokeToken('0f6a1c2e-58b4-4f59-9a57-2c1d6a1c9e3b'), 'not_supported', /revokeToken/);

    const claimless = createAdminApi({ store: new StoreWithoutClaims(), secretHashRounds: 4, issuer: 'https://auth.example.com' });
    expect(claimless.supports).toMatchObject({ federated: true, claimConditions: false });
    const other = await claimless.createAccount({ name: 'deployer' });
    const claims = { repository_owner: 'acme' };
    await expectAdminError(claimless.addFederatedCredential(other.clientId, { issuer: GITHUB, subject: 'repo:acme/x:ref:refs/heads/main', claims }), 'not_supported', /keepsClaimConditions/);
  });

  it('admin API: a store with some of a kind\'s methods is told only those it lacks', async () => {
    const memory = new MemoryAccountStore();
    // Written with three of the four key methods: consumeAssertionId forgotten.
    class KeysWithoutReplayCheck extends ForwardingStore {
      addKey = memory.addKey.bind(memory);
      revokeKey = memory.revokeKey.bind(memory);
      recordKeyUse = memory.recordKeyUse.bind(memory);
    }
    const admin = createAdminApi({ store: new KeysWithoutReplayCheck(memory), secretHashRounds: 4 });
    const { clientId } = await admin.createAccount({ name: 'partial' });
    const refused = admin.addKey(clientId, publicPem());
    await expectAdminError(refused, 'not_supported', /it lacks consumeAssertionId \(/);
    await expect(refused).rejects.not.toThrow(/addKey|revokeKey|recordKeyUse/);
  });

  it('admin router: answers 501 not-implemented with the reason, on every route that needs the feature', async () => {
    const { app } = createAdminRouterApp({ store: requiredOnly() });
    const api = adminClient(app);
    const created = await api.post('/admin/service-accounts', { token: 'operator', body: { name: 'legacy', clientAccountId: 'acme' } });
    expect(created.status).toBe(201);
    const { clientId } = created.body as { clientId: string };
    const account = `/admin/service-accounts/${clientId}`;

    expectNotImplemented(
      await api.post('/admin/service-accounts', { token: 'operator', body: { name: 'x', clientAccountId: 'acme', resources: ['https://billing.example.com'] } }),
      /setAccountResources/,
    );
    expectNotImplemented(await api.post(`${account}/resources`, { token: 'operator', body: { resources: ['https://billing.example.com'] } }), /setAccountResources/);
    expectNotImplemented(await api.post('/admin/service-accounts', { token: 'operator', body: { name: 'x', clientAccountId: 'acme', accessTokenLifetime: 60 } }), /setAccountPolicy/);
    expectNotImplemented(await api.post(`${account}/policy`, { token: 'operator', body: { accessTokenLifetime: 60 } }), /setAccountPolicy/);
    expectNotImplemented(await api.post(`${account}/secrets`, { token: 'operator', body: { expiresIn: '1d' } }), /keepsCredentialExpiry/);
    expectNotImplemented(await api.post(`${account}/keys`, { token: 'operator', body: { publicKey: publicPem() } }), /addKey/);
    expectNotImplemented(
      await api.post(`${account}/federated`, { token: 'operator', body: { issuer: GITHUB, subject: 'repo:acme/x:ref:refs/heads/main' } }),
      /addFederatedCredential/,
    );
  });

  it('admin router: answers 501 not-implemented for claim conditions a store cannot keep', async () => {
    const { app } = createAdminRouterApp({ store: new StoreWithoutClaims() });
    const api = adminClient(app);
    const created = await api.post('/admin/service-accounts', { token: 'operator', body: { name: 'deployer', clientAccountId: 'acme' } });
    const { clientId } = created.body as { clientId: string };
    const body = { issuer: GITHUB, subject: 'repo:acme/x:ref:refs/heads/main', claims: { repository_owner: 'acme' } };
    expectNotImplemented(await api.post(`/admin/service-accounts/${clientId}/federated`, { token: 'operator', body }), /keepsClaimConditions/);
  });
});
