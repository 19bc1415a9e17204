/**
 * The admin router and credentials that expire (docs/rotation.md, docs/admin-api.md): a secret added
 * with `expiresIn` or `expiresAt`, an account created with `secret.expiresIn` answering
 * `client_secret_expires_at` ("seconds since the epoch, 0 for none", RFC 7591 §3.2.1), the server's
 * `maxCredentialLifetime` refusing at creation (400 `invalid-request`), and `GET /stale-credentials`
 * limited to the caller's client account. Every answer is checked against the committed OpenAPI
 * document by `adminClient`.
 */
import { describe, expect, it } from 'vitest';
import type request from 'supertest';
import { adminClient } from '../helpers/admin-openapi-check.js';
import { createAdminRouterApp } from '../helpers/admin-router-app.js';

const PROBLEM = 'https://github.com/express-service-accounts/express-service-accounts/blob/main/docs/errors.md#admin-';

function expectProblem(res: request.Response, status: number, name: string, detail?: RegExp): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: PROBLEM + name, status, detail: expect.any(String) });
  if (detail) expect(res.body.detail).toMatch(detail);
}

describe('admin router: expiring credentials', () => {
  const setup = (options: Parameters<typeof createAdminRouterApp>[0] = {}) => {
    const parts = createAdminRouterApp(options);
    return { ...parts, api: adminClient(parts.app) };
  };

  it('creates an account whose first secret expires, answering client_secret_expires_at; adds an expiring secret', async () => {
    const { api, clock } = setup();
    const created = await api.post('/admin/service-accounts', { token: 'acme', body: { name: 'quarterly', secret: { expiresIn: '90d' } } });
    expect(created.status).toBe(201);
    const expiresAt = clock.now().getTime() + 90 * 86_400_000;
    expect(created.body.secret.expiresAt).toBe(new Date(expiresAt).toISOString());
    expect(created.body.client_secret_expires_at).toBe(Math.floor(expiresAt / 1000));
    const clientId = created.body.clientId as string;

    const at = '2027-01-01T00:00:00.000Z';
    const added = await api.post(`/admin/service-accounts/${clientId}/secrets`, { token: 'acme', body: { expiresAt: at } });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect(added.body.expiresAt).toBe(at);
    // The body stays optional: no body, a secret that never expires.
    const plain = await api.post(`/admin/service-accounts/${clientId}/secrets`, { token: 'acme' });
    expect(plain.status, JSON.stringify(plain.body)).toBe(201);
    expect(plain.body.expiresAt).toBeNull();
    const shown = await api.get(`/admin/service-accounts/${clientId}`, { token: 'acme' });
    expect(shown.body.secrets.map((s: { expiresAt: string | null }) => s.expiresAt)).toEqual([new Date(expiresAt).toISOString(), at, null]);
  });

  // Issue 34: "A server policy maxCredentialLifetime makes an expiry required and bounded for new credentials."
  it('with maxCredentialLifetime, refuses a secret without an expiry or beyond it (400 invalid-request)', async () => {
    const { api } = setup({ maxCredentialLifetime: 30 * 86_400 });
    expectProblem(await api.post('/admin/service-accounts', { token: 'acme', body: { name: 'unbounded' } }), 400, 'invalid-request', /required/);
    const created = await api.post('/admin/service-accounts', { token: 'acme', body: { name: 'bounded', secret: { expiresIn: '30d' } } });
    expect(created.status).toBe(201);
    const path = `/admin/service-accounts/${created.body.clientId}/secrets`;
    expectProblem(await api.post(path, { token: 'acme' }), 400, 'invalid-request', /required/);
    expectProblem(await api.post(path, { token: 'acme', body: { expiresIn: '31d' } }), 400, 'invalid-request', /maxCredentialLifetime/);
    expectProblem(await api.post(path, { token: 'acme', body: { expiresIn: 'soon' } }), 400, 'invalid-request');
    expect((await api.post(path, { token: 'acme', body: { expiresIn: 3600 } })).status).toBe(201);
  });

  it('lists stale credentials of the caller’s client account only', async () => {
    const { api, clock } = setup();
    const acme = await api.post('/admin/service-accounts', { token: 'acme', body: { name: 'acme-soon', secret: { expiresIn: '7d' } } });
    await api.post('/admin/service-accounts', { token: 'globex', body: { name: 'globex-soon', secret: { expiresIn: '7d' } } });
    const seen = await api.get('/admin/stale-credentials?expiringWithin=14d', { token: 'acme' });
    expect(seen.status).toBe(200);
    expect(seen.body).toEqual([
      {
        clientId: acme.body.clientId,
        name: 'acme-soon',
        clientAccountId: 'acme',
        kind: 'secret',
        id: acme.body.secret.id,
        createdAt: clock.now().toISOString(),
        lastUsedAt: null,
        expiresAt: acme.body.secret.expiresAt,
        reasons: ['expiring'],
      },
    ]);
    expect((await api.get('/admin/stale-credentials?expiringWithin=14d', { token: 'operator' })).body).toHaveLength(2);
    clock.advance(8 * 86_400);
    const later = await api.get('/admin/stale-credentials?expiringWithin=1d&unusedFor=7d', { token: 'acme' });
    expect(later.body[0].reasons).toEqual(['expired', 'unused']);
    expectProblem(await api.get('/admin/stale-credentials', { token: 'acme' }), 400, 'invalid-request');
    expectProblem(await api.get('/admin/stale-credentials?expiringWithin=2weeks', { token: 'acme' }), 400, 'invalid-request');
  });
});
