/**
 * Spawns the example server (examples/server.ts through tsx's loader, in one process) and waits for
 * its "Listening on URL" line. Every server started is remembered so a test file can stop them all,
 * even after a failure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { vi } from 'vitest';
import { leakGuard } from '../helpers/leak-guard.js';
import { ROOT } from '../helpers/run-cli.js';

export interface DemoCredentials {
  readonly clientId: string;
  readonly secret: string;
}

export class ExampleServer {
  output = '';
  url = '';
  exitCode: number | null | undefined;
  readonly exited: Promise<number | null>;

  constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    this.exited = new Promise((done) => child.once('exit', (code) => done((this.exitCode = code))));
    // The secret-leak guard checks its logs once it has closed: the demo secret may appear only in the
    // banner that provisions it (its `client secret:` line and the curl command 3 lines below), nothing else.
    leakGuard().watchChild({
      channel: `example server (pid ${child.pid})`,
      creationBlockLines: 4,
      text: () => this.output,
      closed: new Promise<void>((done) => child.once('close', () => done())),
    });
  }

  /** The demo account the server printed, or undefined when it provisioned none. */
  get demo(): DemoCredentials | undefined {
    const clientId = /client ID:\s+(esa_\S+)/.exec(this.output)?.[1];
    const secret = /client secret:\s+(esas_\S+)/.exec(this.output)?.[1];
    return clientId && secret ? { clientId, secret } : undefined;
  }

  /** Stops the server with SIGTERM and resolves with its exit code. */
  async stop(): Promise<number | null> {
    if (this.exitCode === undefined) this.child.kill('SIGTERM');
    return this.exited;
  }
}

const running = new Set<ExampleServer>();

/** Every server still running is killed (SIGKILL): for afterEach/afterAll. */
export async function killAllServers(): Promise<void> {
  await Promise.all(
    [...running].map(async (server) => {
      if (server.exitCode === undefined) server.child.kill('SIGKILL');
      await server.exited;
      running.delete(server);
    }),
  );
}
process.once('exit', () => {
  for (const server of running) server.child.kill('SIGKILL');
});

const BASE_ENV_REMOVED = [
  'PORT', 'SERVICE_ACCOUNTS_STORE', 'TOKEN_TTL_SECONDS', 'TOKEN_ISSUER', 'TOKEN_FAILURE_LIMIT', 'TOKEN_SIGNING_KEY', 'ADMIN_TOKEN', 'ADMIN_TENANT_TOKENS',
  'FEDERATION_ALLOWED_ISSUERS', 'FEDERATION_ALLOW_PRIVATE_NETWORKS', 'FEDERATION_ALLOW_HTTP_LOOPBACK',
];

function spawnServer(env: Record<string, string | undefined>): ExampleServer {
  const merged: NodeJS.ProcessEnv = { ...process.env };
  for (const name of BASE_ENV_REMOVED) delete merged[name];
  for (const [name, value] of Object.entries(env)) if (value !== undefined) merged[name] = value;
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/server.ts'], { cwd: ROOT, env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
  const server = new ExampleServer(child);
  running.add(server);
  return server;
}

/** Starts the example server and resolves once it printed the URL it listens on. */
export async function startServer(env: Record<string, string | undefined>, timeoutMs = 30_000): Promise<ExampleServer> {
  const server = spawnServer(env);
  // Checked every 25 ms; resolves with undefined as soon as the server exits, so that fails at once.
  const url = await vi.waitFor(
    () => {
      const url = /Listening on (http:\/\/\S+)/.exec(server.output)?.[1];
      if (url !== undefined || server.exitCode !== undefined) return url;
      throw new Error(`example server did not start within ${timeoutMs} ms:\n${server.output}`);
    },
    { timeout: timeoutMs, interval: 25 },
  );
  if (url === undefined) throw new Error(`example server exited ${server.exitCode} before listening:\n${server.output}`);
  server.url = url;
  return server;
}

/** Runs the example server expecting it to refuse to start; resolves with its exit code and output. */
export async function runFailingServer(env: Record<string, string | undefined>): Promise<{ code: number | null; output: string }> {
  const server = spawnServer(env);
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 30_000);
  const code = await server.exited;
  clearTimeout(timer);
  running.delete(server);
  return { code, output: server.output };
}

/** POST /oauth/token with Basic or body credentials. */
export async function requestToken(
  url: string,
  credentials: DemoCredentials,
  how: 'basic' | 'body' | 'json',
  extra: Record<string, string> = {},
): Promise<Response> {
  const fields = { grant_type: 'client_credentials', ...extra };
  if (how === 'basic') {
    const basic = Buffer.from(`${encodeURIComponent(credentials.clientId)}:${encodeURIComponent(credentials.secret)}`).toString('base64');
    return fetch(`${url}/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }
  const body = { ...fields, client_id: credentials.clientId, client_secret: credentials.secret };
  return how === 'json'
    ? fetch(`${url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    : fetch(`${url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body).toString(),
      });
}

/** Gets an access token or fails the test. */
export async function getToken(url: string, credentials: DemoCredentials, extra: Record<string, string> = {}): Promise<string> {
  const res = await requestToken(url, credentials, 'basic', extra);
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token) throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

export const bearer = (token: string): { authorization: string } => ({ authorization: `Bearer ${token}` });
