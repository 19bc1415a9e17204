/**
 * `sa.adminRouter({ authorize })`: the admin router over the instance's own admin API, on Express 5
 * and 4. A change made through it reaches this instance's token endpoint and bearer check at once,
 * and its audit event, given to the instance's `onAudit`, names the person who made it.
 */
import express5 from 'express';
import express4 from 'express4';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createServiceAccounts, MemoryAccountStore, type AuditEvent } from '../../src/index.js';
import { adminClient } from '../helpers/admin-openapi-check.js';
import { TEST_HS256_KEY, TEST_ISSUER, watchAdmin } from '../helpers/create-app.js';

describe.each([5, 4] as const)('sa.adminRouter() on Express %i', (version) => {
  it('creates a usable account, disables it for this instance at once, and audits both with the actor', async () => {
    const events: AuditEvent[] = [];
    const sa = createServiceAccounts({
      store: new MemoryAccountStore(),
      issuer: TEST_ISSUER,
      signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY }],
      secretHashRounds: 4,
      onAudit: (event) => {
        events.push(event);
      },
    });
    watchAdmin(sa.admin, 'in-its-response');
    const express = (version === 4 ? express4 : express5) as unknown as typeof express5;
    const app = express();
    app.use('/oauth', sa.tokenRouter);
    app.get('/api/whoami', sa.requireBearer(), (req, res) => {
      res.json(req.serviceAccount);
    });
    const actor = { id: 'u-7', name: 'Ada of Acme' };
    app.use('/admin', sa.adminRouter({ authorize: (req) => (req.headers.authorization === 'Bearer acme' ? { actor, clientAccountId: 'acme' } : undefined) }));
    const api = adminClient(app);

    const created = await api.post('/admin/service-accounts', { token: 'acme', body: { name: 'billing-sync' } });
    expect(created.status).toBe(201);
    const { clientId, secret } = created.body as { clientId: string; secret: { value: string } };
    const token = await request(app).post('/oauth/token').auth(clientId, secret.value).type('form').send({ grant_type: 'client_credentials' }).expect(200);
    const bearer = `Bearer ${token.body.access_token as string}`;
    await request(app).get('/api/whoami').set('Authorization', bearer).expect(200);

    expect((await api.post(`/admin/service-accounts/${clientId}/disable`, { token: 'acme' })).status).toBe(200);
    // RFC 6750 §3.1: the disabled account's token is now invalid_token.
    await request(app).get('/api/whoami').set('Authorization', bearer).expect(401);

    await new Promise((done) => setImmediate(done));
    const changes = events.filter((e) => e.type.startsWith('account.') || e.type.startsWith('secret.'));
    expect(changes.map((e) => [e.type, 'actor' in e ? e.actor : undefined])).toEqual([
      ['account.created', actor],
      ['secret.created', actor],
      ['account.disabled', actor],
    ]);
    await sa.close();
  });

  // A federated credential without an audience trusts tokens issued for this server's issuer identifier.
  it('shows the instance’s issuer identifier as the audience of a federated credential registered without one', async () => {
    const sa = createServiceAccounts({ store: new MemoryAccountStore(), issuer: TEST_ISSUER, signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY }], secretHashRounds: 4 });
    watchAdmin(sa.admin, 'in-its-response');
    const express = (version === 4 ? express4 : express5) as unknown as typeof express5;
    const app = express();
    app.use('/admin', sa.adminRouter({ authorize: () => ({ actor: { id: 'op', name: 'Operator' }, allClientAccounts: true }) }));
    const api = adminClient(app);
    const { clientId } = (await api.post('/admin/service-accounts', { token: 'any', body: { name: 'exporter' } })).body as { clientId: string };
    const body = { issuer: 'https://oidc.cluster.example.com', subject: 'system:serviceaccount:payments:exporter' };
    const added = await api.post(`/admin/service-accounts/${clientId}/federated`, { token: 'any', body });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ ...body, audience: TEST_ISSUER });
    await sa.close();
  });

  it('refuses options it does not know, at once', () => {
    const sa = createServiceAccounts({ store: new MemoryAccountStore(), issuer: TEST_ISSUER, signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY }] });
    expect(() => sa.adminRouter({ authorize: () => undefined, cors: true } as never)).toThrow(/"cors" is not a known option/);
    expect(() => sa.adminRouter({} as never)).toThrow(/"authorize" must be a function/);
    expect(() => sa.adminRouter({ authorize: () => undefined, challenge: 'Bearer\n' })).toThrow(/"challenge"/);
    for (const operatorOnlyScopes of ['admin:*', ['admin users'], ['*'], [''], [42]]) {
      expect(() => sa.adminRouter({ authorize: () => undefined, operatorOnlyScopes } as never)).toThrow(/"operatorOnlyScopes"/);
    }
  });
});
