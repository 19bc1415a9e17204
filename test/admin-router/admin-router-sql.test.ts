/**
 * The admin router on the SQL stores (real SQLite; real PostgreSQL when POSTGRES_URL is set): client
 * accounts, dates and secrets' last use come back from the database as the OpenAPI document says, and
 * isolation holds on what the store persisted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openAccountStore, type SqlAccountStore } from '../../src/sql/index.js';
import { adminClient } from '../helpers/admin-openapi-check.js';
import { createAdminRouterApp } from '../helpers/admin-router-app.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';

const dir = mkdtempSync(join(tmpdir(), 'esa-admin-router-sql-'));
const postgresUrl = process.env.POSTGRES_URL;
const schemas = postgresUrl ? usePostgresSchemas(postgresUrl) : undefined;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const stores: [string, () => SqlAccountStore][] = [['SQLite', () => openAccountStore(`sqlite:${join(dir, `admin-${Date.now()}.db`)}`)]];
if (schemas) stores.push(['PostgreSQL', () => openAccountStore(schemas.url(schemas.name('esa_admin_router_')))]);

describe.each(stores)('admin router on %s', (_name, open) => {
  it('creates, lists, rotates and disables per client account, every answer as documented', async () => {
    const store = open();
    try {
      const { app, clock } = createAdminRouterApp({ store });
      const api = adminClient(app);
      const created = await api.post('/admin/service-accounts', { token: 'acme', body: { name: 'sql-billing', scopes: 'jobs:read jobs:write' } });
      expect(created.status).toBe(201);
      const { clientId, secret } = created.body as { clientId: string; secret: { id: string } };
      clock.advance(60);
      await api.post('/admin/service-accounts', { token: 'globex', body: { name: 'globex-sync' } });

      const listed = await api.get('/admin/service-accounts', { token: 'acme' });
      expect(listed.body).toEqual([
        {
          clientId,
          name: 'sql-billing',
          clientAccountId: 'acme',
          enabled: true,
          scopes: ['jobs:read', 'jobs:write'],
          resources: [],
          accessTokenLifetime: null,
          dpopBoundAccessTokens: false,
          createdAt: '2026-11-22T10:00:00.000Z',
          secrets: [{ id: secret.id, createdAt: '2026-11-22T10:00:00.000Z', lastUsedAt: null, revokedAt: null, expiresAt: null }],
          keys: [],
          federated: [],
        },
      ]);
      expect((await api.get(`/admin/service-accounts/${clientId}`, { token: 'globex' })).status).toBe(404);
      expect((await api.post(`/admin/service-accounts/${clientId}/secrets`, { token: 'acme' })).status).toBe(201);
      const revoked = await api.delete(`/admin/service-accounts/${clientId}/secrets/${secret.id}`, { token: 'acme' });
      expect(revoked.body).toEqual({ clientId, secretId: secret.id, revokedAt: '2026-11-22T10:01:00.000Z' });
      expect((await api.post(`/admin/service-accounts/${clientId}/disable`, { token: 'acme' })).body).toEqual({ clientId, enabled: false });
      const all = await api.get('/admin/service-accounts', { token: 'operator' });
      expect(all.body.map((a: { name: string }) => a.name)).toEqual(['sql-billing', 'globex-sync']);
    } finally {
      await store.close();
    }
  });
});
