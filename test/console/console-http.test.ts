/**
 * The self-service page's answers checked from outside, as a browser or an attacker's page would get
 * them, against the example server: the security headers, what someone not signed in (or not allowed)
 * gets, the size of what a browser downloads, and cross-site attempts to change something with the
 * hirer's session cookie. See docs/console.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllServers, startServer, type ExampleServer } from '../examples/example-server.js';

const TIMEOUT = { timeout: 60_000 };
let dir: string;
let server: ExampleServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sa-console-http-'));
  server = await startServer({ PORT: '0', SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, 'console.db')}` });
}, 60_000);
afterAll(async () => {
  await killAllServers();
  rmSync(dir, { recursive: true, force: true });
});

/** Signs in at the stand-in login (JSON, as a script would) and returns the session cookie. */
async function sessionOf(name: string, clientAccount?: string): Promise<string> {
  const res = await fetch(`${server.url}/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name, ...(clientAccount !== undefined && { clientAccount }) }),
  });
  expect(res.status).toBe(200);
  return res.headers.get('set-cookie')!.split(';')[0]!;
}

/** The Content-Security-Policy as directive → sources. */
function policyOf(header: string | null): Map<string, string[]> {
  return new Map((header ?? '').split(';').map((part) => part.trim().split(/\s+/)).map(([name, ...sources]) => [name!, sources]));
}

function expectStrictHeaders(res: Response): void {
  const csp = policyOf(res.headers.get('content-security-policy'));
  expect(csp.get('default-src')).toEqual(["'self'"]);
  expect(csp.get('script-src')).toEqual(["'self'"]);
  expect(csp.get('style-src')).toEqual(["'self'"]);
  expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
  expect(res.headers.get('content-security-policy')).not.toMatch(/unsafe-|data:|https?:|\*/);
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  expect(res.headers.get('access-control-allow-origin')).toBeNull();
}

describe('the console from outside', TIMEOUT, () => {
  it('serves the page with a strict policy, no inline script or style, and no-store', async () => {
    const cookie = await sessionOf('Ada', 'acme');
    const res = await fetch(`${server.url}/console/`, { headers: { cookie } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expectStrictHeaders(res);
    const html = await res.text();
    // Every script and stylesheet is a file of the page, on this origin; none is inline.
    expect([...html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)].map((m) => [m[0].match(/src="([^"]+)"/)?.[1], m[1]])).toEqual([['console.js', '']]);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=|javascript:|(src|href)="(https?:)?\/\//);
    expect([...html.matchAll(/<link\b[^>]*href="([^"]+)"/g)].map((m) => m[1])).toEqual(['console.css']);
    expect(html).toContain('Signed in as Ada · Client account acme');
  });

  it('sends someone not signed in to the sign-in form; serves the page to a person signed in with a name alone', async () => {
    const anonymous = await fetch(`${server.url}/console/`);
    expect(anonymous.status).toBe(401);
    expectStrictHeaders(anonymous);
    const notice = await anonymous.text();
    expect(notice).toContain('<h1>Sign in to manage service accounts</h1>');
    expect(notice).toContain('<a class="esa-button" href="/login">Sign in</a>');
    expect(notice).not.toContain('<script');
    const withoutSlash = await fetch(`${server.url}/console`, { redirect: 'manual' });
    expect(withoutSlash.status).toBe(301);
    expect(withoutSlash.headers.get('location')).toBe('./console/');

    // The stand-in login takes a client account beside the name, checked.
    const badAccount = await fetch(`${server.url}/login`, { method: 'POST', body: new URLSearchParams({ name: 'Eve', clientAccount: '../acme' }) });
    expect(badAccount.status).toBe(400);
    expect(badAccount.headers.get('set-cookie')).toBeNull();

    // "The example serves the page at `/console/` to a person signed in through its stand-in login
    // (`POST /login` with a `name`, form or JSON)": without a client account, the form's `acme`.
    for (const form of [true, false]) {
      const login = await fetch(`${server.url}/login`, {
        method: 'POST',
        ...(form ? { body: new URLSearchParams({ name: 'Walter' }) } : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Walter' }) }),
      });
      expect(login.status).toBe(200);
      expect(await login.json()).toMatchObject({ name: 'Walter', clientAccountId: 'acme' });
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const page = await fetch(`${server.url}/console/`, { headers: { cookie } });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('Signed in as Walter · Client account acme');
      const api = await fetch(`${server.url}/console/api/service-accounts`, { headers: { cookie } });
      expect(api.status).toBe(200);
    }
  });

  it('serves its script and stylesheet from the package, compressed, well under 100 KB in all', async () => {
    let compressed = 0;
    for (const [file, type] of [['console.js', 'text/javascript; charset=utf-8'], ['console.css', 'text/css; charset=utf-8']] as const) {
      const res = await fetch(`${server.url}/console/${file}`, { headers: { 'accept-encoding': 'gzip' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(type);
      expect(res.headers.get('content-encoding')).toBe('gzip');
      expectStrictHeaders(res);
      compressed += Number(res.headers.get('content-length'));
      const again = await fetch(`${server.url}/console/${file}`, { headers: { 'if-none-match': res.headers.get('etag')! } });
      expect(again.status).toBe(304);
    }
    const cookie = await sessionOf('Ada', 'acme');
    compressed += gzipSync(await (await fetch(`${server.url}/console/`, { headers: { cookie } })).text()).length;
    // docs/console.md states the size; the aim is well under 100 KB.
    expect(compressed).toBeLessThan(20_000);
  });

  it('refuses every cross-site attempt to change something with the hirer’s cookie, and changes nothing', async () => {
    const cookie = await sessionOf('Ada', 'cross-site-test');
    const create = `${server.url}/console/api/service-accounts`;
    const attempts: { what: string; headers: Record<string, string>; body: string; status: number }[] = [
      // A form another site posts: the browser marks it.
      { what: 'form post', headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Sec-Fetch-Site': 'cross-site', Origin: 'https://evil.example' }, body: 'name=pwned', status: 403 },
      { what: 'text/plain post', headers: { 'Content-Type': 'text/plain', 'Sec-Fetch-Site': 'cross-site', Origin: 'https://evil.example' }, body: '{"name":"pwned"}', status: 403 },
      // A sibling subdomain is the same site (its cookies too), yet another origin.
      { what: 'JSON from a sibling subdomain', headers: { 'Content-Type': 'application/json', 'Sec-Fetch-Site': 'same-site' }, body: '{"name":"pwned"}', status: 403 },
      // An old browser that marks nothing: only JSON is accepted, which no form can send.
      { what: 'unmarked form post', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'name=pwned', status: 415 },
      { what: 'unmarked text/plain post', headers: { 'Content-Type': 'text/plain' }, body: '{"name":"pwned"}', status: 415 },
      { what: 'Origin of another site', headers: { 'Content-Type': 'application/json', Origin: 'https://evil.example' }, body: '{"name":"pwned"}', status: 403 },
    ];
    for (const attempt of attempts) {
      const res = await fetch(create, { method: 'POST', headers: { cookie, ...attempt.headers }, body: attempt.body });
      expect({ what: attempt.what, status: res.status, type: res.headers.get('content-type') }).toEqual({ what: attempt.what, status: attempt.status, type: 'application/problem+json' });
    }
    // A preflight gets no CORS permission, so a cross-site fetch() with JSON is never sent.
    const preflight = await fetch(create, { method: 'OPTIONS', headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' } });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const list = (await (await fetch(create, { headers: { cookie } })).json()) as unknown[];
    expect(list).toEqual([]);
    // The page itself (same origin, JSON) may.
    const own = await fetch(create, { method: 'POST', headers: { cookie, 'Content-Type': 'application/json', 'Sec-Fetch-Site': 'same-origin' }, body: '{"name":"own-page"}' });
    expect(own.status).toBe(201);
    const { clientId } = (await own.json()) as { clientId: string };

    // OWASP CSRF Cheat Sheet, "Employing custom request headers for AJAX/API": a change without a body
    // (disable, enable, a new secret) is what a cross-site `no-cors` fetch can send without a preflight,
    // from a browser that marks nothing: without the page's X-Requested-With it is refused.
    for (const action of ['disable', 'secrets']) {
      const bare = await fetch(`${create}/${clientId}/${action}`, { method: 'POST', headers: { cookie } });
      expect({ action, status: bare.status }).toEqual({ action, status: 403 });
    }
    const after = (await (await fetch(`${create}/${clientId}`, { headers: { cookie } })).json()) as { enabled: boolean; secrets: unknown[] };
    expect({ enabled: after.enabled, secrets: after.secrets.length }).toEqual({ enabled: true, secrets: 1 });
    // The page sends its header with every change, and may.
    const disabled = await fetch(`${create}/${clientId}/disable`, { method: 'POST', headers: { cookie, 'X-Requested-With': 'express-service-accounts-console' } });
    expect(disabled.status).toBe(200);
  });
});
