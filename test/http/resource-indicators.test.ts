/**
 * Tokens for one API (RFC 8707 resource indicators), over HTTP: the token endpoint's `resource` (and
 * `audience`, as Auth0's clients send it) picks the token's `aud` among its account's resources;
 * `requireBearer({ audience })` refuses tokens made for another API; introspection reports `aud`.
 * Accounts without resources and routes without an audience behave as before. One `it` per rule,
 * each quoting the clause it checks; time comes from the injected TestClock.
 */
import express from 'express';
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryAccountStore, type CreatedAccount } from '../../src/index.js';
import { ForwardingStore } from '../helpers/forwarding-store.js';
import { createTestApp, TEST_ISSUER } from '../helpers/create-app.js';
import { expectNoStore, expectOAuthError } from '../helpers/expect-oauth-error.js';
import { basicHeader, decodeToken } from '../helpers/tokens.js';

const BILLING = 'https://billing.example.com';
const REPORTS = 'reports';

describe('resource indicators (RFC 8707)', () => {
  let t: ReturnType<typeof createTestApp>;
  /** Allowed the billing API only. */
  let billing: CreatedAccount;
  /** Allowed two APIs. */
  let both: CreatedAccount;
  /** No resources: tokens for the server's audience, as before resources existed. */
  let plain: CreatedAccount;

  beforeEach(async () => {
    t = createTestApp();
    billing = await t.sa.admin.createAccount({ name: 'billing-exporter', resources: [BILLING] });
    both = await t.sa.admin.createAccount({ name: 'reporting', resources: [BILLING, REPORTS] });
    plain = await t.sa.admin.createAccount({ name: 'batch-importer' });
    t.app.get('/billing/invoices', t.sa.requireBearer({ audience: BILLING }), (req, res) => res.json({ by: req.serviceAccount?.name }));
    t.app.get('/reports', t.sa.requireBearer({ audience: REPORTS }), (req, res) => res.json({ by: req.serviceAccount?.name }));
  });

  const tokenRequest = (who: CreatedAccount, fields: Record<string, string | string[]> = {}) =>
    request(t.app)
      .post('/oauth/token')
      .set('Authorization', basicHeader(who.clientId, who.secret.value))
      .type('form')
      .send({ grant_type: 'client_credentials', ...fields });
  const tokenFor = async (who: CreatedAccount, fields: Record<string, string> = {}): Promise<string> => {
    const res = await tokenRequest(who, fields);
    expect(res.status).toBe(200);
    return (res.body as { access_token: string }).access_token;
  };
  const call = (path: string, token: string) => request(t.app).get(path).set('Authorization', `Bearer ${token}`);

  // RFC 8707 §2: "the authorization server ... audience-restricts the issued access token to the
  // requested resource"; RFC 9068 §2.2: `aud` is the resource.
  it('issues a token whose aud is the requested resource', async () => {
    const token = await tokenFor(both, { resource: REPORTS });
    expect(decodeToken(token).payload.aud).toBe(REPORTS);
  });

  // RFC 8707 §2: the server may use a default resource when the client names none; with exactly one
  // allowed, that one is the only sensible default.
  it('with no resource asked and one allowed, issues a token for that one', async () => {
    expect(decodeToken(await tokenFor(billing)).payload.aud).toBe(BILLING);
  });

  // RFC 8707 §2 lets the server pick a default; with several allowed, guessing could hand one API's
  // token to another, so the client must name one.
  it('with no resource asked and several allowed, refuses with invalid_target saying to name one', async () => {
    const res = await tokenRequest(both);
    expectOAuthError(res, 400, 'invalid_target');
    expectNoStore(res);
    expect((res.body as { error_description: string }).error_description).toMatch(/name one with the resource parameter/);
  });

  // RFC 8707 §2: "invalid_target: The requested resource is invalid, missing, unknown, or malformed."
  it('refuses a resource the account is not allowed with 400 invalid_target', async () => {
    const res = await tokenRequest(billing, { resource: 'https://payroll.example.com' });
    expectOAuthError(res, 400, 'invalid_target');
    expect((res.body as { error_description: string }).error_description).toBe('This client may not get tokens for the requested resource');
  });

  // Auth0's clients send `audience` for the same purpose; it is read as `resource`.
  it('reads audience as resource', async () => {
    expect(decodeToken(await tokenFor(both, { audience: BILLING })).payload.aud).toBe(BILLING);
    expectOAuthError(await tokenRequest(billing, { audience: REPORTS }), 400, 'invalid_target');
  });

  it('refuses resource and audience that name different APIs with invalid_request; the same one twice is fine', async () => {
    expectOAuthError(await tokenRequest(both, { resource: BILLING, audience: REPORTS }), 400, 'invalid_request');
    expect(decodeToken(await tokenFor(both, { resource: REPORTS, audience: REPORTS })).payload.aud).toBe(REPORTS);
  });

  // RFC 8707 §2: a client "MAY" repeat `resource`; a token here is for one API (one `aud`), and
  // invalid_target is the error for a target the server will not serve.
  it('refuses a repeated resource with invalid_target', async () => {
    const res = await tokenRequest(both, { resource: [BILLING, REPORTS] });
    expectOAuthError(res, 400, 'invalid_target');
  });

  // Accounts without resources keep working as before: tokens for the server's audience, accepted by
  // routes that name no audience; naming the server's audience is the same request.
  it('gives an account without resources tokens for the server audience, as before', async () => {
    const token = await tokenFor(plain);
    expect(decodeToken(token).payload.aud).toBe(TEST_ISSUER);
    await call('/api/whoami', token).expect(200);
    expect(decodeToken(await tokenFor(plain, { resource: TEST_ISSUER })).payload.aud).toBe(TEST_ISSUER);
    expectOAuthError(await tokenRequest(plain, { resource: BILLING }), 400, 'invalid_target');
  });

  // RFC 9068 §4: the resource server "MUST validate that the aud claim contains a resource indicator
  // value corresponding to an identifier the resource server expects for itself" (RFC 6750 §3.1 invalid_token).
  it('requireBearer({ audience }) accepts tokens for its API and refuses tokens for another with 401 invalid_token', async () => {
    const forBilling = await tokenFor(both, { resource: BILLING });
    const forReports = await tokenFor(both, { resource: REPORTS });
    await call('/billing/invoices', forBilling).expect(200, { by: 'reporting' });
    await call('/reports', forReports).expect(200, { by: 'reporting' });
    const refused = await call('/billing/invoices', forReports);
    expectOAuthError(refused, 401, 'invalid_token', { challenge: /^Bearer realm="[^"]*", error="invalid_token", error_description="The access token was issued for another API/ });
    expect((refused.body as { error_description: string }).error_description).toMatch(/issued for another API/);
    expect(t.events).toContainEqual(expect.objectContaining({ type: 'token.refused', reason: 'wrong_audience', clientId: both.clientId }));
  });

  // A route that names no audience requires the server's audience (the `audience` option), as it always did.
  it('a route without an audience refuses a token made for a resource, and one for the server audience is refused by a resource route', async () => {
    expectOAuthError(await call('/api/whoami', await tokenFor(billing)), 401, 'invalid_token');
    expectOAuthError(await call('/billing/invoices', await tokenFor(plain)), 401, 'invalid_token');
  });

  // The host's default audience for every route is the `audience` option of createServiceAccounts.
  it('the audience option is the default audience of every route', async () => {
    const host = createTestApp({ audience: BILLING });
    const account = await host.sa.admin.createAccount({ name: 'default-api' });
    const app = express();
    app.use('/oauth', host.sa.tokenRouter);
    app.get('/invoices', host.sa.requireBearer(), (_req, res) => res.json({ ok: true }));
    const res = await request(app).post('/oauth/token').set('Authorization', basicHeader(account.clientId, account.secret.value)).type('form').send({ grant_type: 'client_credentials' });
    const token = (res.body as { access_token: string }).access_token;
    expect(decodeToken(token).payload.aud).toBe(BILLING);
    await request(app).get('/invoices').set('Authorization', `Bearer ${token}`).expect(200);
  });

  it('taking a resource off an account refuses its tokens for that resource', async () => {
    const token = await tokenFor(both, { resource: REPORTS });
    await call('/reports', token).expect(200);
    expect(await t.sa.admin.setResources(both.clientId, [BILLING])).toEqual({ clientId: both.clientId, resources: [BILLING] });
    expectOAuthError(await call('/reports', token), 401, 'invalid_token');
    expectOAuthError(await tokenRequest(both, { resource: REPORTS }), 400, 'invalid_target');
    expect(decodeToken(await tokenFor(both)).payload.aud).toBe(BILLING);
  });

  it('giving an account resources refuses its earlier tokens for the server audience', async () => {
    const token = await tokenFor(plain);
    await call('/api/whoami', token).expect(200);
    await t.sa.admin.setResources(plain.clientId, [BILLING]);
    expectOAuthError(await call('/api/whoami', token), 401, 'invalid_token');
    await call('/billing/invoices', await tokenFor(plain)).expect(200);
  });

  // RFC 7662 §2.2: "aud OPTIONAL ... the intended audience for this token".
  it('introspection reports the aud of a token made for a resource', async () => {
    const gateway = await t.sa.admin.createAccount({ name: 'api-gateway', scopes: ['token:introspect'] });
    const token = await tokenFor(both, { resource: REPORTS });
    const res = await request(t.app)
      .post('/oauth/introspect')
      .set('Authorization', basicHeader(gateway.clientId, gateway.secret.value))
      .type('form')
      .send({ token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ active: true, aud: REPORTS, client_id: both.clientId });
  });

  // An audit trail answers "what was it before?": which API an account lost, or gained.
  it('audits a change of resources with the list before it and after it', async () => {
    await t.sa.admin.setResources(both.clientId, [BILLING]);
    await t.sa.admin.setResources(both.clientId, []);
    await new Promise((resolve) => setImmediate(resolve));
    expect(t.events.filter((event) => event.type === 'account.resources_changed')).toEqual([
      expect.objectContaining({ clientId: both.clientId, resources: [BILLING], before: { resources: [BILLING, REPORTS] } }),
      expect.objectContaining({ clientId: both.clientId, resources: [], before: { resources: [BILLING] } }),
    ]);
  });

  it('the token.issued audit event names the audience', async () => {
    await tokenFor(billing);
    expect(t.events).toContainEqual(expect.objectContaining({ type: 'token.issued', clientId: billing.clientId, audience: BILLING }));
  });

  // A store written before resources existed cannot keep them: giving an account resources there would
  // silently leave its tokens good for the server's audience, so the admin API refuses.
  it('a store without setAccountResources: accounts without resources work, resources are refused', async () => {
    const old = createTestApp({ store: new ForwardingStore(new MemoryAccountStore()) });
    const account = await old.sa.admin.createAccount({ name: 'old-store' });
    expect(account.resources).toEqual([]);
    await expect(old.sa.admin.createAccount({ name: 'x', resources: [BILLING] })).rejects.toThrow(/cannot hold account resources/);
    await expect(old.sa.admin.setResources(account.clientId, [BILLING])).rejects.toThrow(/cannot hold account resources/);
  });

  it('the admin API refuses malformed resources with invalid_input', async () => {
    for (const resources of [['https://a.example/#x'], ['two words'], [''], ['x'.repeat(513)], Array.from({ length: 21 }, (_, i) => `api-${i}`)]) {
      await expect(t.sa.admin.createAccount({ name: 'bad', resources })).rejects.toMatchObject({ code: 'invalid_input' });
    }
    await expect(t.sa.admin.setResources(billing.clientId, ['https://a.example/#x'])).rejects.toMatchObject({ code: 'invalid_input' });
  });

  // RFC 3986 §2.1: pct-encoded = "%" HEXDIG HEXDIG; §3.2.1: "user:password" in the userinfo is
  // deprecated. A resource becomes every token's `aud`, readable by the client and each API it calls,
  // and is shown in listings and audit events: a password in it would be published.
  it('the admin API refuses a resource that is not a URI (a bare %) or carries user information', async () => {
    for (const resource of ['https://a.example/%zz', 'https://a.example/100%', 'https://user:pass@a.example', 'https://user@a.example/']) {
      await expect(t.sa.admin.setResources(billing.clientId, [resource]), resource).rejects.toMatchObject({ code: 'invalid_input' });
    }
    for (const resource of ['https://a.example/caf%C3%A9', 'mailto:billing@a.example', 'urn:example:billing']) {
      await expect(t.sa.admin.setResources(billing.clientId, [resource]), resource).resolves.toEqual({ clientId: billing.clientId, resources: [resource] });
    }
    expect(() => t.sa.requireBearer({ audience: 'https://user:pass@a.example' })).toThrow(TypeError);
  });

  it('refuses a bad audience option of requireBearer at start-up', () => {
    expect(() => t.sa.requireBearer({ audience: 'https://a.example/#x' })).toThrow(TypeError);
    expect(() => t.sa.requireBearer({ audience: 'two words' })).toThrow(TypeError);
  });
});
