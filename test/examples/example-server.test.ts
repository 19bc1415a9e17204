/**
 * The example server of CONTRACT §5 and §6, run as child processes: demo provisioning, the token
 * endpoint by Basic and by body, the protected routes, discovery, restart, a second instance, and
 * revocation through the CLI reaching every instance (on SQLite, and on PostgreSQL when POSTGRES_URL
 * is set). The 1-second bound of that revocation is proved per store in test/store/sqlite-account-store.test.ts
 * and test/store/postgres-account-store.test.ts, and under faults in test/faults/revocation-bound.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { runCliJson } from '../helpers/run-cli.js';
import { withLastCharChanged } from '../helpers/tokens.js';
import { withPostgres } from '../helpers/with-postgres.js';
import {
  bearer,
  getToken,
  killAllServers,
  requestToken,
  runFailingServer,
  startServer,
  type DemoCredentials,
  type ExampleServer,
} from './example-server.js';

const TIMEOUT = { timeout: 120_000 };
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sa-example-'));
});
// Every describe kills what it started when it ends, pass or fail; this is the last safety net.
afterAll(async () => {
  await killAllServers();
  rmSync(dir, { recursive: true, force: true });
});

async function json(res: Response): Promise<any> {
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return res.json();
}

/**
 * Polls GET /api/whoami on every server every 50 ms until each refuses `token` (401 invalid_token);
 * resolves with the time each first refused. Any other answer than 200 or that 401 fails at once.
 */
async function waitUntilRefused(servers: readonly ExampleServer[], token: string, limitMs = 5000): Promise<number[]> {
  const refusedAt: (number | undefined)[] = servers.map(() => undefined);
  const poll = (): Promise<unknown> =>
    Promise.all(
      servers.map(async (server, i) => {
        if (refusedAt[i] !== undefined) return;
        const res = await fetch(`${server.url}/api/whoami`, { headers: bearer(token) });
        await res.arrayBuffer();
        if (res.status === 401) {
          expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
          refusedAt[i] = Date.now();
        } else expect(res.status).toBe(200);
      }),
    );
  let unexpected: { error: unknown } | undefined;
  await vi.waitFor(
    async () => {
      // A failed expectation ends the wait (vi.waitFor would retry it); only "still accepted" is retried.
      await poll().catch((error: unknown) => (unexpected = { error }));
      if (unexpected === undefined && refusedAt.some((t) => t === undefined)) {
        throw new Error(`a server still accepts the revoked token after ${limitMs} ms`);
      }
    },
    { timeout: limitMs, interval: 50 },
  );
  if (unexpected) throw unexpected.error;
  return refusedAt as number[];
}

/** Revokes the demo secret through the CLI and waits until every server refuses `token`; logs how long it took. */
async function revokeAndMeasure(label: string, store: string, servers: readonly ExampleServer[], demo: DemoCredentials, token: string) {
  // Both accept the token first, so each has the account's status cached.
  for (const server of servers) expect((await fetch(`${server.url}/api/whoami`, { headers: bearer(token) })).status).toBe(200);
  const secretId = demo.secret.split('_')[1]!;
  // The servers are polled while the CLI runs: the time it takes to close its store and exit is not
  // the servers' (before the revocation they answer 200, which is polled again).
  let cliDone = 0;
  const [revoked, refusedAt] = await Promise.all([
    runCliJson<{ revokedAt: string }>(['secret', 'revoke', demo.clientId, secretId, '--store', store]).then((answer) => {
      cliDone = Date.now();
      return answer;
    }),
    waitUntilRefused(servers, token, 20_000),
  ]);
  const fromRevocation = Math.max(...refusedAt) - Date.parse(revoked.revokedAt);
  const fromCliExit = Math.max(...refusedAt) - cliDone;
  console.log(
    `[${label}] revocation propagation: ${fromRevocation} ms after revokedAt (${fromCliExit} ms after the CLI exited, negative when before it; ` +
      `per server: ${refusedAt.map((t) => t - Date.parse(revoked.revokedAt)).join(', ')} ms; polling every 50 ms)`,
  );
  // CONTRACT §3: "A secret revocation ... takes effect on every server sharing the store within 1 second".
  // Here: it takes effect on every server (waitUntilRefused waits up to 20 s: child processes on a
  // loaded machine); the 1-second bound itself is proved in test/store/*-account-store.test.ts and test/faults.
  // And the secret itself no longer gets tokens.
  for (const server of servers) expect((await requestToken(server.url, demo, 'basic')).status).toBe(401);
}

describe('example server on SQLite', TIMEOUT, () => {
  afterAll(killAllServers);
  let store: string;
  let port: number;
  let demo: DemoCredentials;
  let token: string;
  let first: ExampleServer;

  beforeAll(async () => {
    store = `sqlite:${join(dir, 'example.db')}`;
    port = await freePort();
    first = await startServer({ PORT: String(port), SERVICE_ACCOUNTS_STORE: store });
  });

  // CONTRACT §5: "prints the URL it listens on once it is ready, and on a store with no account
  // provisions a demo account and prints its client ID and secret once"
  it('prints its URL and the demo account it provisioned', () => {
    expect(first.url).toBe(`http://localhost:${port}`);
    expect(first.demo).toBeDefined();
    demo = first.demo!;
    expect(first.output.split(demo.secret).length - 1).toBeGreaterThanOrEqual(1);
    expect(first.output).toMatch(new RegExp(`curl .*${demo.clientId}.*grant_type=client_credentials.*/oauth/token`));
  });

  // examples/README.md: "The `Listening on URL` line comes last, once the store is ready."
  it('prints "Listening on" last: the start-up audit lines come before it', async () => {
    // A first request, once "Listening on" is out: its request line is written to stdout after
    // everything the start-up wrote there, so once it has arrived, so has the whole start-up.
    const marker = '/start-up-marker';
    expect((await fetch(`${first.url}${marker}`)).status).toBe(404);
    const isMarker = (line: string) => line.startsWith('{') && line.includes(`"path":"${marker}"`);
    await vi.waitFor(() => expect(first.output.split('\n').some(isMarker)).toBe(true), { timeout: 10_000, interval: 25 });
    const lines = first.output.split('\n');
    const startUp = lines.slice(0, lines.findIndex(isMarker)).filter((line) => line !== '' && !line.startsWith('npm warn '));
    expect(startUp.filter((line) => line.startsWith('{') && line.includes('"audit":')).length).toBeGreaterThanOrEqual(2); // account and secret created
    expect(startUp.at(-1)).toBe(`Listening on ${first.url}`);
  });

  // "when absent with a SQLite store, one is generated once and kept, readable by its owner only,
  // in the folder of the SQLite file"
  it('generated its signing key beside the SQLite file, mode 0600', () => {
    expect(statSync(join(dir, 'example.db.signing-key')).mode & 0o777).toBe(0o600);
  });

  // RFC 6749 §2.3.1: credentials by HTTP Basic or in the request body
  it('issues tokens with Basic credentials and with body credentials (form and JSON)', async () => {
    for (const how of ['basic', 'body', 'json'] as const) {
      const res = await requestToken(first.url, demo, how);
      expect(res.status, how).toBe(200);
      const body = await json(res);
      expect(body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, scope: 'jobs:read jobs:write' });
      expect(res.headers.get('cache-control')).toBe('no-store');
      token = body.access_token;
    }
    const wrong = await requestToken(first.url, { ...demo, secret: withLastCharChanged(demo.secret) }, 'basic');
    expect(wrong.status).toBe(401);
    expect(await json(wrong)).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
  });

  it('GET /api/whoami returns req.serviceAccount', async () => {
    const res = await fetch(`${first.url}/api/whoami`, { headers: bearer(token) });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({
      type: 'service_account',
      clientId: demo.clientId,
      name: 'demo-service-account',
      clientAccountId: null,
      scopes: ['jobs:read', 'jobs:write'],
      secretId: demo.secret.split('_')[1],
      tokenId: expect.any(String),
    });
    const anonymous = await fetch(`${first.url}/api/whoami`);
    expect(anonymous.status).toBe(401);
    // A 401 without credentials offers a DPoP challenge beside Bearer (RFC 9449 §7.1).
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer realm="[^"]*", DPoP realm="[^"]*", algs="ES256 PS256"$/);
  });

  // "POST /api/jobs (protected, scope jobs:write when the account has scopes) creates a job attributed to the account's name"
  it('POST /api/jobs creates a job attributed to the account, and needs jobs:write', async () => {
    const res = await fetch(`${first.url}/api/jobs`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Senior welder' }),
    });
    expect(res.status).toBe(201);
    expect(await json(res)).toEqual({
      id: expect.any(String),
      title: 'Senior welder',
      createdAt: expect.any(String),
      createdBy: { type: 'service_account', clientId: demo.clientId, name: 'demo-service-account' },
    });
    const readOnly = await getToken(first.url, demo, { scope: 'jobs:read' });
    const refused = await fetch(`${first.url}/api/jobs`, { method: 'POST', headers: bearer(readOnly) });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toMatch(/error="insufficient_scope".*scope="jobs:write"/);
  });

  // "GET /api/activity returns the activity history, each entry with actor: {type, clientId, name}"
  it('GET /api/activity lists the actions, each with its service-account actor', async () => {
    const res = await fetch(`${first.url}/api/activity`, { headers: bearer(token) });
    expect(res.status).toBe(200);
    const entries = (await json(res)) as { action: string; actor: unknown }[];
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) {
      expect(entry.actor).toEqual({ type: 'service_account', clientId: demo.clientId, name: 'demo-service-account' });
    }
    expect(entries.some((e) => e.action === 'job.created')).toBe(true);
  });

  it('GET /healthz is 200; unknown routes are JSON 404s', async () => {
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
    const missing = await fetch(`${first.url}/no/such/route`);
    expect(missing.status).toBe(404);
    expect(await json(missing)).toEqual({ error: expect.any(String), error_description: expect.any(String) });
    const malformed = await fetch(`${first.url}/api/jobs`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: '{oops' });
    expect(malformed.status).toBe(400);
    expect(await json(malformed)).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
  });

  // CONTRACT §6: RFC 8414 metadata; jwks_uri only when signing is asymmetric
  it('serves RFC 8414 metadata (no jwks_uri with HS256) and no JWK Set', async () => {
    const res = await fetch(`${first.url}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    const metadata = await json(res);
    expect(metadata).toMatchObject({
      issuer: `http://localhost:${port}`,
      token_endpoint: `http://localhost:${port}/oauth/token`,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    });
    expect(metadata).not.toHaveProperty('jwks_uri');
    const jwks = await fetch(`${first.url}/.well-known/jwks.json`);
    expect(jwks.status).toBe(404);
    await json(jwks);
  });

  // The banner's commands, pasted as printed (in the server's folder): the token lands in ACCESS_TOKEN,
  // which the next line uses; a person signed in at the stand-in login reads the same activity history.
  it('prints commands that work as pasted: ACCESS_TOKEN set, then used; a person beside the account', async () => {
    const lines = first.output.split('\n');
    const after = (title: RegExp, count: number) => {
      const at = lines.findIndex((line) => title.test(line));
      expect(at, String(title)).toBeGreaterThan(0);
      return lines.slice(at + 1, at + 1 + count).map((line) => line.trim());
    };
    // One line each, then a newline (curl prints the JSON bodies without one).
    const script = [...after(/^Get a token/, 1), ...after(/^Then call the API/, 1), ...after(/^People sign in/, 2)].join('\necho\n');
    const run = spawnSync('bash', ['-c', script], { cwd: dir, encoding: 'utf8', timeout: 30_000 });
    expect(run.stderr).toBe('');
    const [, whoami, login, activity] = run.stdout.split('\n').map((text) => (text === '' ? undefined : JSON.parse(text)));
    expect(whoami).toMatchObject({ type: 'service_account', clientId: demo.clientId, name: 'demo-service-account' });
    expect(login).toEqual({ id: 'user_ada', name: 'Ada', clientAccountId: 'acme', roles: ['hirer'] });
    expect(activity[0]).toMatchObject({ action: 'user.signed_in', actor: { type: 'user', id: 'user_ada', name: 'Ada' } });
    expect(activity).toContainEqual(expect.objectContaining({ action: 'job.created', actor: { type: 'service_account', clientId: demo.clientId, name: 'demo-service-account' } }));
  });

  // "Tokens it issued stay valid across its own restart"; "a restart ... provisions nothing"
  it('after a graceful restart on the same store: no new demo account, the old token still works, the history is kept', async () => {
    expect(await first.stop()).toBe(0);
    const again = await startServer({ PORT: String(port), SERVICE_ACCOUNTS_STORE: store });
    expect(again.demo).toBeUndefined();
    expect(again.output).toMatch(/read from .*example\.db\.signing-key/);
    expect((await fetch(`${again.url}/api/whoami`, { headers: bearer(token) })).status).toBe(200);
    expect((await requestToken(again.url, demo, 'body')).status).toBe(200);
    // The activity history is kept in the store's database: the job created before the restart is still listed.
    const history = (await json(await fetch(`${again.url}/api/activity`, { headers: bearer(token) }))) as { action: string }[];
    expect(history.some((e) => e.action === 'job.created')).toBe(true);
    const accounts = await runCliJson<unknown[]>(['list', '--store', store]);
    expect(accounts).toHaveLength(1);
    expect(await again.stop()).toBe(0);
  });
});

describe('example server settings', TIMEOUT, () => {
  afterAll(killAllServers);
  // RFC 8414 §3.1: for an issuer with a path, the metadata is at the well-known path with the issuer's
  // path after it; the plain path serves it too.
  it('serves the metadata of an issuer with a path at both well-known paths', async () => {
    const server = await startServer({ PORT: '0', SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, 'issuer-path.db')}`, TOKEN_ISSUER: 'https://api.example.test/t1' });
    for (const path of ['/.well-known/oauth-authorization-server/t1', '/.well-known/oauth-authorization-server']) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(await json(res)).toMatchObject({ issuer: 'https://api.example.test/t1', token_endpoint: 'https://api.example.test/t1/oauth/token' });
    }
    expect((await fetch(`${server.url}/.well-known/oauth-authorization-server/t2`)).status).toBe(404);
    expect(await server.stop()).toBe(0);

    // A path that would be route syntax to Express is compared as text.
    const odd = await startServer({ PORT: '0', SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, 'issuer-odd-path.db')}`, TOKEN_ISSUER: 'https://api.example.test/tenant:acme/t(1)*/' });
    expect((await fetch(`${odd.url}/.well-known/oauth-authorization-server/tenant:acme/t(1)*`)).status).toBe(200);
    expect((await fetch(`${odd.url}/.well-known/oauth-authorization-server/tenantXYZ/t(1)*`)).status).toBe(404);
    expect(await odd.stop()).toBe(0);
  });

  // CONTRACT §6: ES256 signing publishes jwks_uri and the public keys only
  it('signs with ES256 from a PEM key, publishes its public JWK Set, honours TTL and failure limit', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const server = await startServer({
      PORT: '0',
      SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, 'es256.db')}`,
      TOKEN_SIGNING_KEY: pem,
      TOKEN_ISSUER: 'https://api.example.test',
      TOKEN_TTL_SECONDS: '120',
      TOKEN_FAILURE_LIMIT: '2',
    });
    const metadata = await json(await fetch(`${server.url}/.well-known/oauth-authorization-server`));
    expect(metadata.issuer).toBe('https://api.example.test');
    expect(metadata.jwks_uri).toBe('https://api.example.test/.well-known/jwks.json');
    const jwks = await json(await fetch(`${server.url}/.well-known/jwks.json`));
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', kid: expect.any(String) });
    expect(jwks.keys[0]).not.toHaveProperty('d');

    const demo = server.demo!;
    const issued = await json(await requestToken(server.url, demo, 'basic'));
    expect(issued.expires_in).toBe(120);
    const header = JSON.parse(Buffer.from(issued.access_token.split('.')[0], 'base64url').toString());
    expect(header).toMatchObject({ alg: 'ES256', typ: 'at+jwt', kid: jwks.keys[0].kid });
    expect((await fetch(`${server.url}/api/whoami`, { headers: bearer(issued.access_token) })).status).toBe(200);

    // TOKEN_FAILURE_LIMIT=2: two failures get 401, every attempt after them 429
    const wrong = { ...demo, secret: 'esas_wrong' };
    expect((await requestToken(server.url, wrong, 'body')).status).toBe(401);
    expect((await requestToken(server.url, wrong, 'body')).status).toBe(401);
    const limited = await requestToken(server.url, demo, 'body');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await server.stop()).toBe(0);
  });

  // docs/private-key-jwt.md: MAX_ASSERTION_LIFETIME_SECONDS lowers the longest assertion lifetime;
  // ACCEPT_TOKEN_ENDPOINT_AUDIENCE=1 accepts TOKEN_ISSUER's origin + /oauth/token as an untyped assertion's audience.
  it('MAX_ASSERTION_LIFETIME_SECONDS and ACCEPT_TOKEN_ENDPOINT_AUDIENCE reach the library', async () => {
    const store = `sqlite:${join(dir, 'assertions.db')}`;
    const server = await startServer({
      PORT: '0',
      SERVICE_ACCOUNTS_STORE: store,
      TOKEN_ISSUER: 'https://api.example.test',
      MAX_ASSERTION_LIFETIME_SECONDS: '300',
      ACCEPT_TOKEN_ENDPOINT_AUDIENCE: '1',
    });
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const keyFile = join(dir, 'assertions-public.pem');
    writeFileSync(keyFile, publicKey.export({ format: 'pem', type: 'spki' }).toString());
    const clientId = server.demo!.clientId;
    await runCliJson(['key', 'add', clientId, '--public-key', keyFile, '--store', store]);
    const now = Math.floor(Date.now() / 1000);
    const post = async (aud: string, lifetime: number) => {
      const assertion = await new SignJWT({ iss: clientId, sub: clientId, aud, iat: now, exp: now + lifetime, jti: randomBytes(16).toString('hex') })
        .setProtectedHeader({ alg: 'ES256' })
        .sign(privateKey);
      const body = new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: assertion });
      return (await fetch(`${server.url}/oauth/token`, { method: 'POST', body })).status;
    };
    expect(await post('https://api.example.test/oauth/token', 300)).toBe(200);
    expect(await post('https://api.example.test', 300)).toBe(200);
    expect(await post('https://api.example.test', 600)).toBe(401);
    expect(await server.stop()).toBe(0);
    const { code, output } = await runFailingServer({ PORT: '0', SERVICE_ACCOUNTS_STORE: store, ACCEPT_TOKEN_ENDPOINT_AUDIENCE: 'yes' });
    expect(code).toBe(1);
    expect(output).toMatch(/ACCEPT_TOKEN_ENDPOINT_AUDIENCE must be/);
  });

  it('refuses a TOKEN_SIGNING_KEY shorter than 32 characters with exit code 1', async () => {
    const { code, output } = await runFailingServer({ PORT: '0', SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, 'short.db')}`, TOKEN_SIGNING_KEY: 'too-short' });
    expect(code).toBe(1);
    expect(output).toMatch(/TOKEN_SIGNING_KEY must be .*32 characters/);
    expect(output).not.toMatch(/^\s+at /m);
  });

  // "a PEM-encoded EC P-256 private key for ES256": another curve is refused, naming the variable.
  it('refuses a TOKEN_SIGNING_KEY on another curve than P-256 with exit code 1, naming the variable', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'secp384r1' });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const { code, output } = await runFailingServer({ PORT: '0', SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, 'p384.db')}`, TOKEN_SIGNING_KEY: pem });
    expect(code).toBe(1);
    expect(output).toMatch(/^error: .*P-256.* \(from TOKEN_SIGNING_KEY\)$/m);
    expect(output).not.toContain('PRIVATE KEY');
  });

  withPostgres('example server on PostgreSQL without TOKEN_SIGNING_KEY', (postgresUrl) => {
    it('refuses to start on PostgreSQL without TOKEN_SIGNING_KEY (exit 1, clear message)', async () => {
      const { code, output } = await runFailingServer({ PORT: '0', SERVICE_ACCOUNTS_STORE: postgresUrl });
      expect(code).toBe(1);
      expect(output).toMatch(/TOKEN_SIGNING_KEY is required with a PostgreSQL store/);
      expect(output).not.toMatch(/Listening on/);
    });
  });
});

/** A job created on one instance is in the other's jobs and activity history (one shared store). */
async function expectSharedHistory(from: string, to: string, token: string): Promise<void> {
  const created = await fetch(`${from}/api/jobs`, {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json' },
    body: JSON.stringify({ title: `shared ${randomBytes(4).toString('hex')}` }),
  });
  expect(created.status).toBe(201);
  const job = (await json(created)) as { id: string };
  const activity = (await json(await fetch(`${to}/api/activity`, { headers: bearer(token) }))) as { action: string; target?: { id: string } }[];
  expect(activity.find((e) => e.action === 'job.created' && e.target?.id === job.id)).toBeDefined();
  const jobs = (await json(await fetch(`${to}/api/jobs`, { headers: bearer(token) }))) as { id: string }[];
  expect(jobs.map((j) => j.id)).toContain(job.id);
}

describe('two example servers sharing one SQLite store', TIMEOUT, () => {
  afterAll(killAllServers);
  it('provision one demo account between them, share tokens and the activity history, and both refuse a revoked secret', async () => {
    const store = `sqlite:${join(dir, 'shared.db')}`;
    const env = { PORT: '0', SERVICE_ACCOUNTS_STORE: store, TOKEN_ISSUER: 'http://api.shared.test' };
    // Started together on an empty store: exactly one provisions the demo account.
    const servers = await Promise.all([startServer(env), startServer(env)]);
    const demos = servers.map((s) => s.demo).filter((d) => d !== undefined);
    expect(demos).toHaveLength(1);
    expect(await runCliJson<unknown[]>(['list', '--store', store])).toHaveLength(1);
    const demo = demos[0]!;
    const token = await getToken(servers[0]!.url, demo);
    await expectSharedHistory(servers[0]!.url, servers[1]!.url, token);
    await revokeAndMeasure('SQLite', store, servers, demo, token);
  });
});

withPostgres('two example servers sharing one PostgreSQL store', (postgresUrl) => {
  describe('two example servers sharing one PostgreSQL store (POSTGRES_URL)', TIMEOUT, () => {
    // Declared first, so the schema is dropped after the servers are stopped (after hooks run last to first).
    const schemas = usePostgresSchemas(postgresUrl);
    const schema = schemas.name('sa_example_');
    afterAll(killAllServers);

    it('provision one demo account between them, share tokens and the activity history, and both refuse a revoked secret', async () => {
      const store = schemas.url(schema);
      const env = { PORT: '0', SERVICE_ACCOUNTS_STORE: store, TOKEN_ISSUER: 'http://api.pg.test', TOKEN_SIGNING_KEY: randomBytes(32).toString('base64') };
      // Started together on an empty database: exactly one provisions the demo account.
      const [a, b] = await Promise.all([startServer(env), startServer(env)]);
      const demos = [a!.demo, b!.demo].filter((d) => d !== undefined);
      expect(demos).toHaveLength(1);
      expect(await runCliJson<unknown[]>(['list', '--store', store])).toHaveLength(1);
      const demo = demos[0]!;
      const token = await getToken(a!.url, demo);
      expect((await fetch(`${b!.url}/api/whoami`, { headers: bearer(token) })).status).toBe(200);
      await expectSharedHistory(a!.url, b!.url, token);
      // A third instance started later on a store that has accounts provisions nothing.
      const c = await startServer(env);
      expect(c.demo).toBeUndefined();
      expect(await c.stop()).toBe(0);
      await revokeAndMeasure('PostgreSQL', store, [a!, b!], demo, token);
      expect(await a!.stop()).toBe(0);
      expect(await b!.stop()).toBe(0);
    });
  });
});
