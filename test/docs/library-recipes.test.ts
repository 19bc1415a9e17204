/**
 * The recipes of docs/clients.md for OAuth client libraries of other languages, extracted from the page
 * (the block after each `<!-- client-recipe: NAME -->` marker) and run as written, with the Debian
 * packages the page names, against the example API over a real socket: Authlib (a secret with
 * revocation; a key pair, ES256 and RS256, given the issuer, with its default one-hour assertions;
 * introspection), requests-oauthlib, Go's golang.org/x/oauth2/clientcredentials and Ruby's oauth2.
 * Also what docs/private-key-jwt.md says of Authlib: its defaults work with `acceptTokenEndpointAudience`
 * on and are refused without it (`wrong_audience`), a lifetime above `maxAssertionLifetime` is refused
 * (`assertion_lifetime_too_long`), and 1.2's `claims=` repeats the jti (`replayed_assertion`).
 * A recipe whose runtime or library is not installed is skipped with a note saying what to install
 * (.ci/run installs them).
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import type { AuditEvent, CreatedAccount } from '../../src/index.js';
import { startExampleApp, type RunningExampleApp } from '../helpers/example-app.js';
import { clientRecipe } from '../helpers/client-recipes.js';

const ROOT = resolve(__dirname, '..', '..');

// Inside the repository (.tmp/ is ignored by git).
mkdirSync(join(ROOT, '.tmp'), { recursive: true });
const dir = mkdtempSync(join(ROOT, '.tmp', 'library-recipes-'));
let fileCount = 0;
function writeFile(name: string, text: string): string {
  const path = join(dir, `${fileCount++}-${name}`);
  writeFileSync(path, text);
  return path;
}

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}
function run(command: string, args: readonly string[], env: Record<string, string>, cwd = dir): Promise<Run> {
  return new Promise((done) => {
    execFile(command, args, { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? dir, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/** The first command of `candidates` for which `args` succeeds, else undefined. */
async function firstWorking(candidates: readonly string[], args: readonly string[]): Promise<string | undefined> {
  for (const command of candidates) {
    if ((await run(command, args, {}).catch(() => ({ code: 1 }))).code === 0) return command;
  }
  return undefined;
}

// Debian's python3-* packages install into /usr/bin/python3's path, which a pyenv or venv python3 first on PATH does not see.
const PYTHONS = ['python3', '/usr/bin/python3'];
const GOPATH = process.env.GOPATH ?? '/usr/share/gocode';
const runtimes = {
  authlib: firstWorking(PYTHONS, ['-c', 'import authlib, requests']),
  requestsOauthlib: firstWorking(PYTHONS, ['-c', 'import requests_oauthlib, oauthlib']),
  go: firstWorking(['go'], ['version']).then((go) => (go && existsSync(join(GOPATH, 'src', 'golang.org', 'x', 'oauth2', 'clientcredentials')) ? go : undefined)),
  ruby: firstWorking(['ruby'], ['-e', 'require "oauth2"']),
};
const INSTALL: Record<keyof typeof runtimes, string> = {
  authlib: 'python3 with Authlib and requests (apt-get install python3-authlib)',
  requestsOauthlib: 'python3 with requests-oauthlib (apt-get install python3-requests-oauthlib)',
  go: `go with golang.org/x/oauth2 under ${GOPATH} (apt-get install golang-go golang-golang-x-oauth2-dev)`,
  ruby: 'ruby with the oauth2 gem (apt-get install ruby-oauth2)',
};

/** The runtime's command; else a visible note and the test skipped. */
async function needs(context: TestContext, runtime: keyof typeof runtimes): Promise<string> {
  const command = await runtimes[runtime];
  if (!command) {
    console.warn(`docs/clients.md recipe not run: needs ${INSTALL[runtime]}`);
    context.skip();
  }
  return command!;
}

/** The example API with `settings`, and the audit events it emitted. */
async function startApi(settings: NonNullable<Parameters<typeof startExampleApp>[0]>['settings'] = {}) {
  const events: AuditEvent[] = [];
  const app = await startExampleApp({ settings: { ...settings, onAudit: (event) => void events.push(event) } });
  const reasons = () => events.flatMap((e) => (e.type === 'client.authentication_failed' ? [e.reason] : []));
  return { app, events, reasons };
}

let api: Awaited<ReturnType<typeof startApi>>;
let audienceApi: Awaited<ReturnType<typeof startApi>>;
let shortApi: Awaited<ReturnType<typeof startApi>>;

beforeAll(async () => {
  [api, audienceApi, shortApi] = await Promise.all([startApi(), startApi({ acceptTokenEndpointAudience: true }), startApi({ maxAssertionLifetime: 300 })]);
});

afterAll(async () => {
  await Promise.all([api, audienceApi, shortApi].map((a) => a?.app.close()));
  rmSync(dir, { recursive: true, force: true });
});

/** An account holding a key pair of `alg`; the private key in a PKCS #8 PEM file. */
async function keyAccount(app: RunningExampleApp, alg: 'ES256' | 'RS256' = 'ES256'): Promise<{ account: CreatedAccount; keyFile: string }> {
  const pair = alg === 'ES256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('rsa', { modulusLength: 2048 });
  const account = await app.sa.admin.createAccount({ name: `key-client-${alg}` });
  await app.sa.admin.addKey(account.clientId, pair.publicKey.export({ type: 'spki', format: 'pem' }) as string);
  return { account, keyFile: writeFile('private.pem', pair.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string) };
}

const pythonEnv = (app: RunningExampleApp, env: Record<string, string>) => ({ API_URL: app.issuer, AUTHLIB_INSECURE_TRANSPORT: '1', ...env });

/** A few lines of Python that fetch one token with Authlib's `PrivateKeyJWT(...)` as given, and print the whoami name. */
const authlibDriver = (keyJwt: string) =>
  [
    'import os',
    'from authlib.integrations.requests_client import OAuth2Session',
    'from authlib.oauth2.rfc7523 import PrivateKeyJWT',
    'api = os.environ["API_URL"]',
    'private_key = open(os.environ["PRIVATE_KEY_FILE"]).read()',
    `session = OAuth2Session(os.environ["CLIENT_ID"], private_key, token_endpoint=f"{api}/oauth/token", grant_type="client_credentials", token_endpoint_auth_method=${keyJwt})`,
    'session.fetch_token()',
    'print(session.get(f"{api}/api/whoami").json()["name"])',
  ].join('\n');

describe('docs/clients.md: Authlib', () => {
  it('authlib-secret: a token, the API called with it, then the token revoked', async (context) => {
    const python = await needs(context, 'authlib');
    const account = await api.app.sa.admin.createAccount({ name: 'billing-sync' });
    const result = await run(python, [writeFile('authlib_secret.py', clientRecipe('authlib-secret'))], pythonEnv(api.app, { CLIENT_ID: account.clientId, CLIENT_SECRET: account.secret.value }));
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('billing-sync\n');
    expect(api.events.filter((e) => e.type === 'token.revoked' && e.clientId === account.clientId && e.by === 'client')).toHaveLength(1);
  });

  // docs/private-key-jwt.md: PrivateKeyJWT given the issuer, its assertions living an hour (Authlib's default).
  it.for(['ES256', 'RS256'] as const)('authlib-private-key-jwt (%s): PrivateKeyJWT(issuer) with its default lifetime gets a token, calls the API, revokes', async (alg, context) => {
    const python = await needs(context, 'authlib');
    const { account, keyFile } = await keyAccount(api.app, alg);
    const env = pythonEnv(api.app, { CLIENT_ID: account.clientId, PRIVATE_KEY_FILE: keyFile, KEY_ALG: alg });
    const result = await run(python, [writeFile('authlib_key.py', clientRecipe('authlib-private-key-jwt'))], env);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(`key-client-${alg}\n`);
    expect(api.events.filter((e) => e.type === 'token.issued' && e.clientId === account.clientId)).toHaveLength(1);
    expect(api.events.filter((e) => e.type === 'token.revoked' && e.clientId === account.clientId)).toHaveLength(1);
  });

  it('authlib-introspection: a resource server introspects a live token, then a revoked one', async (context) => {
    const python = await needs(context, 'authlib');
    const resourceServer = await api.app.sa.admin.createAccount({ name: 'jobs-api', scopes: ['token:introspect'] });
    const client = await api.app.sa.admin.createAccount({ name: 'billing-sync', scopes: ['jobs:read'] });
    const issued = await fetch(`${api.app.issuer}/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${client.clientId}:${client.secret.value}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'client_credentials' }),
    });
    const { access_token: token } = (await issued.json()) as { access_token: string };
    const file = writeFile('authlib_introspection.py', clientRecipe('authlib-introspection'));
    const env = pythonEnv(api.app, { CLIENT_ID: resourceServer.clientId, CLIENT_SECRET: resourceServer.secret.value, ACCESS_TOKEN: token });
    expect((await run(python, [file], env)).stdout).toBe(`True ${client.clientId} jobs:read\n`);
    await api.app.sa.admin.revokeSecret(client.clientId, client.secret.id);
    expect((await run(python, [file], env)).stdout).toBe('False None None\n');
  });

  it('Authlib 1.2 PrivateKeyJWT(claims=...): the second token request repeats the jti and is refused (replayed_assertion)', async (context) => {
    const python = await needs(context, 'authlib');
    const { account, keyFile } = await keyAccount(api.app);
    const driver = authlibDriver('PrivateKeyJWT(api, alg="ES256", claims={})').replace('session.fetch_token()', 'session.fetch_token()\nsession.fetch_token()');
    const result = await run(python, [writeFile('authlib_claims.py', driver)], pythonEnv(api.app, { CLIENT_ID: account.clientId, PRIVATE_KEY_FILE: keyFile }));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('invalid_client');
    expect(api.reasons().at(-1)).toBe('replayed_assertion');
  });

  it("with acceptTokenEndpointAudience, Authlib's defaults (aud = the token endpoint URL) get a token; without it they are refused (wrong_audience)", async (context) => {
    const python = await needs(context, 'authlib');
    const driver = writeFile('authlib_defaults.py', authlibDriver('PrivateKeyJWT(alg="ES256")'));
    const allowed = await keyAccount(audienceApi.app);
    const ok = await run(python, [driver], pythonEnv(audienceApi.app, { CLIENT_ID: allowed.account.clientId, PRIVATE_KEY_FILE: allowed.keyFile }));
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toBe('key-client-ES256\n');
    const refused = await keyAccount(api.app);
    const result = await run(python, [driver], pythonEnv(api.app, { CLIENT_ID: refused.account.clientId, PRIVATE_KEY_FILE: refused.keyFile }));
    expect(result.stderr).toContain('invalid_client');
    expect(api.reasons().at(-1)).toBe('wrong_audience');
  });

  it('a wrong audience, and a lifetime above maxAssertionLifetime, are refused with distinct reasons', async (context) => {
    const python = await needs(context, 'authlib');
    const { account, keyFile } = await keyAccount(api.app);
    const other = await run(python, [writeFile('authlib_other.py', authlibDriver('PrivateKeyJWT("https://other.example", alg="ES256")'))], pythonEnv(api.app, { CLIENT_ID: account.clientId, PRIVATE_KEY_FILE: keyFile }));
    expect(other.stderr).toContain('invalid_client');
    expect(api.reasons().at(-1)).toBe('wrong_audience');
    // The recipe as written, against a server that accepts 300 s at most: Authlib signs for 3600 s.
    const short = await keyAccount(shortApi.app);
    const env = pythonEnv(shortApi.app, { CLIENT_ID: short.account.clientId, PRIVATE_KEY_FILE: short.keyFile });
    const result = await run(python, [writeFile('authlib_key.py', clientRecipe('authlib-private-key-jwt'))], env);
    expect(result.stderr).toContain('invalid_client');
    expect(shortApi.reasons()).toEqual(['assertion_lifetime_too_long']);
  });
});

describe('docs/clients.md: requests-oauthlib, Go, Ruby', () => {
  it('requests-oauthlib: a token, then the API called with it', async (context) => {
    const python = await needs(context, 'requestsOauthlib');
    const account = await api.app.sa.admin.createAccount({ name: 'billing-sync' });
    const env = { API_URL: api.app.issuer, OAUTHLIB_INSECURE_TRANSPORT: '1', CLIENT_ID: account.clientId, CLIENT_SECRET: account.secret.value };
    const result = await run(python, [writeFile('requests_oauthlib_client.py', clientRecipe('requests-oauthlib'))], env);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('billing-sync\n');
  });

  it('golang.org/x/oauth2/clientcredentials: built offline from the Debian sources, a token, then the API called with it', async (context) => {
    const go = await needs(context, 'go');
    const account = await api.app.sa.admin.createAccount({ name: 'billing-sync' });
    const main = join(dir, 'go-recipe');
    mkdirSync(main);
    writeFileSync(join(main, 'main.go'), clientRecipe('go-clientcredentials'));
    // GOPATH mode: the packages come from Debian's golang-*-dev sources; nothing is downloaded.
    const goEnv = { GOPATH, GO111MODULE: 'off', GOFLAGS: '', GOPROXY: 'off', GOCACHE: join(dir, 'go-cache') };
    const result = await run(go, ['run', 'main.go'], { ...goEnv, API_URL: api.app.issuer, CLIENT_ID: account.clientId, CLIENT_SECRET: account.secret.value }, main);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('billing-sync\n');
  }, 120_000);

  it('the Ruby oauth2 gem: a token, then the API called with it', async (context) => {
    const ruby = await needs(context, 'ruby');
    const account = await api.app.sa.admin.createAccount({ name: 'billing-sync' });
    const result = await run(ruby, [writeFile('oauth2_client.rb', clientRecipe('ruby-oauth2'))], { API_URL: api.app.issuer, CLIENT_ID: account.clientId, CLIENT_SECRET: account.secret.value });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('billing-sync\n');
  });
});
