/**
 * Public keys (private_key_jwt, RFC 7523) through the admin router: `POST
 * /service-accounts/{clientId}/keys` registers one (PEM text, JWK text or a JWK object) and `DELETE
 * .../keys/{keyId}` revokes it, within the caller's client account only, audited with the person,
 * each answer as the OpenAPI document says. See docs/admin-api.md.
 */
import { exportJWK, exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { expectDocumented } from '../helpers/admin-openapi-check.js';
import { ACME_ADMIN, createAdminRouterApp } from '../helpers/admin-router-app.js';

const es256 = () => generateKeyPair('ES256', { extractable: true });

async function acmeAccount(app: import('express').Express): Promise<string> {
  const res = await request(app).post('/admin/service-accounts').auth('acme', { type: 'bearer' }).send({ name: 'billing-sync' }).expect(201);
  return (res.body as { clientId: string }).clientId;
}

describe('admin router: public keys', () => {
  it('registers a PEM, a JWK text and a JWK object, lists them, and revokes one, audited with the person', async () => {
    const { app, events } = createAdminRouterApp();
    const clientId = await acmeAccount(app);
    const bodies = [
      { publicKey: await exportSPKI((await es256()).publicKey) },
      { publicKey: JSON.stringify(await exportJWK((await es256()).publicKey)) },
      { publicKey: await exportJWK((await es256()).publicKey) },
    ];
    const ids: string[] = [];
    for (const body of bodies) {
      const res = await request(app).post(`/admin/service-accounts/${clientId}/keys`).auth('acme', { type: 'bearer' }).send(body).expect(201);
      expect(res.body).toEqual({ id: expect.stringMatching(/^esak_/), thumbprint: expect.any(String), createdAt: expect.any(String), expiresAt: null });
      expectDocumented('post', `/admin/service-accounts/${clientId}/keys`, res);
      ids.push((res.body as { id: string }).id);
    }
    const revoked = await request(app).delete(`/admin/service-accounts/${clientId}/keys/${ids[0]}`).auth('acme', { type: 'bearer' }).expect(200);
    expect(revoked.body).toEqual({ clientId, keyId: ids[0], revokedAt: expect.any(String) });
    expectDocumented('delete', `/admin/service-accounts/${clientId}/keys/${ids[0]}`, revoked);
    const account = await request(app).get(`/admin/service-accounts/${clientId}`).auth('acme', { type: 'bearer' }).expect(200);
    expect((account.body as { keys: { id: string; revokedAt: string | null }[] }).keys.map((k) => [k.id, k.revokedAt !== null])).toEqual([
      [ids[0], true],
      [ids[1], false],
      [ids[2], false],
    ]);
    expect(events.filter((e) => e.type.startsWith('key.')).map((e) => [e.type, (e as { actor?: unknown }).actor])).toEqual([
      ['key.created', ACME_ADMIN.actor],
      ['key.created', ACME_ADMIN.actor],
      ['key.created', ACME_ADMIN.actor],
      ['key.revoked', ACME_ADMIN.actor],
    ]);
  });

  it('refuses a private key without repeating it, a key twice, and a form body', async () => {
    const { app } = createAdminRouterApp();
    const clientId = await acmeAccount(app);
    const pair = await es256();
    const privatePem = await exportPKCS8(pair.privateKey);
    const refused = await request(app).post(`/admin/service-accounts/${clientId}/keys`).auth('acme', { type: 'bearer' }).send({ publicKey: privatePem }).expect(400);
    expect(JSON.stringify(refused.body)).not.toContain(privatePem.split('\n')[1]);
    const pem = await exportSPKI(pair.publicKey);
    await request(app).post(`/admin/service-accounts/${clientId}/keys`).auth('acme', { type: 'bearer' }).send({ publicKey: pem }).expect(201);
    const twice = await request(app).post(`/admin/service-accounts/${clientId}/keys`).auth('acme', { type: 'bearer' }).send({ publicKey: pem }).expect(400);
    expect((twice.body as { detail: string }).detail).toMatch(/already/);
    await request(app).post(`/admin/service-accounts/${clientId}/keys`).auth('acme', { type: 'bearer' }).type('form').send({ publicKey: pem }).expect(415);
    await request(app).post(`/admin/service-accounts/${clientId}/keys`).auth('acme', { type: 'bearer' }).send({ publicKey: '' }).expect(400);
  });

  it('is not found for another client account’s administrator, whose attempts change nothing', async () => {
    const { app } = createAdminRouterApp();
    const clientId = await acmeAccount(app);
    const pem = await exportSPKI((await es256()).publicKey);
    const own = await request(app).post(`/admin/service-accounts/${clientId}/keys`).auth('acme', { type: 'bearer' }).send({ publicKey: pem }).expect(201);
    const keyId = (own.body as { id: string }).id;
    await request(app).post(`/admin/service-accounts/${clientId}/keys`).auth('globex', { type: 'bearer' }).send({ publicKey: await exportSPKI((await es256()).publicKey) }).expect(404);
    await request(app).delete(`/admin/service-accounts/${clientId}/keys/${keyId}`).auth('globex', { type: 'bearer' }).expect(404);
    const account = await request(app).get(`/admin/service-accounts/${clientId}`).auth('acme', { type: 'bearer' }).expect(200);
    expect((account.body as { keys: { revokedAt: string | null }[] }).keys).toEqual([expect.objectContaining({ id: keyId, revokedAt: null })]);
  });
});
