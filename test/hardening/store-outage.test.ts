/**
 * CONTRACT §2 "the store is unreachable → 503 temporarily_unavailable, nothing is issued" and §3
 * "the store is unreachable → 503, never lets the request through". A store that throws or hangs
 * (never settles) is answered within `storeTimeout`, and service resumes without a restart once the
 * store answers again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryAccountStore } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { json, listen, tokenRequest, UnreliableStore, type LiveServer, type RawResponse } from './helpers.js';

function expect503(res: RawResponse): void {
  expect(res.status).toBe(503);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(json(res)).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
  // The store's own error (host names, credentials) never reaches the client.
  expect(res.text).not.toMatch(/ECONNREFUSED|hunter2|10\.0\.0\.5|timed out|findAccount/);
  expect(JSON.stringify(res.headers)).not.toMatch(/hunter2|ECONNREFUSED/);
}

const servers: LiveServer[] = [];
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await Promise.all(closers.splice(0).map((c) => c()));
});

describe('the token endpoint when the account store fails or hangs', () => {
  for (const mode of ['fail', 'hang'] as const) {
    it(`answers 503 when the store ${mode === 'fail' ? 'throws' : 'never answers'}, issues nothing, and recovers without a restart`, async () => {
      const store = new UnreliableStore();
      const { app, sa, events } = createTestApp({ store, storeTimeout: 200 });
      closers.push(() => sa.close());
      const account = await sa.admin.createAccount({ name: 'outage' });
      const server = await listen(app);
      servers.push(server);
      const right = { grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value };

      store.mode = mode;
      // The responses arrive while the store is still down: the deadline answered them.
      expect503(await tokenRequest(server, right));
      expect503(await tokenRequest(server, { ...right, client_id: 'esa_unknownunknownunknown1' }));
      expect(events.some((e) => e.type === 'token.issued')).toBe(false);

      store.mode = 'ok';
      const res = await tokenRequest(server, right);
      expect(res.status).toBe(200);
      expect(json(res)).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    });
  }

  it('does not count a 503 as a failed authentication', async () => {
    const store = new UnreliableStore();
    const { app, sa } = createTestApp({ store, storeTimeout: 200, failureLimit: { max: 1 } });
    closers.push(() => sa.close());
    const account = await sa.admin.createAccount({ name: 'outage-limit' });
    const server = await listen(app);
    servers.push(server);
    const right = { grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value };
    store.mode = 'fail';
    for (let i = 0; i < 3; i++) expect503(await tokenRequest(server, right));
    store.mode = 'ok';
    expect((await tokenRequest(server, right)).status).toBe(200);
  });
});

describe('requireBearer when the account store fails or hangs', () => {
  it('answers 503 and never lets the request through, then admits again once the store answers', async () => {
    const shared = new MemoryAccountStore();
    // Instance A issues the token; instance B (same keyring, same data, a store that can fail) checks it.
    const a = createTestApp({ store: shared });
    closers.push(() => a.sa.close());
    const account = await a.sa.admin.createAccount({ name: 'bearer-outage' });
    const serverA = await listen(a.app);
    servers.push(serverA);
    const issued = await tokenRequest(serverA, { grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });
    const token = (json(issued) as { access_token: string }).access_token;

    const unreliable = new UnreliableStore(shared);
    const b = createTestApp({ store: unreliable, storeTimeout: 200 });
    closers.push(() => b.sa.close());
    let reached = 0;
    b.app.get('/api/counted', b.sa.requireBearer(), (_req, res) => {
      reached++;
      res.json({ ok: true });
    });
    const serverB = await listen(b.app);
    servers.push(serverB);
    const call = () => serverB.request({ path: '/api/counted', headers: { authorization: `Bearer ${token}` } });

    unreliable.mode = 'fail';
    expect503(await call());
    unreliable.mode = 'hang';
    expect503(await call());
    expect503(await serverB.request({ path: '/api/whoami', headers: { authorization: `Bearer ${token}` } }));
    expect(reached).toBe(0);

    unreliable.mode = 'ok';
    const res = await call();
    expect(res.status).toBe(200);
    expect(reached).toBe(1);
  });
});
