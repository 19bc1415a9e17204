/**
 * The admin router and account token policies (docs/account-policy.md): an account created with
 * `accessTokenLifetime` and `dpopBoundAccessTokens`, shown in its summary, changed with
 * `POST /service-accounts/{clientId}/policy` (the fields given only), a lifetime above the server's
 * maximum refused (400 invalid-request), the change attributed in the audit event; an administrator of
 * one client account may tune their own accounts only. Every answer is checked against the committed
 * OpenAPI document by `adminClient`.
 */
import { describe, expect, it } from 'vitest';
import type request from 'supertest';
import { adminClient } from '../helpers/admin-openapi-check.js';
import { ACME_ADMIN, createAdminRouterApp, OPERATOR } from '../helpers/admin-router-app.js';

const PROBLEM = 'https://github.com/express-service-accounts/express-service-accounts/blob/main/docs/errors.md#admin-';

/** The audit hook runs off the request's call stack (setImmediate): let it. */
const settle = (): Promise<void> => new Promise((done) => setImmediate(done));

function expectProblem(res: request.Response, status: number, name: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: PROBLEM + name, status, title: expect.any(String), detail: expect.any(String) });
}

describe('admin router: account token policy', () => {
  const setup = () => {
    const parts = createAdminRouterApp({ maxAccessTokenLifetime: 7200 });
    return { ...parts, api: adminClient(parts.app) };
  };

  it('creates an account with a policy, shows it, and changes the fields given only', async () => {
    const { api, events } = setup();
    const created = await api.post('/admin/service-accounts', {
      token: 'operator',
      body: { name: 'payouts', clientAccountId: 'acme', accessTokenLifetime: 900, dpopBoundAccessTokens: true },
    });
    expect(created.status).toBe(201);
    const { clientId } = created.body as { clientId: string };
    expect(created.body).toMatchObject({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
    expect((await api.get(`/admin/service-accounts/${clientId}`, { token: 'acme' })).body).toMatchObject({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });

    const longer = await api.post(`/admin/service-accounts/${clientId}/policy`, { token: 'operator', body: { accessTokenLifetime: 7200 } });
    expect(longer.status).toBe(200);
    expect(longer.body).toEqual({ clientId, accessTokenLifetime: 7200, dpopBoundAccessTokens: true });
    const reset = await api.post(`/admin/service-accounts/${clientId}/policy`, { token: 'operator', body: { accessTokenLifetime: null, dpopBoundAccessTokens: false } });
    expect(reset.body).toEqual({ clientId, accessTokenLifetime: null, dpopBoundAccessTokens: false });
    await settle();
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'account.policy_changed', clientId, accessTokenLifetime: 7200, dpopBoundAccessTokens: true, actor: OPERATOR.actor }),
    );
  });

  // "within a server-wide maximum": above it, refused and nothing changes.
  it('refuses a lifetime above the server maximum, and malformed bodies, with 400 invalid-request', async () => {
    const { api, admin } = setup();
    expectProblem(await api.post('/admin/service-accounts', { token: 'operator', body: { name: 'x', accessTokenLifetime: 7201 } }), 400, 'invalid-request');
    expect(await admin.listAccounts()).toEqual([]);
    const created = await api.post('/admin/service-accounts', { token: 'operator', body: { name: 'z' } });
    const { clientId } = created.body as { clientId: string };
    for (const body of [{ accessTokenLifetime: 7201 }, { accessTokenLifetime: 0 }, { accessTokenLifetime: '15m' }, { dpopBoundAccessTokens: 'yes' }, {}, { other: 1 }]) {
      expectProblem(await api.post(`/admin/service-accounts/${clientId}/policy`, { token: 'operator', body }), 400, 'invalid-request');
    }
    expect(await admin.getAccount(clientId)).toMatchObject({ accessTokenLifetime: null, dpopBoundAccessTokens: false });
  });

  it("lets an administrator of a client account change their own accounts' policy, and tells another one 'not found'", async () => {
    const { api, events } = setup();
    const own = await api.post('/admin/service-accounts', { token: 'acme', body: { name: 'y', dpopBoundAccessTokens: true } });
    const { clientId } = own.body as { clientId: string };
    const set = await api.post(`/admin/service-accounts/${clientId}/policy`, { token: 'acme', body: { accessTokenLifetime: 600 } });
    expect(set.body).toEqual({ clientId, accessTokenLifetime: 600, dpopBoundAccessTokens: true });
    await settle();
    expect(events).toContainEqual(expect.objectContaining({ type: 'account.policy_changed', clientId, actor: ACME_ADMIN.actor }));
    expectProblem(await api.post(`/admin/service-accounts/${clientId}/policy`, { token: 'globex', body: { accessTokenLifetime: 60 } }), 404, 'not-found');
  });
});
