/**
 * Nothing secret leaks (CONTRACT §2 "never echoes a secret", §4 "a secret's value is shown once, at
 * creation, and never again (not by list, not in logs)"). A representative flow (provisioning,
 * tokens, failures, 429s, revocation, disabling, admin calls and their errors, store outages, bearer
 * refusals) runs while every console.* call, every process.stdout/stderr write, every audit event
 * and every response (status line, headers, body) is captured; then the capture is scanned for every
 * secret value, its random part, its SHA-256 pre-hash, every bcrypt hash created, and the signing key.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AdminError, MemoryAccountStore, type AuditEvent } from '../../src/index.js';
import { createTestApp, TEST_HS256_KEY } from '../helpers/create-app.js';
import { json, listen, tokenRequest, UnreliableStore, type LiveServer, type RawRequest } from './helpers.js';

const captured: string[] = [];
const restore: Array<() => void> = [];

function capture(): void {
  for (const level of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
    const spy = vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      captured.push(args.map((a) => (a instanceof Error ? `${a.message}\n${a.stack}` : typeof a === 'string' ? a : safeJson(a))).join(' '));
    });
    restore.push(() => spy.mockRestore());
  }
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write;
    stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
      captured.push(Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk));
      return (original as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof stream.write;
    restore.push(() => {
      stream.write = original;
    });
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

describe('no secret leaks', () => {
  const events: AuditEvent[] = [];
  const secrets: string[] = [];
  const store = new UnreliableStore(new MemoryAccountStore());
  const t = createTestApp({ store, storeTimeout: 200, failureLimit: { max: 3 }, onAudit: (e) => void events.push(e) });
  let server: LiveServer;

  beforeAll(async () => {
    capture();
    server = await listen(t.app);
  });
  afterAll(async () => {
    for (const undo of restore.splice(0).reverse()) undo();
    await server?.close();
    await t.sa.close();
  });

  const send = async (req: RawRequest) => {
    const res = await server.request(req);
    captured.push(`${res.status} ${safeJson(res.headers)} ${res.text}`);
    return res;
  };
  const token = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
    send({ method: 'POST', path: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields).toString() });
  const admin = async <T>(call: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await call();
    } catch (err) {
      // Admin errors end up in logs and on the CLI's stderr: they are scanned too.
      captured.push(err instanceof Error ? `${err.name}: ${err.message} ${safeJson(err)}` : String(err));
      return undefined;
    }
  };

  it('runs the flow, then finds no secret, hash, pre-hash or signing key in anything captured', async () => {
    const { sa } = t;
    const a = await sa.admin.createAccount({ name: 'portal', scopes: ['jobs:write', 'jobs:read'] });
    const b = await sa.admin.createAccount({ name: 'compliance' });
    const c = await sa.admin.createAccount({ name: 'workflow', clientAccountId: 'acct-7' });
    secrets.push(a.secret.value, b.secret.value, c.secret.value);
    const a2 = await sa.admin.addSecret(a.clientId);
    secrets.push(a2.value);
    captured.push(safeJson(await sa.admin.listAccounts()), safeJson(await sa.admin.getAccount(a.clientId)));

    // Tokens, by body and by Basic; protected calls.
    const okBody = await token({ grant_type: 'client_credentials', client_id: a.clientId, client_secret: a.secret.value, scope: 'jobs:write' });
    expect(okBody.status).toBe(200);
    const basic = (id: string, s: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(s)}`).toString('base64')}`;
    const okBasic = await token({ grant_type: 'client_credentials' }, { authorization: basic(b.clientId, b.secret.value) });
    expect(okBasic.status).toBe(200);
    const tokenA = (json(okBody) as { access_token: string }).access_token;
    const tokenB = (json(okBasic) as { access_token: string }).access_token;
    expect((await send({ path: '/api/whoami', headers: { authorization: `Bearer ${tokenA}` } })).status).toBe(200);
    expect((await send({ method: 'POST', path: '/api/jobs', headers: { authorization: `Bearer ${tokenA}` } })).status).toBe(201);

    // Secrets sent where they do not belong, so an error message could be tempted to echo them.
    await token({ grant_type: a.secret.value, client_id: a.clientId, client_secret: a.secret.value });
    await token({ grant_type: 'client_credentials', client_id: a.clientId, client_secret: a.secret.value, scope: b.secret.value });
    await token({ grant_type: 'client_credentials', client_id: b.secret.value, client_secret: b.secret.value });
    await token({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.secret.value }, { authorization: basic(c.clientId, c.secret.value) });
    await send({ method: 'POST', path: '/oauth/token', headers: { 'content-type': 'application/json' }, body: `{"client_secret":"${c.secret.value}","client_secret":"${c.secret.value}"}` });
    await send({ method: 'POST', path: '/oauth/token', headers: { 'content-type': 'application/json' }, body: `{"client_secret":"${c.secret.value}"` });
    await send({ method: 'POST', path: '/oauth/token', headers: { 'content-type': 'application/json' }, body: `{"client_secret":["${c.secret.value}"]}` });
    await send({ method: 'POST', path: '/oauth/token', headers: { 'content-type': 'text/plain' }, body: c.secret.value });
    await send({ method: 'POST', path: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `client_secret=${c.secret.value}&x=${'y'.repeat(9000)}` });
    await send({ method: 'GET', path: `/oauth/token?client_secret=${c.secret.value}` });
    await send({ path: '/api/whoami', headers: { authorization: `Bearer ${c.secret.value}` } });
    await send({ path: '/api/whoami', headers: { authorization: basic(c.clientId, c.secret.value) } });

    // Wrong secrets until the limiter answers 429; a right one is refused too.
    for (let i = 0; i < 4; i++) await token({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: b.secret.value });
    expect((await token({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.secret.value })).status).toBe(429);

    // Revocation: the revoked secret and its tokens are refused.
    await sa.admin.revokeSecret(b.clientId, b.secret.id);
    await token({ grant_type: 'client_credentials' }, { authorization: basic(b.clientId, b.secret.value) });
    expect((await send({ path: '/api/whoami', headers: { authorization: `Bearer ${tokenB}` } })).status).toBe(401);

    // Disable / enable.
    await sa.admin.disableAccount(a.clientId);
    await token({ grant_type: 'client_credentials', client_id: a.clientId, client_secret: a2.value });
    expect((await send({ path: '/api/whoami', headers: { authorization: `Bearer ${tokenA}` } })).status).toBe(401);
    await sa.admin.enableAccount(a.clientId);

    // Admin calls that fail, including an operator pasting a secret value where an ID belongs.
    await admin(() => sa.admin.revokeSecret(a.clientId, a2.value));
    await admin(() => sa.admin.revokeSecret(a2.value, a2.id));
    await admin(() => sa.admin.addSecret(c.secret.value));
    await admin(() => sa.admin.disableAccount(c.secret.value));
    await admin(() => sa.admin.createAccount({ name: '' }));
    for (let i = 0; i < 5; i++) await admin(() => sa.admin.addSecret(a.clientId).then((s) => void secrets.push(s.value)));
    captured.push(safeJson(await sa.admin.listAccounts()));

    // Store outage: 503s at the token endpoint, in requireBearer and in the admin API.
    store.mode = 'fail';
    await token({ grant_type: 'client_credentials', client_id: a.clientId, client_secret: a2.value });
    await admin(() => sa.admin.listAccounts());
    store.mode = 'hang';
    await token({ grant_type: 'client_credentials', client_id: a.clientId, client_secret: a2.value });
    store.mode = 'ok';

    // Let the audit hook (called off the request path) catch up.
    await new Promise((resolve) => setImmediate(resolve));
    await vi.waitFor(() => expect(events.some((e) => e.type === 'secret.revoked')).toBe(true), { timeout: 5000 });
    captured.push(...events.map(safeJson));

    const accounts = await store.inner.listAccounts();
    const hashes = accounts.flatMap((acc) => acc.secrets.map((s) => s.hash));
    expect(hashes.length).toBe(secrets.length);
    const needles = new Map<string, string>();
    for (const s of secrets) {
      needles.set(s.slice(22), 'random part of a secret');
      needles.set(s, 'secret value');
      needles.set(Buffer.from(s).toString('base64'), 'base64 secret');
      needles.set(createHash('sha256').update(s).digest('base64'), 'SHA-256 pre-hash');
    }
    for (const h of hashes) {
      needles.set(h, 'bcrypt hash');
      needles.set(h.slice(29), 'bcrypt digest part');
    }
    needles.set(TEST_HS256_KEY, 'signing key');

    const haystack = captured.join('\n');
    expect(captured.length).toBeGreaterThan(40);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['token.issued', 'token.refused', 'client.authentication_failed', 'secret.revoked', 'account.disabled']));
    const leaks = [...needles]
      .filter(([needle]) => haystack.includes(needle))
      .map(([needle, what]) => {
        const at = haystack.indexOf(needle);
        return `${what} in: ${haystack.slice(Math.max(0, at - 200), at + needle.length + 40)}`;
      });
    expect(leaks).toEqual([]);
    expect(AdminError).toBeDefined();
  });
});
