/**
 * docs/federated-credentials.md, "Try it on one machine", run as written: the local issuer of the page
 * (its TypeScript block with tsx and its CommonJS twin with node), the example server started with the
 * variables the page gives, and the page's CLI and curl lines run by bash with only the ports filled
 * in. Each issuer's token is exchanged for an access token; sent again, it is refused as a replay, and
 * the server's console says so (the `debug` lines, on under NODE_ENV=development).
 */
import { spawn, type ChildProcess, execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { killAllServers, startServer, type ExampleServer } from '../examples/example-server.js';

const ROOT = resolve(__dirname, '..', '..');
const GUIDE = readFileSync(join(ROOT, 'docs', 'federated-credentials.md'), 'utf8');
const SECTION = GUIDE.split('\n## Try it on one machine\n')[1]?.split('\n## ')[0] ?? '';

/** The fenced blocks of the section, by language, in order. */
function blocks(lang: string): string[] {
  return [...SECTION.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].filter((m) => m[1] === lang).map((m) => m[2]!);
}

mkdirSync(join(ROOT, '.tmp'), { recursive: true });
const dir = mkdtempSync(join(ROOT, '.tmp', 'federated-try-'));
const children: ChildProcess[] = [];
let server: ExampleServer;
let serverPort: number;

function bash(script: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile('bash', ['-c', script], { cwd: dir, env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) =>
      done({ code: error ? ((error.code as number | undefined) ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Starts one of the page's issuers with `command` and resolves with the issuer URL it printed. */
async function startIssuer(command: string, port: number): Promise<string> {
  // In a process group of its own: `npx tsx` runs the issuer two processes further down, and the
  // group is what afterAll kills, so no issuer outlives the test.
  const child = spawn('bash', ['-c', `exec ${command}`], { cwd: dir, env: { ...process.env, ISSUER_PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  children.push(child);
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return vi.waitFor(
    () => {
      const url = /^issuer (http:\/\/\S+)$/m.exec(output)?.[1];
      if (!url) throw new Error(`the issuer did not start: ${output}`);
      return url;
    },
    { timeout: 30_000, interval: 50 },
  );
}

/** The page's lines with the ports of this run: the server's 3000 and the issuer's 4000. */
const localize = (text: string, issuerPort: number): string =>
  text.replaceAll('localhost:3000', `localhost:${serverPort}`).replaceAll('127.0.0.1:4000', `127.0.0.1:${issuerPort}`);

beforeAll(async () => {
  expect(SECTION, 'the "Try it on one machine" section').not.toBe('');
  writeFileSync(join(dir, 'dev-issuer.ts'), blocks('ts')[0]!);
  writeFileSync(join(dir, 'dev-issuer.js'), blocks('js')[0]!);
  serverPort = await freePort();
  // "TOKEN_ISSUER=http://localhost:3000 FEDERATION_ALLOW_HTTP_LOOPBACK=1 npm start"
  const start = blocks('text').find((b) => /npm start/.test(b))!;
  const vars = Object.fromEntries([...localize(start, 0).matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
  expect(vars).toEqual({ TOKEN_ISSUER: `http://localhost:${serverPort}`, FEDERATION_ALLOW_HTTP_LOOPBACK: '1' });
  server = await startServer({ ...vars, PORT: String(serverPort), SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, 'sa.db')}`, NODE_ENV: 'development' });
}, 90_000);

afterAll(async () => {
  for (const child of children) {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group has already ended
    }
  }
  await killAllServers();
  rmSync(dir, { recursive: true, force: true });
});

describe('docs/federated-credentials.md: try it on one machine', { timeout: 90_000 }, () => {
  it.each([
    ['TypeScript', () => blocks('text').find((b) => /dev-issuer\.ts/.test(b))!.trim()],
    ['CommonJS', () => /\(CommonJS: `(node dev-issuer\.js)`\.\)/.exec(SECTION)![1]!],
  ])('%s issuer: the CLI prints the audience the server requires, and the token is exchanged for an access token', async (_lang, command) => {
    const issuerPort = await freePort();
    const issuerUrl = await startIssuer(command(), issuerPort);
    expect(issuerUrl).toBe(`http://127.0.0.1:${issuerPort}`);

    const [cliLines, exchangeLines] = blocks('text').filter((b) => /service-accounts|oauth\/token/.test(b));
    expect(cliLines).toMatch(/npx service-accounts federated add/);
    // "in this repository, use `npx tsx src/cli/main.ts` wherever `npx service-accounts` is written"
    const cli = localize(cliLines!, issuerPort).replaceAll('npx service-accounts', `npx tsx ${JSON.stringify(join(ROOT, 'src', 'cli', 'main.ts'))}`);
    const exchange = localize(exchangeLines!, issuerPort);
    const env = { SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, 'sa.db')}` };
    const run = await bash(`set -e\n${cli}\necho "client $CLIENT_ID"\necho "---"\n${exchange}\necho\necho "---"\n${exchange.split('\n').slice(1).join('\n')}`, env);
    expect(run.stderr).toBe('');
    const [registered, exchanged, replayed] = run.stdout.split('---\n');
    const clientId = /^client (esa_\w+)$/m.exec(registered!)?.[1];
    expect(clientId).toBeDefined();
    // What the server actually requires: its issuer, as TOKEN_ISSUER told the CLI.
    expect(registered).toMatch(new RegExp(`audience:\\s+http://localhost:${serverPort}\\n`));
    expect(registered).toContain(`issuer:          http://127.0.0.1:${issuerPort}`);
    expect(JSON.parse(exchanged!.trim())).toEqual({ access_token: expect.any(String), expires_in: 3600, token_type: 'Bearer' });
    // "sending one again is a replay, refused 401 invalid_client", and the console says why.
    expect(JSON.parse(replayed!.trim())).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
    await vi.waitFor(() => expect(server.output).toMatch(new RegExp(`service-accounts: token request refused \\(invalid_client\\): replayed_assertion for client ${clientId} `)), { timeout: 5000 });
  });
});
