/**
 * Which source files one request enters: the token request of each client-authentication method (a
 * client's first request, its account not yet cached; the federated one before the issuer's keys are
 * fetched), an introspection (a resource server's first, then a repeat one), a repeat client's token
 * request, and a cached requireBearer() call. Measured with V8's precise coverage
 * (call counts per function, reset before the request): a file is entered when one of its functions
 * ran during the request. Run with `npx tsx bench/trace-files.ts` (prints a table; `--list` also
 * names the files). Start-up work (the first request of the process) is done before counting.
 */
import { Session } from 'node:inspector/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { relative, resolve, dirname } from 'node:path';
import express from 'express';
import { exportJWK, generateKeyPair, SignJWT, exportSPKI } from 'jose';
import { createServiceAccounts, MemoryAccountStore, type ServiceAccounts } from '../src/index.js';

const ROOT = resolve(__dirname, '..');
const ISSUER = 'https://api.example.test';

async function startIssuer(): Promise<{ issuer: string; sign: (sub: string) => Promise<string>; close: () => void }> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  let issuer = '';
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
    else if (req.url === '/jwks') res.end(JSON.stringify({ keys: [jwk] }));
    else res.writeHead(404).end('{}');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sign = (sub: string) =>
    new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(issuer).setSubject(sub).setAudience(ISSUER).setIssuedAt().setExpirationTime('5m').setJti(crypto.randomUUID()).sign(privateKey);
  return { issuer, sign, close: () => server.close() };
}

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

async function main(): Promise<void> {
  const list = process.argv.includes('--list');
  const sa: ServiceAccounts = createServiceAccounts({
    store: new MemoryAccountStore(),
    issuer: ISSUER,
    signingKeys: [{ alg: 'HS256', key: 'trace-signing-key-0123456789abcdef-0123456789' }],
    secretHashRounds: 4,
    debug: false,
    federation: { allowHttpLoopback: true },
    onAudit: (event) => { if (event.type === 'client.authentication_failed') console.error(JSON.stringify(event)); },
  });
  const app = express();
  app.use('/oauth', sa.tokenRouter);
  app.get('/api', sa.requireBearer(), (_req, res) => void res.json({ ok: true }));
  const server: Server = await new Promise((done) => {
    const s = app.listen(0, '127.0.0.1', () => done(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await sa.ready();

  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const pem = await exportSPKI(publicKey);
  const newSecretClient = async (name: string, scopes = ['read']) => {
    const created = await sa.admin.createAccount({ name, scopes });
    return { id: created.clientId, secret: created.secret.value };
  };
  const newKeyClient = async (name: string) => {
    const created = await sa.admin.createAccount({ name, scopes: ['read'] });
    await sa.admin.addKey(created.clientId, pem);
    return created.clientId;
  };
  const issuers: Array<{ close: () => void }> = [];
  const newFederatedClient = async (name: string, subject: string, issuer: string) => {
    const created = await sa.admin.createAccount({ name, scopes: ['read'] });
    await sa.admin.addFederatedCredential(created.clientId, { issuer, subject });
    return created.clientId;
  };
  const post = async (path: string, body: string, headers: Record<string, string> = {}) => {
    const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}` });
  const assertion = (clientId: string) =>
    new SignJWT({}).setProtectedHeader({ alg: 'ES256' }).setIssuer(clientId).setSubject(clientId).setAudience(ISSUER).setIssuedAt().setExpirationTime('2m').setJti(crypto.randomUUID()).sign(privateKey);
  const jwtBearer = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

  const cases: Record<string, () => Promise<() => Promise<unknown>>> = {
    'token, client_secret_basic, first request': async () => {
      const c = await newSecretClient(`s${Math.random()}`);
      return () => post('/oauth/token', form({ grant_type: 'client_credentials' }), basic(c.id, c.secret));
    },
    'token, private_key_jwt': async () => {
      const id = await newKeyClient(`k${Math.random()}`);
      const a = await assertion(id);
      return () => post('/oauth/token', form({ grant_type: 'client_credentials', client_assertion_type: jwtBearer, client_assertion: a }));
    },
    'token, federated (issuer keys not yet fetched)': async () => {
      const subject = `system:serviceaccount:ns:${Math.random()}`;
      // A new issuer each time: its keys are fetched during the request.
      const fresh = await startIssuer();
      issuers.push(fresh);
      await newFederatedClient(`f${Math.random()}`, subject, fresh.issuer);
      const t = await fresh.sign(subject);
      return () => post('/oauth/token', form({ grant_type: 'client_credentials', client_assertion_type: jwtBearer, client_assertion: t }));
    },
    '/introspect (a resource server\'s first request)': async () => {
      const c = await newSecretClient(`t${Math.random()}`);
      const { access_token } = await post('/oauth/token', form({ grant_type: 'client_credentials' }), basic(c.id, c.secret));
      const rs = await newSecretClient(`i${Math.random()}`, ['token:introspect']);
      return () => post('/oauth/introspect', form({ token: String(access_token) }), basic(rs.id, rs.secret));
    },
    '/introspect (a repeat resource server)': async () => {
      const c = await newSecretClient(`t${Math.random()}`);
      const { access_token } = await post('/oauth/token', form({ grant_type: 'client_credentials' }), basic(c.id, c.secret));
      const rs = await newSecretClient(`i${Math.random()}`, ['token:introspect']);
      await post('/oauth/introspect', form({ token: String(access_token) }), basic(rs.id, rs.secret));
      return () => post('/oauth/introspect', form({ token: String(access_token) }), basic(rs.id, rs.secret));
    },
    'token, client_secret_basic, repeat client': async () => {
      const c = await newSecretClient(`r${Math.random()}`);
      await post('/oauth/token', form({ grant_type: 'client_credentials' }), basic(c.id, c.secret));
      return () => post('/oauth/token', form({ grant_type: 'client_credentials' }), basic(c.id, c.secret));
    },
    'requireBearer, everything cached': async () => {
      const c = await newSecretClient(`b${Math.random()}`);
      const { access_token } = await post('/oauth/token', form({ grant_type: 'client_credentials' }), basic(c.id, c.secret));
      const get = async () => {
        const res = await fetch(`${base}/api`, { headers: { authorization: `Bearer ${String(access_token)}` } });
        if (res.status !== 200) throw new Error(`/api: ${res.status}`);
        return res.json();
      };
      await get();
      return get;
    },
  };

  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  const rows: string[] = [];
  for (const [name, prepare] of Object.entries(cases)) {
    // Once unmeasured (module start-up, the first keys fetched, JIT), then once measured on a new client.
    await (await prepare())();
    const request = await prepare();
    await session.post('Profiler.takePreciseCoverage');
    await request();
    const { result } = await session.post('Profiler.takePreciseCoverage');
    const files = new Set<string>();
    for (const script of result) {
      if (!script.url.startsWith('file:')) continue;
      const file = relative(ROOT, fileURLToPath(script.url));
      if (!file.startsWith('src/')) continue;
      if (script.functions.some((fn) => fn.ranges.some((range) => range.count > 0))) files.add(file);
    }
    const folders = new Set([...files].map((file) => dirname(file)));
    rows.push(`| ${name} | ${files.size} | ${folders.size} |`);
    if (list) rows.push(...[...files].sort().map((file) => `|   ${file} | | |`));
    if (process.argv.includes('--functions')) {
      for (const script of result) {
        if (!script.url.startsWith('file:')) continue;
        const file = relative(ROOT, fileURLToPath(script.url));
        if (!file.startsWith('src/')) continue;
        const names = script.functions.filter((fn) => fn.ranges.some((range) => range.count > 0)).map((fn) => fn.functionName || '(anon)');
        if (names.length > 0) rows.push(`    ${file}: ${names.join(', ')}`);
      }
    }
  }
  console.log('| request | src files entered | folders |\n|---|---:|---:|\n' + rows.join('\n'));
  await sa.close();
  server.close();
  for (const issuer of issuers) issuer.close();
  session.disconnect();
}

void main();
