/**
 * The federated-credential recipes of the docs, run against a local OpenID Connect issuer on loopback
 * (test/helpers/local-oidc-issuer.ts) that signs Kubernetes-shaped tokens: docs/clients.md's pod
 * client in TypeScript and CommonJS (the block after `<!-- client-recipe: federated-kubernetes -->`
 * and `...-js`), and docs/federated-credentials.md's curl form (`--data-urlencode
 * client_assertion@FILE`) and its claim-reading one-liner.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceAccounts } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { startLocalIssuer, type LocalIssuer } from '../helpers/local-oidc-issuer.js';
import { listen, type LiveServer } from '../hardening/helpers.js';
import { clientRecipe } from '../helpers/client-recipes.js';

const ROOT = resolve(__dirname, '..', '..');
const run = promisify(execFile);
const GUIDE = readFileSync(join(ROOT, 'docs', 'federated-credentials.md'), 'utf8');
const SUBJECT = 'system:serviceaccount:payments:exporter';

type TokenGetter = () => Promise<string>;
type KubernetesTokens = (baseUrl: string, options?: { clientId?: string; tokenFile?: string }) => TokenGetter;

mkdirSync(join(ROOT, '.tmp'), { recursive: true });
const dir = mkdtempSync(join(ROOT, '.tmp', 'federated-recipes-'));
let idp: LocalIssuer;
let server: LiveServer;
let sa: ServiceAccounts;
let tokenRequests = 0;
let clientId: string;

beforeAll(async () => {
  idp = await startLocalIssuer();
  const test = createTestApp({ federation: { allowHttpLoopback: true }, now: () => new Date() });
  sa = test.sa;
  const account = await sa.admin.createAccount({ name: 'exporter' });
  clientId = account.clientId;
  await sa.admin.addFederatedCredential(account.clientId, { issuer: idp.issuer, subject: SUBJECT });
  const app = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    if (req.url === '/oauth/token') tokenRequests++;
    test.app(req, res);
  };
  server = await listen(app);
});

afterAll(async () => {
  await server?.close();
  await idp?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh projected token in `file`, made out to the server's issuer identifier. */
async function mountToken(file: string): Promise<string> {
  const token = await idp.kubernetesToken({ audience: sa.config.issuer, subject: SUBJECT, lifetime: 600 });
  writeFileSync(file, token);
  return token;
}

describe('docs/clients.md: a Kubernetes pod', () => {
  it.each([
    ['TypeScript', 'federated-kubernetes', 'recipe.ts'],
    ['CommonJS', 'federated-kubernetes-js', 'recipe.cjs'],
  ])('%s: "sends one token request at a time" and keeps the access token; the platform token is then spent', async (_lang, name, fileName) => {
    const path = join(dir, `${name}-${fileName}`);
    writeFileSync(path, clientRecipe(name));
    const { kubernetesTokens } = (await import(path)) as { kubernetesTokens: KubernetesTokens };
    const tokenFile = join(dir, `${name}-token`);
    const platformToken = await mountToken(tokenFile);
    const before = tokenRequests;
    const accessToken = kubernetesTokens(server.url, { clientId, tokenFile });
    const [first, second] = await Promise.all([accessToken(), accessToken()]);
    expect(first).toBe(second);
    expect(await accessToken()).toBe(first);
    expect(tokenRequests - before).toBe(1);
    // "a platform token with a `jti` buys one access token": sending it again is refused.
    const replay = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: platformToken,
      }),
    });
    expect(replay.status).toBe(401);
  });
});

describe('docs/federated-credentials.md', () => {
  it('the curl form posts the mounted token file', async () => {
    const block = /```text\n(curl -s https:\/\/api\.example\.com\/oauth\/token \\\n[\s\S]*?client_assertion@\/var\/run\/secrets\/api\/token)\n```/.exec(GUIDE);
    expect(block, 'the curl block of "The token request"').not.toBeNull();
    const tokenFile = join(dir, 'curl-token');
    await mountToken(tokenFile);
    const script = block![1]!.replace('https://api.example.com', server.url).replace('/var/run/secrets/api/token', tokenFile).replace(/^curl /, 'curl -q --noproxy "*" ');
    const { stdout } = await run('bash', ['-c', script]);
    expect((JSON.parse(stdout) as { token_type: string }).token_type).toBe('Bearer');
  });

  it('"Read a token\'s claims" prints iss, sub and aud', async () => {
    const line = /^node -e .*"\$\(cat \/var\/run\/secrets\/api\/token\)"$/m.exec(GUIDE)?.[0];
    expect(line).toBeDefined();
    const tokenFile = join(dir, 'claims-token');
    await mountToken(tokenFile);
    const { stdout } = await run('bash', ['-c', line!.replace('/var/run/secrets/api/token', tokenFile)]);
    expect(stdout).toContain(SUBJECT);
    expect(stdout).toContain(idp.issuer);
    expect(stdout).toContain(sa.config.issuer);
  });
});
