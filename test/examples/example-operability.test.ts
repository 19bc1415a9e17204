/**
 * What an operator sees of the example server (docs/observability.md): each request is one JSON log
 * line on stdout, a protected request's line names the service account (name and client ID) and
 * never holds a token or a secret; with METRICS=1, GET /metrics serves the library's counters in
 * Prometheus text format; GET /readyz is readiness (200 while the store answers), GET /healthz liveness.
 * (Its full report, and the server's time limits: test/examples/example-edges.test.ts.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { withLastCharChanged } from '../helpers/tokens.js';
import { freePort } from '../helpers/free-port.js';
import { bearer, getToken, killAllServers, requestToken, startServer, type DemoCredentials, type ExampleServer } from './example-server.js';

interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly req?: { readonly id: number; readonly method: string; readonly path: string };
  readonly res?: { readonly statusCode: number };
  readonly serviceAccount?: { readonly name: string; readonly clientId: string };
  readonly user?: { readonly name: string; readonly id: string };
}

/** The JSON lines the server wrote (the start-up banner is plain text). */
function logLines(server: ExampleServer): LogLine[] {
  return server.output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

describe('example server operability', { timeout: 120_000 }, () => {
  let dir: string;
  let server: ExampleServer;
  let demo: DemoCredentials;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sa-example-ops-'));
    server = await startServer({ PORT: String(await freePort()), SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, 'ops.db')}`, METRICS: '1' });
    demo = server.demo!;
  });
  afterAll(async () => {
    await killAllServers();
    rmSync(dir, { recursive: true, force: true });
  });

  it('logs one JSON line per request; a protected request names the account and holds no token or secret', async () => {
    const token = await getToken(server.url, demo);
    const res = await fetch(`${server.url}/api/whoami?trace=ops-test`, { headers: bearer(token) });
    expect(res.status).toBe(200);
    await vi.waitFor(() => expect(logLines(server).some((line) => line.req?.path === '/api/whoami')).toBe(true), { timeout: 5000 });
    const lines = logLines(server).filter((line) => line.req?.path === '/api/whoami');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      req: { method: 'GET', path: '/api/whoami' },
      res: { statusCode: 200 },
      serviceAccount: { name: 'demo-service-account', clientId: demo.clientId },
    });
    // Every request line is JSON; no line holds the token, and the secret only in the banner (leak guard).
    expect(logLines(server).filter((line) => line.req?.path === '/oauth/token').length).toBeGreaterThanOrEqual(1);
    expect(server.output).not.toContain(token);
    expect(server.output).not.toContain('ops-test');
  });

  // A protected request refused for its scope (403) was still made by a known service account: its line
  // names it too.
  it('names the service account on the line of a request refused for its scope', async () => {
    const token = await getToken(server.url, demo, { scope: 'jobs:read' });
    const res = await fetch(`${server.url}/api/jobs`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: '{"title":"Welder"}' });
    expect(res.status).toBe(403);
    await vi.waitFor(() => expect(logLines(server).some((line) => line.req?.path === '/api/jobs' && line.res?.statusCode === 403)).toBe(true), { timeout: 5000 });
    const line = logLines(server).find((l) => l.req?.path === '/api/jobs' && l.res?.statusCode === 403);
    expect(line?.serviceAccount).toEqual({ name: 'demo-service-account', clientId: demo.clientId });
    expect(server.output).not.toContain(token);
  });

  // A person signed in at the stand-in login is named on their request lines too, and the session
  // cookie is never logged.
  it("names the signed-in person on a protected request's line, without the session cookie", async () => {
    const login = await fetch(`${server.url}/login`, { method: 'POST', body: new URLSearchParams({ name: 'Ada' }) });
    expect(login.status).toBe(200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    expect((await fetch(`${server.url}/api/activity`, { headers: { cookie } })).status).toBe(200);
    await vi.waitFor(() => expect(logLines(server).some((line) => line.req?.path === '/api/activity')).toBe(true), { timeout: 5000 });
    const line = logLines(server).find((l) => l.req?.path === '/api/activity');
    expect(line).toMatchObject({ res: { statusCode: 200 }, user: { name: 'Ada', id: 'user_ada' } });
    expect(line).not.toHaveProperty('serviceAccount');
    expect(server.output).not.toContain(cookie.split('=')[1]!);
  });

  // docs/observability.md: "A protected request's line names ... the person signed in at the stand-in
  // login". The self-service page is such a route: a person's change there is named on its line.
  it("names the signed-in person on the line of a change at the self-service page", async () => {
    const login = await fetch(`${server.url}/login`, { method: 'POST', body: new URLSearchParams({ name: 'Grace Hopper', clientAccount: 'acme' }) });
    expect(login.status).toBe(200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const created = await fetch(`${server.url}/console/api/service-accounts`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' },
      body: '{"name":"grace-sync"}',
    });
    expect(created.status).toBe(201);
    const path = '/console/api/service-accounts';
    await vi.waitFor(() => expect(logLines(server).some((line) => line.req?.path === path)).toBe(true), { timeout: 5000 });
    expect(logLines(server).find((l) => l.req?.path === path)).toMatchObject({ res: { statusCode: 201 }, user: { name: 'Grace Hopper', id: 'user_grace-hopper' } });
  });

  it('GET /metrics (METRICS=1) exposes the counters after a token is issued and one is refused', async () => {
    await getToken(server.url, demo);
    expect((await requestToken(server.url, { clientId: demo.clientId, secret: withLastCharChanged(demo.secret) }, 'basic')).status).toBe(401);
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/^service_accounts_tokens_issued_total\{[^}]*\} [1-9]\d*$/m);
    expect(text).toMatch(/^service_accounts_token_requests_refused_total\{error_type="invalid_client"[^}]*\} [1-9]\d*$/m);
    expect(text).toMatch(/^service_accounts_store_duration_count\{db_operation_name="findAccount"/m);
    expect(text).not.toContain(demo.secret);
  });

  // The full report goes only to a caller with HEALTH_DETAILS_TOKEN (test/examples/example-edges.test.ts).
  it('GET /readyz is 200 with the status while the store answers; GET /healthz stays liveness', async () => {
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok' });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
