/**
 * The admin router and claim conditions of federated credentials: `POST
 * /service-accounts/{clientId}/federated` takes `claims` (an object of claim names and exact values),
 * answers them in the created credential and in the account, and carries them in the audit event; bad
 * conditions are 400 `invalid-request` naming the claim, nothing stored. Every answer is checked
 * against the committed OpenAPI document by `adminClient`.
 */
import { describe, expect, it } from 'vitest';
import type request from 'supertest';
import type { FederatedCredentialEvent } from '../../src/index.js';
import { adminClient } from '../helpers/admin-openapi-check.js';
import { ACME_ADMIN, createAdminRouterApp } from '../helpers/admin-router-app.js';

const GITHUB = 'https://token.actions.githubusercontent.com';
const PRODUCTION = 'repo:acme/billing:environment:production';
const PROBLEM = 'https://github.com/express-service-accounts/express-service-accounts/blob/main/docs/errors.md#admin-';

/** The audit hook runs off the request's call stack (setImmediate): let it. */
const settle = (): Promise<void> => new Promise((done) => setImmediate(done));

function expectProblem(res: request.Response, status: number, name: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: PROBLEM + name, status, title: expect.any(String), detail: expect.any(String) });
}

describe('admin router: federated claim conditions', () => {
  const setup = async () => {
    const parts = createAdminRouterApp();
    const api = adminClient(parts.app);
    const created = await api.post('/admin/service-accounts', { token: 'acme', body: { name: 'deployer' } });
    expect(created.status).toBe(201);
    const { clientId } = created.body as { clientId: string };
    return { ...parts, api, clientId, path: `/admin/service-accounts/${clientId}/federated` };
  };

  it('adds a credential with claims (201), shows them in the account, and audits them with the actor', async () => {
    const { api, clientId, path, events } = await setup();
    const claims = { repository_owner: 'acme', job_workflow_ref: 'acme/billing/.github/workflows/deploy.yml@refs/heads/main' };
    const added = await api.post(path, { token: 'acme', body: { issuer: GITHUB, subject: PRODUCTION, claims } });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ id: expect.any(String), issuer: GITHUB, subject: PRODUCTION, audience: null, claims, createdAt: expect.any(String), expiresAt: null });
    const account = await api.get(`/admin/service-accounts/${clientId}`, { token: 'acme' });
    expect(account.body.federated).toEqual([{ ...added.body, lastUsedAt: null, revokedAt: null }]);
    await settle();
    const created = (events as FederatedCredentialEvent[]).filter((e) => e.type === 'federated_credential.created');
    expect(created).toEqual([expect.objectContaining({ credentialId: added.body.id, claims, actor: ACME_ADMIN.actor })]);
  });

  it('claims null or {} are none: the credential is answered without claims', async () => {
    const { api, path } = await setup();
    for (const [i, claims] of [null, {}].entries()) {
      const added = await api.post(path, { token: 'acme', body: { issuer: GITHUB, subject: `${PRODUCTION}-${i}`, claims } });
      expect(added.status).toBe(201);
      expect(added.body).not.toHaveProperty('claims');
    }
  });

  it('refuses bad conditions with 400 invalid-request, naming the claim, and stores nothing', async () => {
    const { api, path, admin, clientId } = await setup();
    const refused = async (claims: unknown, detail: RegExp) => {
      const res = await api.post(path, { token: 'acme', body: { issuer: GITHUB, subject: PRODUCTION, claims } });
      expectProblem(res, 400, 'invalid-request');
      expect(res.body.detail).toMatch(detail);
    };
    await refused({ environment: 'prod*' }, /value of claim environment .*patterns \(\*\) are not supported/);
    await refused({ sub: PRODUCTION }, /claim sub: sub is checked by its own rule/);
    await refused({ environment: 42 }, /./);
    await refused(Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`c${i}`, 'x'])), /./);
    await refused(['repository_owner=acme'], /./);
    expect((await admin.getAccount(clientId))?.federated).toEqual([]);
  });
});
