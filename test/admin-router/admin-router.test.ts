/**
 * The admin router over HTTP, on Express 5 and Express 4: each operation, tenant scoping, attribution,
 * the browser-safety rules and the problem details. Every answer is checked against the committed
 * OpenAPI document by `adminClient` (test/helpers/admin-openapi-check.ts).
 */
import { describe, expect, it } from 'vitest';
import request from 'supertest';
import type { AccountEvent, FederatedCredentialEvent, SecretEvent } from '../../src/index.js';
import { adminClient } from '../helpers/admin-openapi-check.js';
import { ACME_ADMIN, createAdminRouterApp, GLOBEX_ADMIN, OPERATOR } from '../helpers/admin-router-app.js';
import { FailingStore } from '../helpers/failing-store.js';

const GITHUB = 'https://token.actions.githubusercontent.com';
const MAIN = 'repo:acme/billing:ref:refs/heads/main';
const PROBLEM = 'https://github.com/express-service-accounts/express-service-accounts/blob/main/docs/errors.md#admin-';

/** The audit hook runs off the request's call stack (setImmediate): let it. */
const settle = (): Promise<void> => new Promise((done) => setImmediate(done));

function expectProblem(res: request.Response, status: number, name: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: PROBLEM + name, status, title: expect.any(String), detail: expect.any(String) });
}

describe.each([5, 4] as const)('admin router on Express %i', (version) => {
  const setup = (options: Parameters<typeof createAdminRouterApp>[0] = {}) => {
    const parts = createAdminRouterApp({ express: version, ...options });
    const api = adminClient(parts.app);
    const create = async (token: string, body: Record<string, unknown> = { name: 'billing-sync' }) => {
      const res = await api.post('/admin/service-accounts', { token, body });
      expect(res.status).toBe(201);
      return res.body as { clientId: string; secret: { id: string; value: string } };
    };
    return { ...parts, api, create };
  };

  // RFC 9110 §15.3.2: 201 Created with a Location; the secret is in this response only, so no cache
  // may keep it (RFC 9111 §5.2.2.5 no-store).
  it('creates an account in the caller’s client account and shows its secret once, uncached', async () => {
    const { api, events } = setup();
    const res = await api.post('/admin/service-accounts', { token: 'acme', body: { name: 'billing-sync', scopes: ['jobs:read'] } });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      clientId: expect.stringMatching(/^esa_/),
      name: 'billing-sync',
      clientAccountId: 'acme',
      scopes: ['jobs:read'],
      resources: [],
      accessTokenLifetime: null,
      dpopBoundAccessTokens: false,
      secret: { id: expect.any(String), value: expect.stringMatching(/^esas_/), expiresAt: null },
      client_secret_expires_at: 0, // RFC 7591 §3.2.1: 0 when the secret does not expire
    });
    expect(res.headers.location).toBe(`/admin/service-accounts/${res.body.clientId}`);
    const shown = await api.get(res.headers.location!, { token: 'acme' });
    expect(shown.text).not.toContain(res.body.secret.value);
    await settle();
    expect(events.map((e) => [e.type, (e as AccountEvent).name, (e as AccountEvent).actor])).toEqual([
      ['account.created', 'billing-sync', ACME_ADMIN.actor],
      ['secret.created', 'billing-sync', ACME_ADMIN.actor],
    ]);
  });

  it('lets an all-tenants operator create in any client account, or in none', async () => {
    const { api } = setup();
    const inGlobex = await api.post('/admin/service-accounts', { token: 'operator', body: { name: 'a', clientAccountId: 'globex' } });
    expect(inGlobex.body.clientAccountId).toBe('globex');
    const inNone = await api.post('/admin/service-accounts', { token: 'operator', body: { name: 'b' } });
    expect(inNone.body.clientAccountId).toBeNull();
  });

  // A tenant administrator cannot place an account in another client account.
  it('refuses a tenant administrator’s create naming another client account (403), creating nothing', async () => {
    const { api, admin } = setup();
    const res = await api.post('/admin/service-accounts', { token: 'acme', body: { name: 'x', clientAccountId: 'globex' } });
    expectProblem(res, 403, 'forbidden');
    expect(await admin.listAccounts()).toEqual([]);
  });

  // docs/admin-api.md "Scopes only an operator may grant": a scope whose meaning crosses client accounts
  // (operatorOnlyScopes) is refused to an administrator of one client account with an RFC 9457 problem
  // (403 forbidden), however the scopes are written, and nothing is created; an operator may grant it.
  it('refuses a tenant administrator’s create granting an operator-only scope (403), creating nothing', async () => {
    const { api, admin } = setup({ operatorOnlyScopes: ['admin:*', 'reports:all-tenants'] });
    for (const scopes of [['jobs:read', 'admin:users'], 'jobs:read  reports:all-tenants', ['admin:']]) {
      const res = await api.post('/admin/service-accounts', { token: 'acme', body: { name: 'x', scopes } });
      expectProblem(res, 403, 'forbidden');
      expect(res.body.detail).toMatch(/admin:users|reports:all-tenants|admin:/);
    }
    expect(await admin.listAccounts()).toEqual([]);
    // Neither a look-alike nor the library's own token:introspect (bounded by the client account) is refused.
    const allowed = await api.post('/admin/service-accounts', { token: 'acme', body: { name: 'y', scopes: ['reports:all', 'administer', 'token:introspect'] } });
    expect(allowed.status).toBe(201);
    const byOperator = await api.post('/admin/service-accounts', { token: 'operator', body: { name: 'z', clientAccountId: 'acme', scopes: ['admin:users'] } });
    expect(byOperator.status).toBe(201);
  });

  // docs/admin-api.md "Scopes only an operator may grant": an account without scopes passes every scope
  // check (docs/require-bearer.md), reserved ones included, so where the host reserves scopes only an
  // operator may create one; a tenant administrator gets 403, whether scopes is left out or empty.
  it('refuses a tenant administrator’s create without scopes when scopes are reserved (403); an operator may', async () => {
    const { api, admin } = setup({ operatorOnlyScopes: ['reports:all-tenants'] });
    for (const body of [{ name: 'x' }, { name: 'x', scopes: [] }]) {
      const res = await api.post('/admin/service-accounts', { token: 'acme', body });
      expectProblem(res, 403, 'forbidden');
      expect(res.body.detail).toMatch(/without scopes/);
    }
    expect(await admin.listAccounts()).toEqual([]);
    expect((await api.post('/admin/service-accounts', { token: 'operator', body: { name: 'y', clientAccountId: 'acme' } })).status).toBe(201);
    // Without reserved scopes, an account without scopes is the tenant's to make, as before.
    const open = setup();
    expect((await open.api.post('/admin/service-accounts', { token: 'acme', body: { name: 'z' } })).status).toBe(201);
  });

  it('lists only the caller’s client account; an operator sees all and may narrow to one', async () => {
    const { api, create } = setup();
    const a = await create('acme');
    const g = await create('globex');
    const acme = await api.get('/admin/service-accounts', { token: 'acme' });
    expect(acme.status).toBe(200);
    expect(acme.body.map((x: { clientId: string }) => x.clientId)).toEqual([a.clientId]);
    expect(acme.body[0].secrets).toEqual([{ id: a.secret.id, createdAt: expect.any(String), lastUsedAt: null, revokedAt: null, expiresAt: null }]);
    const all = await api.get('/admin/service-accounts', { token: 'operator' });
    expect(all.body.map((x: { clientId: string }) => x.clientId).sort()).toEqual([a.clientId, g.clientId].sort());
    const narrowed = await api.get('/admin/service-accounts?clientAccountId=globex', { token: 'operator' });
    expect(narrowed.body.map((x: { clientId: string }) => x.clientId)).toEqual([g.clientId]);
    // A tenant administrator's filter cannot widen their view.
    const widened = await api.get('/admin/service-accounts?clientAccountId=globex', { token: 'acme' });
    expect(widened.body.map((x: { clientId: string }) => x.clientId)).toEqual([a.clientId]);
  });

  // RFC 8288 §3: the next page is a `Link` with rel="next"; the last page has none.
  it('pages with a cursor in Link rel="next", in creation order, each account once', async () => {
    const { api, create, clock } = setup();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.push((await create('acme', { name: `n${i}` })).clientId);
      clock.advance(1);
    }
    const seen: string[] = [];
    let next: string | undefined = '/admin/service-accounts?limit=2';
    while (next) {
      const page = await api.get(next, { token: 'acme' });
      expect(page.status).toBe(200);
      expect(page.body.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.map((x: { clientId: string }) => x.clientId));
      next = /^<([^>]+)>; rel="next"$/.exec(page.headers.link ?? '')?.[1];
    }
    expect(seen).toEqual(made);
  });

  it('keeps a cursor valid while accounts are created between pages', async () => {
    const { api, create, clock } = setup();
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      made.push((await create('acme', { name: `n${i}` })).clientId);
      clock.advance(1);
    }
    const first = await api.get('/admin/service-accounts?limit=2', { token: 'acme' });
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.link ?? '')![1]!;
    made.push((await create('acme', { name: 'late' })).clientId);
    const second = await api.get(next, { token: 'acme' });
    expect([...first.body, ...second.body].map((x: { clientId: string }) => x.clientId)).toEqual(made);
  });

  it('refuses a cursor it did not issue and a limit out of range (400)', async () => {
    const { api } = setup();
    expectProblem(await api.get('/admin/service-accounts?cursor=bm9wZQ', { token: 'acme' }), 400, 'invalid-request');
    const res = await api.get('/admin/service-accounts?limit=0', { token: 'acme' });
    expectProblem(res, 400, 'invalid-request');
    expect(res.body.errors).toEqual([expect.objectContaining({ pointer: '/limit' })]);
    expectProblem(await api.get('/admin/service-accounts?limit=1&limit=2', { token: 'acme' }), 400, 'invalid-request');
  });

  // Isolation: another client account's client ID is answered exactly like an unknown one.
  it('answers another client account’s account exactly like an unknown client ID (404)', async () => {
    const { api, create } = setup();
    const g = await create('globex');
    const own = await api.get(`/admin/service-accounts/${g.clientId}`, { token: 'globex' });
    expect(own.status).toBe(200);
    const foreign = await api.get(`/admin/service-accounts/${g.clientId}`, { token: 'acme' });
    const unknown = await api.get('/admin/service-accounts/esa_000000000000000000000000', { token: 'acme' });
    expectProblem(foreign, 404, 'not-found');
    expect(foreign.body).toEqual(unknown.body);
    expect(foreign.text).not.toContain(g.clientId);
  });

  it('refuses every change to another client account’s account with 404, changing nothing and auditing nothing', async () => {
    const { api, create, admin, events } = setup();
    const g = await create('globex');
    await settle();
    events.length = 0;
    const base = `/admin/service-accounts/${g.clientId}`;
    expectProblem(await api.post(`${base}/secrets`, { token: 'acme' }), 404, 'not-found');
    expectProblem(await api.delete(`${base}/secrets/${g.secret.id}`, { token: 'acme' }), 404, 'not-found');
    expectProblem(await api.post(`${base}/disable`, { token: 'acme' }), 404, 'not-found');
    expectProblem(await api.post(`${base}/enable`, { token: 'acme' }), 404, 'not-found');
    const federated = await admin.addFederatedCredential(g.clientId, { issuer: GITHUB, subject: MAIN });
    await settle();
    events.length = 0;
    expectProblem(await api.post(`${base}/federated`, { token: 'acme', body: { issuer: GITHUB, subject: 'repo:acme/x:ref:refs/heads/main' } }), 404, 'not-found');
    expectProblem(await api.delete(`${base}/federated/${federated.id}`, { token: 'acme' }), 404, 'not-found');
    const after = await admin.getAccount(g.clientId);
    expect(after?.enabled).toBe(true);
    expect(after?.secrets).toEqual([expect.objectContaining({ id: g.secret.id, revokedAt: null })]);
    expect(after?.federated).toEqual([expect.objectContaining({ id: federated.id, revokedAt: null })]);
    await settle();
    expect(events).toEqual([]);
  });

  it('adds a secret (201, no-store) and revokes one, each audited with the actor and the account’s name', async () => {
    const { api, create, events } = setup();
    const a = await create('acme');
    await settle();
    events.length = 0;
    const added = await api.post(`/admin/service-accounts/${a.clientId}/secrets`, { token: 'acme' });
    expect(added.status).toBe(201);
    expect(added.headers['cache-control']).toBe('no-store');
    expect(added.body).toEqual({ id: expect.any(String), value: expect.stringMatching(/^esas_/), expiresAt: null });
    const revoked = await api.delete(`/admin/service-accounts/${a.clientId}/secrets/${a.secret.id}`, { token: 'operator' });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ clientId: a.clientId, secretId: a.secret.id, revokedAt: expect.any(String) });
    await settle();
    expect(events.map((e) => [e.type, (e as SecretEvent).secretId, (e as SecretEvent).name, (e as SecretEvent).actor])).toEqual([
      ['secret.created', added.body.id, 'billing-sync', ACME_ADMIN.actor],
      ['secret.revoked', a.secret.id, 'billing-sync', OPERATOR.actor],
    ]);
  });

  it('answers 404 for a secret ID the account does not have, even one of another account', async () => {
    const { api, create } = setup();
    const a = await create('acme');
    const b = await create('acme', { name: 'other' });
    expectProblem(await api.delete(`/admin/service-accounts/${a.clientId}/secrets/${b.secret.id}`, { token: 'acme' }), 404, 'not-found');
  });

  it('answers 409 secret-limit-reached past the live-secret limit', async () => {
    const { api, create } = setup({ maxSecretsPerAccount: 1 });
    const a = await create('acme');
    expectProblem(await api.post(`/admin/service-accounts/${a.clientId}/secrets`, { token: 'acme' }), 409, 'secret-limit-reached');
  });

  // POST /admin/service-accounts/{clientId}/federated (201) and DELETE .../federated/{credentialId}.
  it('adds a federated credential (201, no-store) and revokes it, each audited with the actor; the account lists it', async () => {
    const { api, create, events } = setup();
    const a = await create('acme');
    await settle();
    events.length = 0;
    const body = { issuer: GITHUB, subject: MAIN, audience: 'api://billing', jwksUri: `${GITHUB}/.well-known/jwks` };
    const added = await api.post(`/admin/service-accounts/${a.clientId}/federated`, { token: 'acme', body });
    expect(added.status).toBe(201);
    expect(added.headers['cache-control']).toBe('no-store');
    expect(added.body).toEqual({ id: expect.stringMatching(/^esaf_[0-9A-Za-z]{16}$/), ...body, createdAt: expect.any(String), expiresAt: null });
    const listed = await api.get(`/admin/service-accounts/${a.clientId}`, { token: 'acme' });
    expect(listed.body.federated).toEqual([{ ...added.body, lastUsedAt: null, revokedAt: null }]);
    const revoked = await api.delete(`/admin/service-accounts/${a.clientId}/federated/${added.body.id}`, { token: 'operator' });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ clientId: a.clientId, credentialId: added.body.id, revokedAt: expect.any(String) });
    await settle();
    const federatedEvents = events as FederatedCredentialEvent[];
    expect(federatedEvents.map((e) => [e.type, e.credentialId, e.issuer, e.subject, e.name, e.actor])).toEqual([
      ['federated_credential.created', added.body.id, GITHUB, MAIN, 'billing-sync', ACME_ADMIN.actor],
      ['federated_credential.revoked', added.body.id, GITHUB, MAIN, 'billing-sync', OPERATOR.actor],
    ]);
  });

  it('answers a federated credential without audience or jwksUri with audience null (the standalone admin API knows no issuer) and no jwksUri', async () => {
    const { api, create } = setup();
    const a = await create('acme');
    const added = await api.post(`/admin/service-accounts/${a.clientId}/federated`, { token: 'acme', body: { issuer: GITHUB, subject: MAIN, audience: null } });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ id: expect.any(String), issuer: GITHUB, subject: MAIN, audience: null, createdAt: expect.any(String), expiresAt: null });
  });

  it('validates the federated body against its schema and the admin API’s rules (400), naming the field', async () => {
    const { api, create, admin } = setup();
    const a = await create('acme');
    const path = `/admin/service-accounts/${a.clientId}/federated`;
    const missing = await api.post(path, { token: 'acme', body: { issuer: GITHUB } });
    expectProblem(missing, 400, 'invalid-request');
    expect(missing.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ pointer: '/subject' })]));
    expectProblem(await api.post(path, { token: 'acme', body: { issuer: GITHUB, subject: MAIN, extra: 1 } }), 400, 'invalid-request');
    expectProblem(await api.post(path, { token: 'acme' }), 400, 'invalid-request');
    const http = await api.post(path, { token: 'acme', body: { issuer: 'http://issuer.example.com', subject: MAIN } });
    expectProblem(http, 400, 'invalid-request');
    expect(http.body.detail).toMatch(/^issuer must be an https URL/);
    const pattern = await api.post(path, { token: 'acme', body: { issuer: GITHUB, subject: 'repo:acme/*' } });
    expectProblem(pattern, 400, 'invalid-request');
    expect(pattern.body.detail).toMatch(/^subject .*patterns \(\*\) are not supported/);
    expect((await admin.getAccount(a.clientId))?.federated).toEqual([]);
  });

  it('answers a duplicate federated credential with 400, past the limit with 409 and an unknown credential ID with 404', async () => {
    const { api, create } = setup({ maxSecretsPerAccount: 2 });
    const a = await create('acme');
    const path = `/admin/service-accounts/${a.clientId}/federated`;
    expect((await api.post(path, { token: 'acme', body: { issuer: GITHUB, subject: MAIN } })).status).toBe(201);
    const twin = await api.post(path, { token: 'acme', body: { issuer: GITHUB, subject: MAIN } });
    expectProblem(twin, 400, 'invalid-request');
    expect(twin.body.detail).toMatch(/already has a live federated credential/);
    expectProblem(await api.post(path, { token: 'acme', body: { issuer: GITHUB, subject: `${MAIN}2` } }), 409, 'secret-limit-reached');
    expectProblem(await api.delete(`${path}/esaf_0000000000000000`, { token: 'acme' }), 404, 'not-found');
    expectProblem(await api.delete(`${path}/${a.secret.id}`, { token: 'acme' }), 404, 'not-found');
  });

  it('disables and enables an account, each audited with the actor', async () => {
    const { api, create, events } = setup();
    const a = await create('acme');
    const off = await api.post(`/admin/service-accounts/${a.clientId}/disable`, { token: 'acme' });
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ clientId: a.clientId, enabled: false });
    expect((await api.get(`/admin/service-accounts/${a.clientId}`, { token: 'acme' })).body.enabled).toBe(false);
    const on = await api.post(`/admin/service-accounts/${a.clientId}/enable`, { token: 'acme', body: {} });
    expect(on.body).toEqual({ clientId: a.clientId, enabled: true });
    await settle();
    expect(events.slice(-2).map((e) => [e.type, (e as AccountEvent).actor])).toEqual([
      ['account.disabled', ACME_ADMIN.actor],
      ['account.enabled', ACME_ADMIN.actor],
    ]);
  });

  it('validates the create body against its schema (400 with JSON Pointers) and the admin API’s rules', async () => {
    const { api, admin } = setup();
    const missing = await api.post('/admin/service-accounts', { token: 'acme', body: { scopes: [] } });
    expectProblem(missing, 400, 'invalid-request');
    expect(missing.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ pointer: '/name' })]));
    expectProblem(await api.post('/admin/service-accounts', { token: 'acme', body: { name: 'x', role: 'owner' } }), 400, 'invalid-request');
    expectProblem(await api.post('/admin/service-accounts', { token: 'acme', type: 'json' }), 400, 'invalid-request');
    // A pasted secret is refused and not echoed (docs/security.md).
    const pasted = 'esas_0123456789abcdef_' + 'A'.repeat(43);
    const secretName = await api.post('/admin/service-accounts', { token: 'acme', body: { name: pasted } });
    expectProblem(secretName, 400, 'invalid-request');
    expect(secretName.text).not.toContain(pasted);
    expect(await admin.listAccounts()).toEqual([]);
  });

  it('refuses a body on an operation that takes none, unless it is empty or {}', async () => {
    const { api, create } = setup();
    const a = await create('acme');
    expectProblem(await api.post(`/admin/service-accounts/${a.clientId}/disable`, { token: 'acme', body: { enabled: true } }), 400, 'invalid-request');
  });

  it('refuses text that is not JSON (400) and a body over 16 KiB (413)', async () => {
    const { api } = setup();
    expectProblem(await api.post('/admin/service-accounts', { token: 'acme', type: 'application/json', raw: '{"name":' }), 400, 'invalid-request');
    const huge = JSON.stringify({ name: 'x'.repeat(17 * 1024) });
    expectProblem(await api.post('/admin/service-accounts', { token: 'acme', type: 'application/json', raw: huge }), 413, 'payload-too-large');
  });

  // RFC 9110 §15.5.2: a 401 carries WWW-Authenticate; the host names its scheme (`challenge`).
  it('answers 401 when authorize names nobody, with the configured challenge', async () => {
    const { api } = setup({ challenge: 'Bearer realm="admin"' });
    const res = await api.get('/admin/service-accounts');
    expectProblem(res, 401, 'unauthorized');
    expect(res.headers['www-authenticate']).toBe('Bearer realm="admin"');
    expectProblem(await api.post('/admin/service-accounts', { body: { name: 'x' } }), 401, 'unauthorized');
  });

  it('answers 403 when authorize returns false', async () => {
    const { api } = setup();
    expectProblem(await api.get('/admin/service-accounts', { token: 'viewer' }), 403, 'forbidden');
  });

  // Fail closed: a principal that is neither shape must not widen anyone's view.
  it('answers 500 and lets nothing through when authorize returns a malformed principal or throws', async () => {
    const malformed = { actor: { id: 'x', name: 'X' }, clientAccountId: 'acme', allClientAccounts: true } as never;
    const noTenant = { actor: { id: 'x', name: 'X' } } as never;
    const { api } = setup({ tokens: { malformed, noTenant } });
    const res = await api.get('/admin/service-accounts', { token: 'malformed' });
    expectProblem(res, 500, 'server-error');
    expectProblem(await api.get('/admin/service-accounts', { token: 'noTenant' }), 500, 'server-error');
    expect(res.text).not.toMatch(/authorize|TypeError|at /);
  });

  // A cross-site HTML form can send only urlencoded, multipart or text/plain bodies (WHATWG HTML
  // §4.10.21.8); refusing all but application/json keeps such posts from ever running an operation.
  it.each([
    ['application/x-www-form-urlencoded', 'name=x'],
    ['multipart/form-data; boundary=b', '--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--b--\r\n'],
    ['text/plain', '{"name":"x"}'],
    ['application/json; charset=iso-8859-1', '{"name":"x"}'],
  ])('refuses a %s body with 415, creating nothing', async (type, raw) => {
    const { api, admin } = setup();
    expectProblem(await api.post('/admin/service-accounts', { token: 'acme', type, raw }), 415, 'unsupported-media-type');
    expect(await admin.listAccounts()).toEqual([]);
  });

  it('refuses a form post even with an empty body on an operation that takes none (415)', async () => {
    const { api, create, admin } = setup();
    const a = await create('acme');
    const res = await api.post(`/admin/service-accounts/${a.clientId}/disable`, { token: 'acme', type: 'form', raw: '' });
    expectProblem(res, 415, 'unsupported-media-type');
    expect((await admin.getAccount(a.clientId))?.enabled).toBe(true);
  });

  // A cross-site fetch() may POST with no body and no Content-Type without a preflight (Fetch
  // "CORS-safelisted request"); browsers mark it with Sec-Fetch-Site or Origin (Fetch Metadata).
  it('accepts a body-less POST without a media type only when no browser marks it cross-origin', async () => {
    const { api, create, admin } = setup();
    const a = await create('acme');
    const path = `/admin/service-accounts/${a.clientId}/disable`;
    expectProblem(await api.post(path, { token: 'acme', headers: { 'Sec-Fetch-Site': 'cross-site' } }), 403, 'cross-origin-request');
    expectProblem(await api.post(path, { token: 'acme', headers: { 'Sec-Fetch-Site': 'same-site' } }), 403, 'cross-origin-request');
    expectProblem(await api.post(path, { token: 'acme', headers: { Origin: 'https://evil.example' } }), 403, 'cross-origin-request');
    expect((await admin.getAccount(a.clientId))?.enabled).toBe(true);
    expect((await api.post(path, { token: 'acme', headers: { 'Sec-Fetch-Site': 'same-origin' } })).status).toBe(200);
    expect((await api.post(path, { token: 'acme' })).status).toBe(200);
  });

  // The same rule for a create sent without a body: its 403 is the documented cross-origin problem.
  it('refuses a body-less create a browser marks cross-origin with 403 cross-origin-request, as documented', async () => {
    const { api, admin } = setup();
    const res = await api.post('/admin/service-accounts', { token: 'acme', headers: { 'Sec-Fetch-Site': 'cross-site' } });
    expectProblem(res, 403, 'cross-origin-request');
    expect(await admin.listAccounts()).toEqual([]);
  });

  // Fetch §3.2 (CORS protocol): without Access-Control-Allow-Origin no other origin may read the
  // answer, and a preflight without Access-Control-Allow-* lets no other origin send the request.
  it('answers preflights with Allow and no CORS headers, and never sends CORS headers', async () => {
    const { api, create } = setup();
    const a = await create('acme');
    const preflight = await api.options('/admin/service-accounts', {
      headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.allow).toBe('GET, HEAD, POST, OPTIONS');
    const read = await api.get(`/admin/service-accounts/${a.clientId}`, { token: 'acme', headers: { Origin: 'https://evil.example' } });
    for (const res of [preflight, read]) {
      expect(Object.keys(res.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
    }
    expect((await api.options(`/admin/service-accounts/${a.clientId}/secrets/x`)).headers.allow).toBe('DELETE, OPTIONS');
  });

  // RFC 9110 §15.5.6: 405 lists the allowed methods in Allow.
  it('answers 405 with Allow for a method the address does not take', async () => {
    const { api } = setup();
    const res = await api.send('PUT', '/admin/service-accounts', { token: 'acme', body: {} });
    expectProblem(res, 405, 'method-not-allowed');
    expect(res.headers.allow).toBe('GET, HEAD, POST, OPTIONS');
  });

  it('answers HEAD like GET, without a body', async () => {
    const { api } = setup();
    const res = await api.send('HEAD', '/admin/service-accounts', { token: 'acme' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  it('works behind the host’s own express.json() and express.urlencoded(), still refusing forms', async () => {
    const { api } = setup({ hostParsers: true });
    const created = await api.post('/admin/service-accounts', { token: 'acme', body: { name: 'parsed-by-host' } });
    expect(created.status).toBe(201);
    expect((await api.post(`/admin/service-accounts/${created.body.clientId}/disable`, { token: 'acme' })).status).toBe(200);
    expectProblem(await api.post('/admin/service-accounts', { token: 'acme', type: 'form', raw: 'name=x' }), 415, 'unsupported-media-type');
  });

  it('answers 503 service-unavailable while the store is down, without detail', async () => {
    const { api } = setup({ store: new FailingStore() });
    const res = await api.get('/admin/service-accounts', { token: 'acme' });
    expectProblem(res, 503, 'service-unavailable');
    expect(res.text).not.toMatch(/store unreachable|listAccounts|init/);
  });

  it('leaves other paths to the host', async () => {
    const { app } = setup();
    app.get('/admin/elsewhere', (_req, res) => {
      res.json({ host: true });
    });
    expect((await request(app).get('/admin/elsewhere')).body).toEqual({ host: true });
    expect((await request(app).get('/admin/service-accounts/a/b/c')).status).toBe(404);
  });
});
