/**
 * The shell samples of README.md and docs/*.md (issue 5: "Every code sample in README and docs is
 * type-checked or run by a test so it cannot rot"): every documented `service-accounts` command is run
 * with the built bin on a throw-away SQLite store, and every documented `curl` call is run against a
 * live app, with the placeholders (`$CLIENT_ID`, `esa_4fT0...`, the host) filled in.
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminApi, createAdminRouter } from '../../src/index.js';
import { createTestApp, watchAdmin } from '../helpers/create-app.js';
import { CLI_BIN, runCliJson } from '../helpers/run-cli.js';
import { listen, type LiveServer } from '../hardening/helpers.js';
import { shellCommands } from '../helpers/doc-scratch.js';

const ROOT = resolve(__dirname, '..', '..');

/** A fresh EC P-256 public key, as `openssl pkey -pubout` writes it. */
const newPublicKeyPem = (): string => generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'pem', type: 'spki' }).toString();
const CURL = '/usr/bin/curl';

const files = [join(ROOT, 'README.md'), ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join(ROOT, 'docs', f))];
const samples = files.flatMap((file) => shellCommands(readFileSync(file, 'utf8')).map((command) => ({ file: file.slice(ROOT.length + 1), command })));

/** The `service-accounts ...` part of a command (up to a pipe, `)` or `;`). */
function cliPart(command: string): string | undefined {
  // The bin, not the package name (`npm install express-service-accounts`).
  const match = /(?:^|[\s($])(?:npx )?service-accounts( [^|);]*)/.exec(command);
  return match ? `service-accounts${match[1]!.trimEnd()}` : undefined;
}
const cliSamples = samples.flatMap((s) => (cliPart(s.command) ? [{ ...s, cli: cliPart(s.command)! }] : []));
const curlSamples = samples.filter((s) => /^curl /.test(s.command));

function bash(script: string, env: Record<string, string>, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile('bash', ['-c', script], { env: { PATH: process.env.PATH ?? '', HOME: cwd, ...env }, cwd, timeout: 30_000 }, (error, stdout, stderr) =>
      done({ code: error ? ((error.code as number | undefined) ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('shell samples in README.md and docs/*.md', () => {
  let dir: string;
  let server: LiveServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'esa-shell-samples-'));
    // The public key file the `key add` samples register (docs/cli.md makes it with openssl).
    writeFileSync(join(dir, 'public.pem'), newPublicKeyPem());
    // The store docs/cli.md names, relative to the samples' working directory.
    const store = 'sqlite:./prod.db';
    const created = await runCliJson<{ clientId: string; secret: { id: string; value: string } }>(
      ['create', '--name', 'docs-samples', '--scope', 'jobs:read jobs:write', '--store', store],
      { cwd: dir },
    );
    // `federated add` samples register on an account of their own: the one above reaches the
    // credential limit with the secrets and keys the other samples add.
    const federatedAccount = await runCliJson<{ clientId: string }>(['create', '--name', 'docs-federated', '--store', store], { cwd: dir });
    // The routes the docs call: the example server's (docs/observability.md: /readyz, /metrics).
    const exporter = new PrometheusExporter({ preventServerStart: true });
    const { sa, store: appStore } = createTestApp({ telemetry: { meterProvider: new MeterProvider({ readers: [exporter] }) } });
    const account = await sa.admin.createAccount({ name: 'docs-curl', scopes: ['jobs:write'] });
    const app = express();
    app.use('/oauth', sa.tokenRouter);
    app.get('/api/whoami', sa.requireBearer(), (req, res) => res.json(req.serviceAccount));
    app.get('/readyz', async (_req, res) => {
      const report = await sa.health();
      res.status(report.store.status === 'ok' ? 200 : 503).json(report);
    });
    app.get('/metrics', (req, res) => exporter.getMetricsRequestHandler(req, res));
    // docs/admin-api.md: the admin router, with $ADMIN_TOKEN acting as an operator, over its own admin
    // API on the same store (watched so the secrets its creating answers show are allowed there once).
    const admin = createAdminApi({ store: appStore, secretHashRounds: 4 });
    watchAdmin(admin, 'in-its-response');
    const adminToken = 'docs-admin-token';
    const operator = { actor: { id: 'docs', name: 'Docs operator' }, allClientAccounts: true } as const;
    app.use('/admin', createAdminRouter({ admin, authorize: (req) => (req.headers.authorization === `Bearer ${adminToken}` ? operator : undefined) }));
    // A second secret of the account, for the revocation sample (the token above stays valid).
    const second = await sa.admin.addSecret(account.clientId);
    // A federated credential of the account, for the revocation sample of docs/admin-api.md.
    const federated = await sa.admin.addFederatedCredential(account.clientId, { issuer: 'https://oidc.cluster.example.com', subject: 'system:serviceaccount:docs:sample' });
    // docs/revocation-and-introspection.md: the resource server's account, which may introspect.
    const introspector = await sa.admin.createAccount({ name: 'python-worker', scopes: ['token:introspect'] });
    // docs/resources.md and the "Set the resources" sample of docs/admin-api.md: an account of their own,
    // allowed the billing API, so the account the other samples share keeps its tokens for the server's audience.
    const billing = await sa.admin.createAccount({ name: 'billing-exporter', resources: ['https://billing.example.com'] });
    server = await listen(app);
    const token = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${account.clientId}:${account.secret.value}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'client_credentials' }),
    }).then((res) => res.json() as Promise<{ access_token: string }>);
    env = {
      SERVICE_ACCOUNTS_STORE: store,
      CLI_CLIENT_ID: created.clientId,
      CLI_SECRET_ID: created.secret.id,
      CLI_FEDERATED_CLIENT_ID: federatedAccount.clientId,
      CLIENT_ID: account.clientId,
      CLIENT_SECRET: account.secret.value,
      ACCESS_TOKEN: token.access_token,
      ADMIN_TOKEN: adminToken,
      SECRET_ID: second.id,
      CREDENTIAL_ID: federated.id,
      INTROSPECTOR_ID: introspector.clientId,
      INTROSPECTOR_SECRET: introspector.secret.value,
      RESOURCES_CLIENT_ID: billing.clientId,
      RESOURCES_CLIENT_SECRET: billing.secret.value,
    };
  });

  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds the samples', () => {
    expect(cliSamples.length).toBeGreaterThanOrEqual(8);
    expect(curlSamples.length).toBeGreaterThanOrEqual(4);
  });

  // Revocation last: it retires the secret the other commands' account started with.
  const ordered = [...cliSamples].sort((a, b) => Number(a.cli.includes('revoke')) - Number(b.cli.includes('revoke')));
  it.each(ordered.map((s) => [`${s.file}: ${s.cli}`, s.cli] as const))('runs %s', async (_name, cli) => {
    const script = cli
      .replace(/^service-accounts/, `node ${JSON.stringify(CLI_BIN)}`)
      .replace(/esa_4fT0\.\.\./g, / federated /.test(cli) ? '"$CLI_FEDERATED_CLIENT_ID"' : '"$CLI_CLIENT_ID"')
      .replace(/"\$CLIENT_ID" "\$SECRET_ID"/, '"$CLI_CLIENT_ID" "$CLI_SECRET_ID"')
      // The guides' `"$CLIENT_ID"` (the account `create` printed): here the one created on the CLI's store.
      .replace(/"\$CLIENT_ID"/g, '"$CLI_CLIENT_ID"');
    // Each `key add` registers a public key of its own (a second copy of a live key is refused).
    const keyFile = /--public-key (\S+)/.exec(cli)?.[1];
    if (keyFile && keyFile !== '-') writeFileSync(join(dir, keyFile), newPublicKeyPem());
    // Each `federated add` gets an account of its own: the samples' credentials would otherwise fill
    // the shared account past its limit of live credentials (docs/configuration.md#maxsecretsperaccount).
    // So does each `secret add` (the rotation guide adds several, with and without --expires-in).
    const ownAccount = async (name: string): Promise<string> =>
      (await runCliJson<{ clientId: string }>(['create', '--name', name, '--store', env.SERVICE_ACCOUNTS_STORE!], { cwd: dir })).clientId;
    const own: Record<string, string> = /^service-accounts federated add /.test(cli)
      ? { CLI_FEDERATED_CLIENT_ID: await ownAccount('docs-federated') }
      : /^service-accounts secret add /.test(cli)
        ? { CLI_CLIENT_ID: await ownAccount('docs-rotation') }
        : {};
    const run = await bash(`${script} > /dev/null`, { ...env, ...own }, dir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });

  // The token's own revocation (docs/revocation-and-introspection.md) last: the other calls use the token.
  const orderedCurl = [...curlSamples].sort((a, b) => Number(a.command.includes('/oauth/revoke')) - Number(b.command.includes('/oauth/revoke')));
  it.skipIf(!existsSync(CURL) && process.env.CI !== 'true').each(orderedCurl.map((s) => [`${s.file}: ${s.command.slice(0, 70)}`, s.command] as const))(
    'runs %s',
    async (_name, command) => {
      // A sample about resources runs on the account allowed one (see beforeAll).
      const ownAccount = /\/resources\s|resource=/.test(command)
        ? command.replace(/\$CLIENT_ID\b/g, '$RESOURCES_CLIENT_ID').replace(/\$CLIENT_SECRET\b/g, '$RESOURCES_CLIENT_SECRET')
        : command;
      const script = ownAccount.replace(/https?:\/\/(localhost:3000|api\.example\.com)/g, server.url).replace(/^curl /, 'curl -q --noproxy "*" -o /dev/null -w "%{http_code}" ');
      const run = await bash(script, env, dir);
      // docs/admin-api.md: creating an account, a secret or a federated credential answers 201 Created.
      const creates = /-X POST \S+\/admin\/service-accounts(\/\S+\/(secrets|federated))?\s/.test(command);
      expect(run.stdout).toBe(creates ? '201' : '200');
    },
  );
});
