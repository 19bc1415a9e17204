/**
 * The recipes of docs/clients.md, extracted from the page (the block after each
 * `<!-- client-recipe: NAME -->` marker) and run against the example API over a real socket: the
 * `fetch` client, openid-client 6 and simple-oauth2, each in TypeScript and CommonJS, and, where python3 has
 * `requests`, the Python client. The server's clock is injected, so "the token expired" is a step
 * of the test: the fetch and Python clients must then get a new token and retry once.
 */
import { execFile, spawn } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedAccount, ServiceAccounts } from '../../src/index.js';
import { startExampleApp, type RunningExampleApp } from '../helpers/example-app.js';
import { createTestApp, TEST_ISSUER } from '../helpers/create-app.js';
import { listen } from '../hardening/helpers.js';
import { clientRecipe } from '../helpers/client-recipes.js';

const ROOT = resolve(__dirname, '..', '..');

// Inside the repository (.tmp/ is ignored by git), so the recipes' imports resolve from its node_modules.
mkdirSync(join(ROOT, '.tmp'), { recursive: true });
const dir = mkdtempSync(join(ROOT, '.tmp', 'client-recipes-'));
function recipeFile(name: string, file: string): string {
  const path = join(dir, file);
  writeFileSync(path, clientRecipe(name));
  return path;
}

let app: RunningExampleApp;
let issuer: string;
let sa: ServiceAccounts;
let account: CreatedAccount;
let clock = Date.now();
let tokenRequests = 0;
/** The X-Request-Id header of each call to /api/whoami, in order. */
const whoamiRequestIds: (string | undefined)[] = [];

beforeAll(async () => {
  app = await startExampleApp({
    now: () => new Date(clock),
    onRequest: (req) => {
      if (req.url === '/oauth/token') tokenRequests++;
      if (req.url === '/api/whoami') whoamiRequestIds.push(req.headers['x-request-id'] as string | undefined);
    },
  });
  ({ issuer, sa } = app);
  account = await sa.admin.createAccount({ name: 'billing-sync', scopes: ['jobs:read', 'jobs:write'] });
});

afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Past the token's lifetime (3600 s) and the verifier's tolerance, on the server's clock only. */
const expireTokens = (): void => {
  clock += 3_700_000;
};

interface ApiClient {
  request(path: string, init?: RequestInit): Promise<Response>;
}
type ApiClientClass = new (options: { baseUrl: string; clientId: string; clientSecret: string }) => ApiClient;

describe('docs/clients.md recipes against the example API', () => {
  const fetchClients: [string, () => Promise<ApiClientClass>][] = [
    ['TypeScript', async () => ((await import(pathToFileURL(recipeFile('fetch-ts', 'api-client.ts')).href)) as { ApiClient: ApiClientClass }).ApiClient],
    ['CommonJS', async () => (createRequire(__filename)(recipeFile('fetch-js', 'api-client.cjs')) as { ApiClient: ApiClientClass }).ApiClient],
  ];
  it.each(fetchClients)('fetch (%s): one token while it is valid; on the expired-token 401, a new token and one retry', async (_name, load) => {
    const ApiClient = await load();
    const api = new ApiClient({ baseUrl: issuer, clientId: account.clientId, clientSecret: account.secret.value });
    const before = tokenRequests;
    expect((await api.request('/api/whoami')).status).toBe(200);
    expect((await api.request('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"title":"Welder"}' })).status).toBe(201);
    expect(tokenRequests - before).toBe(1);
    expireTokens();
    const response = await api.request('/api/whoami');
    expect(response.status).toBe(200);
    expect(((await response.json()) as { name: string }).name).toBe('billing-sync');
    expect(tokenRequests - before).toBe(2);
  });

  type OpenidClientTokens = (issuer: string, id: string, secret: string) => Promise<() => Promise<string>>;
  const openidClientRecipes: [string, () => Promise<OpenidClientTokens>][] = [
    ['TypeScript', async () => ((await import(pathToFileURL(recipeFile('openid-client', 'openid-client.ts')).href)) as { openidClientTokens: OpenidClientTokens }).openidClientTokens],
    ['CommonJS', async () => (createRequire(__filename)(recipeFile('openid-client-js', 'openid-client.cjs')) as { openidClientTokens: OpenidClientTokens }).openidClientTokens],
  ];
  it.each(openidClientRecipes)('openid-client (%s): discovery with the exact issuer (localhost is not 127.0.0.1), a cached token that works', async (_name, load) => {
    const openidClientTokens = await load();
    const accessToken = await openidClientTokens(issuer, account.clientId, account.secret.value);
    const first = await accessToken();
    expect(await accessToken()).toBe(first);
    const whoami = await fetch(`${issuer}/api/whoami`, { headers: { authorization: `Bearer ${first}` } });
    expect(await whoami.json()).toMatchObject({ name: 'billing-sync', scopes: ['jobs:write'] });
    // The page's warning: localhost is not 127.0.0.1 to the issuer check.
    const otherName = issuer.replace('127.0.0.1', 'localhost');
    await expect(openidClientTokens(otherName, account.clientId, account.secret.value)).rejects.toThrow();
  });

  // docs/clients.md "What the server needs": an app that serves no metadata (getting-started's, here the
  // test app with issuer https://api.test) fails discovery; the recipe without discovery works with it.
  type ManualTokens = (issuer: string, tokenEndpoint: string, id: string, secret: string) => () => Promise<string>;
  const manualRecipes: [string, () => Promise<ManualTokens>][] = [
    ['TypeScript', async () => ((await import(pathToFileURL(recipeFile('openid-client-manual', 'openid-client-manual.ts')).href)) as { openidClientTokensWithoutDiscovery: ManualTokens }).openidClientTokensWithoutDiscovery],
    ['CommonJS', async () => (createRequire(__filename)(recipeFile('openid-client-manual-js', 'openid-client-manual.cjs')) as { openidClientTokensWithoutDiscovery: ManualTokens }).openidClientTokensWithoutDiscovery],
  ];
  it.each(manualRecipes)('openid-client without discovery (%s): works against an app that serves no metadata, where discovery fails', async (_name, load) => {
    const openidClientTokensWithoutDiscovery = await load();
    const bare = createTestApp();
    const server = await listen(bare.app);
    try {
      const created = await bare.sa.admin.createAccount({ name: 'billing-sync', scopes: ['jobs:write'] });
      const accessToken = openidClientTokensWithoutDiscovery(TEST_ISSUER, `${server.url}/oauth/token`, created.clientId, created.secret.value);
      const first = await accessToken();
      expect(await accessToken()).toBe(first);
      const whoami = await fetch(`${server.url}/api/whoami`, { headers: { authorization: `Bearer ${first}` } });
      expect(await whoami.json()).toMatchObject({ name: 'billing-sync', scopes: ['jobs:write'] });
      // The discovery recipe against the same app: the 404 the page warns of.
      const [, loadDiscovery] = openidClientRecipes[0]!;
      const openidClientTokens = await loadDiscovery();
      await expect(openidClientTokens(server.url, created.clientId, created.secret.value)).rejects.toMatchObject({ code: 'OAUTH_RESPONSE_IS_NOT_CONFORM' });
    } finally {
      await server.close();
      await bare.sa.close();
    }
  });

  // docs/clients.md "With a key pair": PrivateKeyJwt without discovery, against an app whose issuer
  // (https://api.test) is not where it answers, as getting-started's.
  type KeyPairTokens = (issuer: string, tokenEndpoint: string, id: string, key: webcrypto.CryptoKey) => () => Promise<string>;
  const keyPairRecipes: [string, () => Promise<KeyPairTokens>][] = [
    ['TypeScript', async () => ((await import(pathToFileURL(recipeFile('openid-client-key-pair', 'openid-client-key-pair.ts')).href)) as { openidClientKeyPairTokens: KeyPairTokens }).openidClientKeyPairTokens],
    ['CommonJS', async () => (createRequire(__filename)(recipeFile('openid-client-key-pair-js', 'openid-client-key-pair.cjs')) as { openidClientKeyPairTokens: KeyPairTokens }).openidClientKeyPairTokens],
  ];
  it.each(keyPairRecipes)('openid-client with a key pair, without discovery (%s): a cached token, the assertion made out to the issuer identifier', async (_name, load) => {
    const openidClientKeyPairTokens = await load();
    const bare = createTestApp({ now: () => new Date() });
    const server = await listen(bare.app);
    try {
      const created = await bare.sa.admin.createAccount({ name: 'billing-sync', scopes: ['jobs:write'] });
      const pair = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
      const spki = Buffer.from(await webcrypto.subtle.exportKey('spki', pair.publicKey)).toString('base64');
      await bare.sa.admin.addKey(created.clientId, `-----BEGIN PUBLIC KEY-----\n${spki.match(/.{1,64}/g)!.join('\n')}\n-----END PUBLIC KEY-----\n`);
      const accessToken = openidClientKeyPairTokens(TEST_ISSUER, `${server.url}/oauth/token`, created.clientId, pair.privateKey);
      const first = await accessToken();
      expect(await accessToken()).toBe(first);
      const whoami = await fetch(`${server.url}/api/whoami`, { headers: { authorization: `Bearer ${first}` } });
      expect(await whoami.json()).toMatchObject({ name: 'billing-sync', scopes: ['jobs:write'] });
      // Made out to the server's URL instead of its issuer identifier, the assertion is refused.
      await expect(openidClientKeyPairTokens(server.url, `${server.url}/oauth/token`, created.clientId, pair.privateKey)()).rejects.toMatchObject({ status: 401 });
    } finally {
      await server.close();
      await bare.sa.close();
    }
  });

  type SimpleOauth2Tokens = (baseUrl: string, id: string, secret: string) => () => Promise<string>;
  const simpleOauth2Recipes: [string, () => Promise<SimpleOauth2Tokens>][] = [
    ['TypeScript', async () => ((await import(pathToFileURL(recipeFile('simple-oauth2', 'simple-oauth2.ts')).href)) as { simpleOauth2Tokens: SimpleOauth2Tokens }).simpleOauth2Tokens],
    ['CommonJS', async () => (createRequire(__filename)(recipeFile('simple-oauth2-js', 'simple-oauth2.cjs')) as { simpleOauth2Tokens: SimpleOauth2Tokens }).simpleOauth2Tokens],
  ];
  it.each(simpleOauth2Recipes)('simple-oauth2 (%s): a cached token that works', async (_name, load) => {
    const simpleOauth2Tokens = await load();
    const accessToken = simpleOauth2Tokens(issuer, account.clientId, account.secret.value);
    const before = tokenRequests;
    const first = await accessToken();
    expect(await accessToken()).toBe(first);
    expect(tokenRequests - before).toBe(1);
    const whoami = await fetch(`${issuer}/api/whoami`, { headers: { authorization: `Bearer ${first}` } });
    expect(await whoami.json()).toMatchObject({ name: 'billing-sync', scopes: ['jobs:write'] });
  });

  const python = new Promise<boolean>((done) => execFile('python3', ['-c', 'import requests'], (error) => done(!error)));
  it('Python requests: a token, then after expiry a new one and a retry (skipped with a note without python3 + requests)', async (context) => {
    if (!(await python)) {
      console.warn('docs/clients.md Python recipe not run: python3 with requests is not installed');
      context.skip();
    }
    recipeFile('python', 'api_client.py');
    // The recipe's ApiClient, driven in two steps: the test expires the tokens in between.
    const driver = [
      `import sys; sys.path.insert(0, ${JSON.stringify(dir)})`,
      'from api_client import ApiClient',
      `api = ApiClient(${JSON.stringify(issuer)}, ${JSON.stringify(account.clientId)}, ${JSON.stringify(account.secret.value)})`,
      'print(api.request("GET", "/api/whoami").status_code, flush=True)',
      'sys.stdin.readline()',
      'response = api.request("GET", "/api/whoami", headers={"X-Request-Id": "call-2"})',
      'print(response.status_code, response.json()["name"], flush=True)',
    ].join('\n');
    const child = spawn('python3', ['-c', driver], { env: { PATH: process.env.PATH ?? '' }, stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const before = tokenRequests;
    expect((await lines.next()).value).toBe('200');
    expect(tokenRequests - before).toBe(1);
    expireTokens();
    child.stdin.write('\n');
    expect((await lines.next()).value).toBe('200 billing-sync');
    expect(tokenRequests - before).toBe(2);
    // The refused call and its retry both carry the caller's headers.
    expect(whoamiRequestIds.slice(-2)).toEqual(['call-2', 'call-2']);
    child.stdin.end();
  });
});
