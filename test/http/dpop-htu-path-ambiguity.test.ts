/**
 * RFC 9449 §4.3 step 9 and §11.1: a proof's `htu` binds it to one URL, so a captured proof cannot be
 * sent to another route. The `htu` comparison normalises as RFC 3986 §6.2.2 says (dot segments, and
 * WHATWG URL parsing reads `\` as `/`), but Express routes the raw path: `/api/jobs/../whoami` and
 * `/api/jobs\..\whoami` reach other handlers than `/api/whoami`. A request path that URL parsing would
 * rewrite that way never matches a proof: a proof for `/api/whoami` is refused there.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import { type CreatedAccount } from '../../src/index.js';
import { createTestApp, TEST_ISSUER } from '../helpers/create-app.js';
import { DpopKey } from '../helpers/dpop-proofs.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';

describe.each([5, 4] as const)('DPoP htu and paths Express routes as written (Express %i)', (version) => {
  let t: ReturnType<typeof createTestApp>;
  let account: CreatedAccount;
  let key: DpopKey;
  const now = () => Math.floor(t.clock.now().getTime() / 1000);

  const boundToken = async (): Promise<string> => {
    const res = await request(t.app)
      .post('/oauth/token')
      .type('form')
      .set('DPoP', await key.proof({ htu: `${TEST_ISSUER}/oauth/token`, iat: now() }))
      .send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value, scope: 'jobs:read' });
    expect(res.status, res.text).toBe(200);
    return res.body.access_token as string;
  };

  beforeEach(async () => {
    t = createTestApp({ express: version, dpop: { origins: [TEST_ISSUER] } });
    account = await t.sa.admin.createAccount({ name: 'billing-sync', scopes: ['jobs:read'] });
    key = await DpopKey.create();
  });

  it.each(['/api/jobs/../whoami', '/api/jobs/%2e%2e/whoami', '/api/jobs/.%2E/whoami'])(
    'a proof for GET /api/whoami is refused at %s, which Express routes to /api/jobs/:id/whoami',
    async (path) => {
      let ran = false;
      t.app.get('/api/jobs/:id/whoami', t.sa.requireBearer(), (_req, res) => {
        ran = true;
        res.json({ other: true });
      });
      const token = await boundToken();
      const proof = await key.proof({ htm: 'GET', htu: `${TEST_ISSUER}/api/whoami`, iat: now(), accessToken: token });
      const res = await request(t.app).get(path).set('Authorization', `DPoP ${token}`).set('DPoP', proof);
      expectOAuthError(res, 401, 'invalid_dpop_proof');
      expect(ran).toBe(false);
      // The proof was not used up: its own URL still takes it.
      expect((await request(t.app).get('/api/whoami').set('Authorization', `DPoP ${token}`).set('DPoP', proof)).status).toBe(200);
    },
  );

  // Express matches routes on the path as written and decodes only the parameters it captures.
  it.each(['/api/payouts/pr%65view', '/api/payouts/pr%65vie%77', '/api/payouts/%70review', '/api/payouts/pre%76iew'])(
    'a proof for GET /api/payouts/preview is refused at %s, which Express routes to /api/payouts/:id',
    async (path) => {
      const ran: string[] = [];
      t.app.get('/api/payouts/preview', t.sa.requireBearer(), (_req, res) => void res.json(ran.push('preview')));
      t.app.get('/api/payouts/:id', t.sa.requireBearer(), (req, res) => void res.json(ran.push(`:id ${req.params.id}`)));
      const token = await boundToken();
      const proof = await key.proof({ htm: 'GET', htu: `${TEST_ISSUER}/api/payouts/preview`, iat: now(), accessToken: token });
      const res = await request(t.app).get(path).set('Authorization', `DPoP ${token}`).set('DPoP', proof);
      expectOAuthError(res, 401, 'invalid_dpop_proof');
      expect(ran).toEqual([]);
      // The proof was not used up: its own URL still takes it.
      expect((await request(t.app).get('/api/payouts/preview').set('Authorization', `DPoP ${token}`).set('DPoP', proof)).status).toBe(200);
      expect(ran).toEqual(['preview']);
    },
  );

  it('a proof for GET /api/whoami is refused at /api/jobs\\..\\whoami (URL parsing reads \\ as /; Express does not)', async () => {
    let ran = false;
    t.app.get('/api/:name', t.sa.requireBearer(), (_req, res) => {
      ran = true;
      res.json({ other: true });
    });
    const token = await boundToken();
    const proof = await key.proof({ htm: 'GET', htu: `${TEST_ISSUER}/api/whoami`, iat: now(), accessToken: token });
    // Sent as written: supertest (WHATWG URL) would turn the path into /api/whoami before sending it.
    const server = t.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port, method: 'GET', path: '/api/jobs\\..\\whoami', headers: { Authorization: `DPoP ${token}`, DPoP: proof } }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        });
        req.on('error', reject);
        req.end();
      });
      expect(answer.status, answer.body).toBe(401);
      expect(JSON.parse(answer.body).error).toBe('invalid_dpop_proof');
      expect(ran).toBe(false);
    } finally {
      server.close();
    }
  });

  it('the same at the token endpoint: a request path with dot segments does not match the proof', async () => {
    t.app.post('/oauth/x/../token', (_req, res) => void res.status(418).end());
    const res = await request(t.app)
      .post('/oauth/x/%2e%2e/token')
      .type('form')
      .set('DPoP', await key.proof({ htu: `${TEST_ISSUER}/oauth/token`, iat: now() }))
      .send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });
    // Whatever answers this path, a proof for /oauth/token never yields a token there.
    expect(res.body.access_token).toBeUndefined();
  });

  it('a proof whose own htu has dot segments still names the URL they resolve to (RFC 3986 §6.2.2.3)', async () => {
    const token = await boundToken();
    const proof = await key.proof({ htm: 'GET', htu: `${TEST_ISSUER}/api/jobs/../whoami`, iat: now(), accessToken: token });
    expect((await request(t.app).get('/api/whoami').set('Authorization', `DPoP ${token}`).set('DPoP', proof)).status).toBe(200);
  });
});
