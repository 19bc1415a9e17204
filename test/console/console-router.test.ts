/**
 * createConsoleRouter() in-process, in Express 5 and 4: its options are checked once, texts and
 * language reach the page, `authorize`'s answer picks the page or the notice, the page's API is the
 * admin router (public keys included) with the same `authorize`, and the audit names the person.
 */
import express5 from 'express';
import express4 from 'express4';
import request from 'supertest';
import { exportSPKI, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { TEST_HS256_KEY, watchAdmin } from '../helpers/create-app.js';
import { ForwardingStore } from '../helpers/forwarding-store.js';
import { createAdminApi, createConsoleRouter, createServiceAccounts, CONSOLE_STRINGS, MemoryAccountStore, type AdminPrincipal, type AuditEvent, type CreateConsoleRouterOptions } from '../../src/index.js';

const ADA: AdminPrincipal = { actor: { id: 'u-ada', name: 'Ada <Lovelace>' }, clientAccountId: 'acme' };

function consoleApp(version: 4 | 5, options: Partial<CreateConsoleRouterOptions> = {}) {
  const events: AuditEvent[] = [];
  const admin = createAdminApi({ store: new MemoryAccountStore(), secretHashRounds: 4, onAudit: (event) => void events.push(event) });
  // The page's API shows a new secret once, in the response that creates it.
  watchAdmin(admin, 'in-its-response');
  const express = (version === 4 ? express4 : express5) as unknown as typeof express5;
  const app = express();
  const errors: unknown[] = [];
  app.use(
    '/console',
    createConsoleRouter({
      admin,
      authorize: (req) => (req.headers['x-user'] === 'ada' ? ADA : req.headers['x-user'] === 'viewer' ? false : undefined),
      onError: (error) => void errors.push(error),
      ...options,
    }),
  );
  app.use((_req, res) => void res.status(404).json({ error: 'not_found' }));
  return { app, admin, events, errors };
}

describe.each([5, 4] as const)('createConsoleRouter in Express %i', (version) => {
  it('serves the page with the signed-in person, escaped, and the host’s texts and language', async () => {
    const { app } = consoleApp(version, { strings: { title: 'Dienstkonten', signedInAs: 'Angemeldet als {name}' }, lang: 'de', stylesheet: '/theme.css' });
    const res = await request(app).get('/console/').set('x-user', 'ada').expect(200);
    expect(res.text).toContain('<html lang="de">');
    expect(res.text).toContain('<title>Dienstkonten</title>');
    expect(res.text).toContain('Angemeldet als Ada &lt;Lovelace&gt;');
    expect(res.text).toContain('<link rel="stylesheet" href="/theme.css">');
    const strings = JSON.parse(/data-strings="([^"]*)"/.exec(res.text)![1]!.replace(/&quot;/g, '"').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#39;/g, "'"));
    expect(strings).toEqual({ ...CONSOLE_STRINGS, title: 'Dienstkonten', signedInAs: 'Angemeldet als {name}' });
  });

  it('tells the page the server\'s maxCredentialLifetime, when the admin API has one', async () => {
    const { app } = consoleApp(version);
    expect((await request(app).get('/console/').set('x-user', 'ada').expect(200)).text).not.toContain('data-max-credential-lifetime');
    const bounded = consoleApp(version, { admin: createAdminApi({ store: new MemoryAccountStore(), secretHashRounds: 4, maxCredentialLifetime: 45 * 86_400 }) });
    const res = await request(bounded.app).get('/console/').set('x-user', 'ada').expect(200);
    expect(res.text).toContain(' data-max-credential-lifetime="3888000"');
  });

  it('tells the page the longest token lifetime an account may be given, and that DPoP is off when the server has it off', async () => {
    const { app } = consoleApp(version, { admin: createAdminApi({ store: new MemoryAccountStore(), secretHashRounds: 4, maxAccessTokenLifetime: 7200 }) });
    const page = (await request(app).get('/console/').set('x-user', 'ada').expect(200)).text;
    expect(page).toContain(' data-max-access-token-lifetime="7200"');
    expect(page).not.toContain('data-dpop');
    const sa = createServiceAccounts({ store: new MemoryAccountStore(), issuer: 'https://api.example.com', signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY }], secretHashRounds: 4, dpop: false });
    expect(sa.admin.dpopAvailable).toBe(false);
    const off = consoleApp(version, { admin: sa.admin });
    expect((await request(off.app).get('/console/').set('x-user', 'ada').expect(200)).text).toContain(' data-dpop="off"');
  });

  it('tells the page what a host\'s own store cannot hold: keys, federated credentials, a token policy, an expiry', async () => {
    const { app, admin } = consoleApp(version);
    const all = { keys: true, federated: true, accountPolicy: true, resources: true, credentialExpiry: true, claimConditions: true, tokenRevocation: true };
    expect(admin.supports).toEqual(all);
    expect((await request(app).get('/console/').set('x-user', 'ada').expect(200)).text).not.toContain('data-store-lacks');
    // ForwardingStore has the required store methods only (docs/writing-a-store.md).
    const secretsOnly = createAdminApi({ store: new ForwardingStore(new MemoryAccountStore()), secretHashRounds: 4 });
    expect(secretsOnly.supports).toEqual(Object.fromEntries(Object.keys(all).map((what) => [what, false])));
    const lean = consoleApp(version, { admin: secretsOnly });
    expect((await request(lean.app).get('/console/').set('x-user', 'ada').expect(200)).text).toContain(' data-store-lacks="keys federated accountPolicy credentialExpiry"');
  });

  it('tells the page which refusal texts the host gave, and only those', async () => {
    // docs/console.md, "Translation": "Give the refusal texts, one per kind of refusal, and the page shows yours for that kind instead".
    const plain = consoleApp(version, { strings: { title: 'Dienstkonten' } });
    expect((await request(plain.app).get('/console/').set('x-user', 'ada').expect(200)).text).not.toContain('data-own-refusals');
    // "A text counts as yours when it differs from its default, so spreading CONSOLE_STRINGS into your object keeps the server's words."
    const spread = consoleApp(version, { strings: { ...CONSOLE_STRINGS, title: 'My accounts', refusedNotFound: 'Gone.' } });
    expect((await request(spread.app).get('/console/').set('x-user', 'ada').expect(200)).text).toContain(' data-own-refusals="refusedNotFound"');
    const translated = consoleApp(version, { strings: { refusedLimit: 'Zu viele Zugangsdaten.', refusedInvalid: 'Ungültig.' } });
    const page = (await request(translated.app).get('/console/').set('x-user', 'ada').expect(200)).text;
    expect(page).toContain(' data-own-refusals="refusedInvalid refusedLimit"');
    expect(page).toContain('Zu viele Zugangsdaten.');
  });

  it('sends its security headers with every answer: the page, a notice, a file, a redirect, a refused method, its API', async () => {
    // docs/console.md: "Every answer of the router carries: Content-Security-Policy ... X-Frame-Options: DENY".
    const { app } = consoleApp(version);
    const answers = [
      request(app).get('/console/').set('x-user', 'ada').expect(200),
      request(app).get('/console/').expect(401),
      request(app).get('/console/console.js').expect(200),
      request(app).get('/console').set('x-user', 'ada').expect(301),
      request(app).post('/console/').set('x-user', 'ada').expect(405),
      request(app).get('/console/api/service-accounts').set('x-user', 'ada').expect(200),
    ];
    for (const res of await Promise.all(answers)) {
      expect(res.headers['content-security-policy'], `${res.status}`).toContain("default-src 'self'");
      expect(res.headers['x-frame-options'], `${res.status}`).toBe('DENY');
      expect(res.headers['x-content-type-options'], `${res.status}`).toBe('nosniff');
    }
  });

  it('answers 401, 403 and 500 pages by what authorize says, and tells onError of the 500', async () => {
    const { app, errors } = consoleApp(version);
    await request(app).get('/console/').expect(401).expect('content-type', 'text/html; charset=utf-8');
    const refused = await request(app).get('/console/').set('x-user', 'viewer').expect(403);
    expect(refused.text).toContain('<h1>You may not manage service accounts</h1>');
    const api = await request(app).get('/console/api/service-accounts').set('x-user', 'viewer').expect(403);
    expect(api.headers['content-type']).toBe('application/problem+json');
    const failing = consoleApp(version, { authorize: () => { throw new Error('session store down'); } });
    const res = await request(failing.app).get('/console/').expect(500);
    expect(res.text).toContain('Something went wrong');
    expect(res.text).not.toContain('session store down');
    expect(failing.errors).toEqual([new Error('session store down')]);
    expect(errors).toEqual([]);
  });

  it('passes other paths and methods on, and serves only its two files', async () => {
    const { app } = consoleApp(version);
    await request(app).get('/console/other').expect(404, { error: 'not_found' });
    await request(app).get('/console/../package.json').expect(404);
    await request(app).post('/console/').set('x-user', 'ada').expect(405).expect('allow', 'GET, HEAD');
    await request(app).get('/console/console.css').expect(200).expect('content-type', 'text/css; charset=utf-8');
  });

  it('runs the admin router under /api with the same authorize: public keys too, audited with the person', async () => {
    const { app, events } = consoleApp(version);
    await request(app).get('/console/api/service-accounts').expect(401);
    const created = await request(app).post('/console/api/service-accounts').set('x-user', 'ada').send({ name: 'billing-sync' }).expect(201);
    const clientId = (created.body as { clientId: string }).clientId;
    expect(created.headers.location).toBe(`/console/api/service-accounts/${clientId}`);
    const pem = await exportSPKI((await generateKeyPair('ES256', { extractable: true })).publicKey);
    const key = await request(app).post(`/console/api/service-accounts/${clientId}/keys`).set('x-user', 'ada').send({ publicKey: pem }).expect(201);
    const keyId = (key.body as { id: string }).id;
    await request(app).delete(`/console/api/service-accounts/${clientId}/keys/${keyId}`).set('x-user', 'ada').send({}).expect(200);
    expect(events.filter((e) => e.type.startsWith('key.')).map((e) => [e.type, (e as { actor?: unknown }).actor])).toEqual([
      ['key.created', ADA.actor],
      ['key.revoked', ADA.actor],
    ]);
    const doc = await request(app).get('/console/api/openapi.json').expect(200);
    expect(Object.keys((doc.body as { paths: object }).paths)).toContain('/console/api/service-accounts/{clientId}/keys');
  });
});

describe('createConsoleRouter options', () => {
  const admin = createAdminApi({ store: new MemoryAccountStore() });
  const authorize = () => undefined;
  it.each([
    [{ colour: 'red' }, /option "colour" is not a known option/],
    [{ strings: { titel: 'x' } }, /option "strings.titel" is not a text of the page/],
    [{ strings: { title: 3 } }, /option "strings.title" must be a string/],
    [{ lang: 'en"><script>' }, /option "lang" must be a language tag/],
    [{ signInUrl: '//evil.example/login' }, /option "signInUrl" must be a path on your site/],
    [{ signInUrl: 'javascript:alert(1)' }, /option "signInUrl"/],
    [{ stylesheet: 'https://cdn.example/theme.css' }, /option "stylesheet" must be a path on your site/],
    [{ authorize: 'yes' }, /authorize/],
  ])('refuses %j at creation', (extra, message) => {
    expect(() => createConsoleRouter({ admin, authorize, ...(extra as object) } as CreateConsoleRouterOptions)).toThrow(message);
  });
});
