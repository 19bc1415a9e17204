/**
 * The example server's admin API at /admin, run as a child process: ADMIN_TOKEN admits an operator of
 * every client account, ADMIN_TENANT_TOKENS (`token=clientAccountId,...`) an administrator of one, so
 * isolation can be tried from outside; without either, nothing is mounted at /admin.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { killAllServers, runFailingServer, startServer, type ExampleServer } from './example-server.js';

const TIMEOUT = { timeout: 120_000 };
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sa-example-admin-'));
});
afterAll(async () => {
  await killAllServers();
  rmSync(dir, { recursive: true, force: true });
});

const auth = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` });

describe('example server admin API', TIMEOUT, () => {
  let server: ExampleServer;
  beforeAll(async () => {
    server = await startServer({
      PORT: '0',
      SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, 'admin.db')}`,
      ADMIN_TOKEN: 'operator-token',
      ADMIN_TENANT_TOKENS: 'acme-token=acme, globex-token=globex',
      FEDERATION_ALLOWED_ISSUERS: 'https://token.actions.githubusercontent.com',
    });
  }, 60_000);
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  it('isolates client accounts: another one’s account is 404; the operator sees every one', async () => {
    const created = await fetch(`${server.url}/admin/service-accounts`, {
      method: 'POST',
      headers: { ...auth('acme-token'), 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'acme-billing' }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const { clientId, clientAccountId } = (await created.json()) as { clientId: string; clientAccountId: string };
    expect(clientAccountId).toBe('acme');

    const foreign = await fetch(`${server.url}/admin/service-accounts/${clientId}`, { headers: auth('globex-token') });
    expect(foreign.status).toBe(404);
    expect(foreign.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const disable = await fetch(`${server.url}/admin/service-accounts/${clientId}/disable`, { method: 'POST', headers: auth('globex-token') });
    expect(disable.status).toBe(404);
    const globexList = (await (await fetch(`${server.url}/admin/service-accounts`, { headers: auth('globex-token') })).json()) as unknown[];
    expect(globexList).toEqual([]);

    const all = (await (await fetch(`${server.url}/admin/service-accounts`, { headers: auth('operator-token') })).json()) as { clientId: string }[];
    expect(all.map((a) => a.clientId)).toContain(clientId);
    // The operator's change is logged as an audit line naming the operator.
    const off = await fetch(`${server.url}/admin/service-accounts/${clientId}/disable`, { method: 'POST', headers: auth('operator-token') });
    expect(await off.json()).toEqual({ clientId, enabled: false });
    await vi.waitFor(() => {
      expect(server.output).toMatch(/"type":"account\.disabled".*"actor":\{"id":"admin-token","name":"Operator \(ADMIN_TOKEN\)"\}/);
    }, { timeout: 5000 });
  });

  // RFC 6750 §3: a request without a valid token gets 401 and a Bearer challenge.
  it('answers 401 with a Bearer challenge without a token or with an unknown one', async () => {
    for (const headers of [{}, auth('wrong-token')]) {
      const res = await fetch(`${server.url}/admin/service-accounts`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="admin"');
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
  });

  // examples/README.md: "FEDERATION_ALLOWED_ISSUERS: the only outside issuers federated credentials
  // may name": a tenant administrator cannot make the server fetch an address of their choosing.
  it('refuses a tenant administrator an issuer outside FEDERATION_ALLOWED_ISSUERS, and accepts one on it', async () => {
    const created = await fetch(`${server.url}/admin/service-accounts`, {
      method: 'POST',
      headers: { ...auth('acme-token'), 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'acme-exporter' }),
    });
    const { clientId } = (await created.json()) as { clientId: string };
    const add = (issuer: string) =>
      fetch(`${server.url}/admin/service-accounts/${clientId}/federated`, {
        method: 'POST',
        headers: { ...auth('acme-token'), 'Content-Type': 'application/json' },
        body: JSON.stringify({ issuer, subject: 'repo:acme/billing:ref:refs/heads/main' }),
      });
    for (const issuer of ['https://169.254.169.254', 'https://127.0.0.1:5432', 'https://10.1.2.3/jwks']) {
      const refused = await add(issuer);
      expect(refused.status).toBe(400);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect((await add('https://token.actions.githubusercontent.com')).status).toBe(201);
  });

  // "Errors are `application/problem+json` (RFC 9457)": a path under /admin that the router does not
  // serve too, with or without a token.
  it('answers a path under /admin that it does not serve with a problem 404', async () => {
    for (const headers of [auth('operator-token'), auth('acme-token'), {}]) {
      const res = await fetch(`${server.url}/admin/nothing-here`, { headers });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.json()).toEqual({
        type: 'https://github.com/express-service-accounts/express-service-accounts/blob/main/docs/errors.md#admin-not-found',
        title: 'Not found',
        status: 404,
        detail: 'The admin API has no route for GET /admin/nothing-here',
      });
    }
  });

  it('serves the OpenAPI document at /admin/openapi.json', async () => {
    const res = await fetch(`${server.url}/admin/openapi.json`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { openapi: string }).openapi).toBe('3.1.0');
  });
});

describe('example server without admin tokens', TIMEOUT, () => {
  it('mounts nothing at /admin', async () => {
    const server = await startServer({ PORT: '0', SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, 'plain.db')}` });
    expect((await fetch(`${server.url}/admin/service-accounts`, { headers: auth('anything') })).status).toBe(404);
    expect(await server.stop()).toBe(0);
  });

  it('refuses a malformed ADMIN_TENANT_TOKENS with exit code 1 and one clear line', async () => {
    const { code, output } = await runFailingServer({
      PORT: '0',
      SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, 'bad.db')}`,
      ADMIN_TENANT_TOKENS: 'just-a-token',
    });
    expect(code).toBe(1);
    expect(output).toMatch(/ADMIN_TENANT_TOKENS must be token=clientAccountId pairs/);
    expect(output).not.toMatch(/^\s+at /m);
  });

  // examples/README.md: a token shorter than 32 characters is guessable, and every start says so.
  it('warns of an ADMIN_TOKEN or ADMIN_TENANT_TOKENS token shorter than 32 characters, and not of long ones', async () => {
    const long = 'a'.repeat(32);
    const short = await startServer({
      PORT: '0',
      SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, 'short-tokens.db')}`,
      ADMIN_TOKEN: 'op-secret',
      ADMIN_TENANT_TOKENS: `${long}=acme,acme-token=globex`,
      FEDERATION_ALLOWED_ISSUERS: 'none',
    });
    expect(short.output).toMatch(/^warning: ADMIN_TOKEN and ADMIN_TENANT_TOKENS with a token shorter than 32 characters/m);
    expect(await short.stop()).toBe(0);
    const fine = await startServer({
      PORT: '0',
      SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, 'long-tokens.db')}`,
      ADMIN_TOKEN: 'b'.repeat(32),
      ADMIN_TENANT_TOKENS: `${long}=acme`,
      FEDERATION_ALLOWED_ISSUERS: 'none',
    });
    expect(fine.output).not.toMatch(/shorter than 32 characters/);
    expect(await fine.stop()).toBe(0);
  });

  // examples/README.md: with ADMIN_TENANT_TOKENS, set FEDERATION_ALLOWED_ISSUERS; without a list (unset
  // or `any`), tenant administrators choose the issuers (public addresses only), and every start says so.
  for (const [label, value] of [['unset', undefined], ['any', 'any']] as const) {
    it(`starts with ADMIN_TENANT_TOKENS and FEDERATION_ALLOWED_ISSUERS ${label}, with a warning on stderr`, async () => {
      const server = await startServer({
        PORT: '0',
        SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, `tenants-${label}.db`)}`,
        ADMIN_TENANT_TOKENS: 'acme-token=acme',
        ...(value !== undefined && { FEDERATION_ALLOWED_ISSUERS: value }),
      });
      expect(server.output).toMatch(/^warning: ADMIN_TENANT_TOKENS without a FEDERATION_ALLOWED_ISSUERS list/m);
      expect(await server.stop()).toBe(0);
    });
  }

  it('says nothing of it with a FEDERATION_ALLOWED_ISSUERS list', async () => {
    const server = await startServer({
      PORT: '0',
      SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, 'tenants-list.db')}`,
      ADMIN_TENANT_TOKENS: 'acme-token=acme',
      FEDERATION_ALLOWED_ISSUERS: 'https://token.actions.githubusercontent.com',
    });
    expect(server.output).not.toMatch(/FEDERATION_ALLOWED_ISSUERS list/);
    expect(await server.stop()).toBe(0);
  });

  it('refuses a FEDERATION_ALLOWED_ISSUERS entry that is no https issuer URL, with exit code 1', async () => {
    const { code, output } = await runFailingServer({
      PORT: '0',
      SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, 'bad-issuers.db')}`,
      FEDERATION_ALLOWED_ISSUERS: 'https://token.actions.githubusercontent.com, http://example.com',
    });
    expect(code).toBe(1);
    expect(output).toMatch(/^error: .*"federation\.allowedIssuers\[1\]" must be an https URL.* \(from FEDERATION_ALLOWED_ISSUERS\)$/m);
  });
});
