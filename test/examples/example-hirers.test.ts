/**
 * The example server's people beside its service accounts (examples/server/human-login.ts,
 * docs/hirers-and-service-accounts.md): a person signed in at the stand-in `POST /login` and a service
 * account with a bearer token call the same routes, and the activity history names both.
 */
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CreatedAccount } from '../../src/index.js';
import { startExampleApp, type RunningExampleApp } from '../helpers/example-app.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';

describe('example server: a signed-in person and a service account on the same routes', () => {
  let running: RunningExampleApp;
  let account: CreatedAccount;
  let token: string;

  beforeEach(async () => {
    running = await startExampleApp();
    account = await running.sa.admin.createAccount({ name: 'procurement-portal', scopes: ['jobs:read', 'jobs:write'] });
    const issued = await request(running.server)
      .post('/oauth/token')
      .auth(account.clientId, account.secret.value)
      .type('form')
      .send({ grant_type: 'client_credentials' })
      .expect(200);
    token = (issued.body as { access_token: string }).access_token;
  });
  afterEach(() => running.close());

  const signIn = async (name: string) => {
    const agent = request.agent(running.server);
    const res = await agent.post('/login').type('form').send({ name }).expect(200);
    expect(res.body).toEqual({ id: 'user_ada-lovelace', name, clientAccountId: 'acme', roles: ['hirer'] });
    expect(res.headers['set-cookie']?.[0]).toMatch(/^sid=.*HttpOnly; SameSite=Strict/);
    return agent;
  };

  it('creates jobs attributed to each by name, and lists both in /api/activity', async () => {
    const ada = await signIn('Ada Lovelace');
    const byPerson = await ada.post('/api/jobs').send({ title: 'Senior welder' }).expect(201);
    expect(byPerson.body.createdBy).toEqual({ type: 'user', id: 'user_ada-lovelace', name: 'Ada Lovelace' });
    const byAccount = await request(running.server).post('/api/jobs').set('Authorization', `Bearer ${token}`).send({ title: 'Crane operator' }).expect(201);
    expect(byAccount.body.createdBy).toEqual({ type: 'service_account', clientId: account.clientId, name: 'procurement-portal' });

    for (const caller of [ada.get('/api/activity'), request(running.server).get('/api/activity').set('Authorization', `Bearer ${token}`)]) {
      const { body } = await caller.expect(200);
      const actions = (body as { action: string; actor: unknown }[]).map(({ action, actor }) => ({ action, actor }));
      expect(actions).toEqual([
        { action: 'job.created', actor: { type: 'service_account', clientId: account.clientId, name: 'procurement-portal' } },
        { action: 'job.created', actor: { type: 'user', id: 'user_ada-lovelace', name: 'Ada Lovelace' } },
        { action: 'user.signed_in', actor: { type: 'user', id: 'user_ada-lovelace', name: 'Ada Lovelace' } },
      ]);
    }
    const jobs = await ada.get('/api/jobs').expect(200);
    expect((jobs.body as { title: string }[]).map((job) => job.title)).toEqual(['Crane operator', 'Senior welder']);
  });

  // RFC 6750 §3.1: a request without any authentication information gets a challenge without an error code.
  it('answers 401 with a bare Bearer challenge to a request with neither, and after logout', async () => {
    expectOAuthError(await request(running.server).get('/api/activity'), 401, 'invalid_request', { challenge: 'Bearer realm="service-accounts", DPoP realm="service-accounts", algs="ES256 PS256"' });
    const ada = await signIn('Ada Lovelace');
    await ada.get('/api/activity').expect(200);
    await ada.post('/logout').expect(204);
    expectOAuthError(await ada.get('/api/activity'), 401, 'invalid_request', { challenge: 'Bearer realm="service-accounts", DPoP realm="service-accounts", algs="ES256 PS256"' });
  });

  it('keeps /api/whoami for tokens: it returns req.serviceAccount, which a person has not', async () => {
    const ada = await signIn('Ada Lovelace');
    await ada.get('/api/whoami').expect(401);
  });

  it('a bearer token decides even beside a session: a bad token is refused as requireBearer refuses it', async () => {
    const ada = await signIn('Ada Lovelace');
    const res = await ada.get('/api/activity').set('Authorization', 'Bearer not-a-token');
    expectOAuthError(res, 401, 'invalid_token', { challenge: /error="invalid_token"/ });
  });

  // docs/hirers-and-service-accounts.md, "Attribution": "the type and ID tell two callers of the same
  // name apart". Two people of different names are two IDs, in any script; the same name stays one.
  it('gives people of different names different IDs, whatever their script', async () => {
    const ids = new Map<string, string>();
    for (const name of ['李雷', 'Дмитрий', 'Ελένη', '!!!', '???', 'Ada']) {
      const res = await request(running.server).post('/login').send({ name }).expect(200);
      ids.set(name, (res.body as { id: string }).id);
    }
    expect(new Set(ids.values()).size).toBe(ids.size);
    expect(ids.get('Дмитрий')).toBe('user_дмитрий');
    expect(ids.get('Ada')).toBe('user_ada');
    const again = await request(running.server).post('/login').send({ name: '!!!' }).expect(200);
    expect((again.body as { id: string }).id).toBe(ids.get('!!!'));
  });

  it('refuses a login without a name', async () => {
    const res = await request(running.server).post('/login').type('form').send({}).expect(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
  });

  // The name is the actor of the person's audit lines and is shown in /api/activity: like an account
  // name (docs/security.md, "No credentials in account names, and nothing unprintable"), it may not
  // hold what rewrites a terminal or log viewer: U+009B starts an escape sequence, U+202E reverses text.
  it('refuses a login name holding control or bidirectional formatting characters', async () => {
    for (const name of ['Ada\u009B31mLovelace', 'Ada\u202Eecalevol', 'Ada\nLovelace', 'Ada\u2028Lovelace', 'Ada\uD800']) {
      const res = await request(running.server).post('/login').set('Content-Type', 'application/json').send(JSON.stringify({ name })).expect(400);
      expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('control') });
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });

  // Login CSRF: another site's page must not sign the visitor in under a name of its choosing.
  it('refuses a login posted from another site, and sets no session cookie', async () => {
    for (const headers of [{ 'Sec-Fetch-Site': 'cross-site' }, { Origin: 'https://evil.example' }]) {
      const res = await request(running.server).post('/login').set(headers).type('form').send({ name: 'Mallory' }).expect(403);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });

  // docs/hirers-and-service-accounts.md "Changes from other sites": SameSite=Strict does not stop a
  // sibling subdomain (same-site), so the session's writes refuse what a browser marks as from another
  // origin (Fetch Metadata Sec-Fetch-Site, else Origin), 403; and a write's body must be JSON, which a
  // form on another site cannot send (415).
  it('refuses a job or a logout sent by another site with the session cookie, and a body that is not JSON', async () => {
    const ada = await signIn('Ada Lovelace');
    for (const headers of [{ 'Sec-Fetch-Site': 'same-site' }, { 'Sec-Fetch-Site': 'cross-site' }, { Origin: 'https://jobs.evil.example' }]) {
      const job = await ada.post('/api/jobs').set(headers).set('Content-Type', 'text/plain').send('{"title":"Forged"}');
      expectOAuthError(job, 403, 'invalid_request', { challenge: null });
      expect((await ada.post('/logout').set(headers)).status).toBe(403);
    }
    const plain = await ada.post('/api/jobs').set('Content-Type', 'text/plain').send('{"title":"Forged"}');
    expect(plain.status).toBe(415);
    expect(plain.body).toEqual({ error: 'invalid_request', error_description: 'Send the request body as application/json' });
    expect((await ada.get('/api/jobs').expect(200)).body).toEqual([]);
    // Still signed in; from this site the same requests work.
    await ada.post('/api/jobs').set('Sec-Fetch-Site', 'same-origin').send({ title: 'Welder' }).expect(201);
    await ada.post('/api/jobs').set('Sec-Fetch-Site', 'same-origin').expect(201);
    await ada.post('/logout').set('Sec-Fetch-Site', 'same-origin').expect(204);
  });

  // The JSON-only rule is for a person's session: a service account's bearer token is not sent by a
  // browser on its own, so its form body is read as before (README: POST /api/jobs with a token).
  it('still takes a service account job sent as a form body with a bearer token', async () => {
    const job = await request(running.server).post('/api/jobs').set('Authorization', `Bearer ${token}`).type('form').send({ title: 'Rigger' }).expect(201);
    expect((job.body as { createdBy: { type: string } }).createdBy.type).toBe('service_account');
  });
});
