/**
 * SPEC §1 and §5.7: the flow is for confidential backend clients, not browsers. CONTRACT §2: "a
 * request a browser marks (an Origin or Sec-Fetch-Site header) → 400 invalid_request; no CORS
 * headers are ever sent; configurable". Node's own fetch sends `Sec-Fetch-Mode: cors` on every
 * request, so that header must not count as a browser mark.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/create-app.js';
import { listen, listenRecordingHeaders, type LiveServer, type RawResponse, type RecordingApp } from './helpers.js';

const noCors = (headers: Record<string, unknown>): string[] => Object.keys(headers).filter((h) => h.toLowerCase().startsWith('access-control-'));

describe('the token endpoint is not for browsers', () => {
  let server: LiveServer;
  let close: () => Promise<void>;
  let clientId: string;
  let secret: string;
  let seen: RecordingApp['seen'];

  beforeAll(async () => {
    const { sa } = createTestApp({ failureLimit: { max: 2 } });
    const account = await sa.admin.createAccount({ name: 'backend' });
    clientId = account.clientId;
    secret = account.secret.value;
    ({ server, seen, close } = await listenRecordingHeaders(sa));
  });
  afterAll(async () => close?.());

  const form = () => new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret });

  it("answers Node's own fetch (Sec-Fetch-Mode: cors) 200 from a real listening server", async () => {
    const res = await fetch(`${server.url}/oauth/token`, { method: 'POST', body: form() });
    expect(res.status).toBe(200);
    expect(seen.at(-1)?.['sec-fetch-mode']).toBe('cors');
    expect(noCors(Object.fromEntries(res.headers))).toEqual([]);
    const { access_token: token } = (await res.json()) as { access_token: string };
    const api = await fetch(`${server.url}/api/whoami`, { headers: { authorization: `Bearer ${token}` } });
    expect(api.status).toBe(200);
    expect(noCors(Object.fromEntries(api.headers))).toEqual([]);
  });

  it('refuses a request with an Origin or a Sec-Fetch-Site header, 400 invalid_request, without CORS headers', async () => {
    const marks: Array<Record<string, string>> = [{ origin: 'https://evil.example' }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-origin' }];
    for (const headers of marks) {
      const res = await fetch(`${server.url}/oauth/token`, { method: 'POST', body: form(), headers });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
      expect(noCors(Object.fromEntries(res.headers))).toEqual([]);
    }
  });

  it('answers a CORS preflight (OPTIONS) 405 with Allow: POST and no Access-Control-* header', async () => {
    const res = await server.request({
      method: 'OPTIONS',
      path: '/oauth/token',
      headers: {
        origin: 'https://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(noCors(res.headers)).toEqual([]);
  });

  it('sends no Access-Control-* header on any answer (200, 400, 401, 405, 413, 429)', async () => {
    const answers: RawResponse[] = [];
    const post = (body: string, headers: Record<string, string> = {}) =>
      server.request({ method: 'POST', path: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://app.example', ...headers }, body });
    answers.push(await post(form().toString(), {}));
    answers.push(await server.request({ method: 'POST', path: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form().toString() }));
    answers.push(await server.request({ method: 'POST', path: '/oauth/token', headers: { 'content-type': 'application/json' }, body: '{' }));
    answers.push(await server.request({ method: 'GET', path: '/oauth/token', headers: { origin: 'https://app.example' } }));
    answers.push(await server.request({ method: 'POST', path: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a='.padEnd(20_000, 'x') }));
    for (let i = 0; i < 3; i++) {
      answers.push(await server.request({ method: 'POST', path: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `grant_type=client_credentials&client_id=${clientId}&client_secret=wrong` }));
    }
    answers.push(await server.request({ method: 'GET', path: '/api/whoami', headers: { origin: 'https://app.example', authorization: 'Bearer nope' } }));
    expect(new Set(answers.map((r) => r.status))).toEqual(new Set([400, 200, 405, 413, 401, 429]));
    for (const res of answers) expect(noCors(res.headers)).toEqual([]);
  });

  it('accepts browser-marked requests only when allowBrowserRequests is set, still without CORS headers', async () => {
    const { app, sa } = createTestApp({ allowBrowserRequests: true });
    const account = await sa.admin.createAccount({ name: 'opted-in' });
    const live = await listen(app);
    const res = await fetch(`${live.url}/oauth/token`, {
      method: 'POST',
      headers: { origin: 'https://app.example', 'sec-fetch-site': 'cross-site' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value }),
    });
    expect(res.status).toBe(200);
    expect(noCors(Object.fromEntries(res.headers))).toEqual([]);
    await live.close();
    await sa.close();
  });
});
