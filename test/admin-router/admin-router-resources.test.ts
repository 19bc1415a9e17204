/**
 * The admin router and resources (RFC 8707 resource indicators): an operator creates an account with
 * resources and replaces them with `POST /service-accounts/{clientId}/resources`; an administrator of
 * one client account may do neither (403 `forbidden`: resources pick among the host's APIs, across
 * client accounts), nothing changes, and the change is attributed in the audit event. Every answer is
 * checked against the committed OpenAPI document by `adminClient`.
 */
import { describe, expect, it } from 'vitest';
import type request from 'supertest';
import { adminClient } from '../helpers/admin-openapi-check.js';
import { createAdminRouterApp, OPERATOR } from '../helpers/admin-router-app.js';

const PROBLEM = 'https://github.com/express-service-accounts/express-service-accounts/blob/main/docs/errors.md#admin-';
const BILLING = 'https://billing.example.com';

/** The audit hook runs off the request's call stack (setImmediate): let it. */
const settle = (): Promise<void> => new Promise((done) => setImmediate(done));

function expectProblem(res: request.Response, status: number, name: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: PROBLEM + name, status, title: expect.any(String), detail: expect.any(String) });
}

describe('admin router: resources', () => {
  const setup = () => {
    const parts = createAdminRouterApp();
    return { ...parts, api: adminClient(parts.app) };
  };

  it('an operator creates an account with resources, sees them, and replaces them', async () => {
    const { api, events } = setup();
    const created = await api.post('/admin/service-accounts', { token: 'operator', body: { name: 'billing-exporter', clientAccountId: 'acme', resources: [BILLING] } });
    expect(created.status).toBe(201);
    const { clientId, resources } = created.body as { clientId: string; resources: string[] };
    expect(resources).toEqual([BILLING]);
    expect((await api.get(`/admin/service-accounts/${clientId}`, { token: 'acme' })).body).toMatchObject({ resources: [BILLING] });

    const set = await api.post(`/admin/service-accounts/${clientId}/resources`, { token: 'operator', body: { resources: ['reports', BILLING] } });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ clientId, resources: ['reports', BILLING] });
    await settle();
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'account.resources_changed', clientId, resources: ['reports', BILLING], actor: OPERATOR.actor }),
    );
    const cleared = await api.post(`/admin/service-accounts/${clientId}/resources`, { token: 'operator', body: { resources: [] } });
    expect(cleared.body).toEqual({ clientId, resources: [] });
  });

  it('refuses an administrator of one client account (403 forbidden) at creation and on change, changing nothing', async () => {
    const { api, admin } = setup();
    expectProblem(await api.post('/admin/service-accounts', { token: 'acme', body: { name: 'x', resources: [BILLING] } }), 403, 'forbidden');
    expect(await admin.listAccounts()).toEqual([]);
    const own = await api.post('/admin/service-accounts', { token: 'acme', body: { name: 'y' } });
    const { clientId } = own.body as { clientId: string };
    expectProblem(await api.post(`/admin/service-accounts/${clientId}/resources`, { token: 'acme', body: { resources: [BILLING] } }), 403, 'forbidden');
    expect((await admin.getAccount(clientId))?.resources).toEqual([]);
    // Another client account's administrator is told "not found", as for every other change.
    expectProblem(await api.post(`/admin/service-accounts/${clientId}/resources`, { token: 'globex', body: { resources: [BILLING] } }), 404, 'not-found');
  });

  // RFC 8707 §2: "MUST NOT include a fragment component".
  it('refuses a malformed resource or body with 400 invalid-request', async () => {
    const { api } = setup();
    const created = await api.post('/admin/service-accounts', { token: 'operator', body: { name: 'z' } });
    const { clientId } = created.body as { clientId: string };
    for (const body of [{ resources: [`${BILLING}/#x`] }, { resources: ['two words'] }, { resources: 'reports' }, {}]) {
      expectProblem(await api.post(`/admin/service-accounts/${clientId}/resources`, { token: 'operator', body }), 400, 'invalid-request');
    }
  });
});
