/**
 * The clients of docs/private-key-jwt.md (the blocks after `<!-- key-pair-client: NAME -->`: jose and
 * openid-client 6 in TypeScript and CommonJS, and PyJWT where python3 has it), run as written against
 * a live app whose URL (`API_URL`, a loopback http URL) differs from its issuer identifier (`ISSUER`,
 * https://api.test), as getting-started's does: the private key is step 1's `private.pem`, its public
 * half registered on the account as step 2 does, and the environment is what step 3 exports.
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_ISSUER } from '../helpers/create-app.js';
import { listen, type LiveServer } from '../hardening/helpers.js';

const ROOT = resolve(__dirname, '..', '..');
const GUIDE = readFileSync(join(ROOT, 'docs', 'private-key-jwt.md'), 'utf8');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

function block(name: string): string {
  const found = new RegExp(`^<!-- key-pair-client: ${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)^\`\`\`$`, 'm').exec(GUIDE);
  if (!found) throw new Error(`docs/private-key-jwt.md: no block after <!-- key-pair-client: ${name} -->`);
  return found[1]!;
}

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(command: string, args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((done) => {
    execFile(command, args, { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 30_000 }, (error, stdout, stderr) =>
      done({ code: error ? ((error.code as number | undefined) ?? 1) : 0, stdout, stderr }),
    );
  });
}

// Inside the repository (.tmp/ is ignored by git), so the blocks' imports resolve from its node_modules.
mkdirSync(join(ROOT, '.tmp'), { recursive: true });
const dir = mkdtempSync(join(ROOT, '.tmp', 'key-pair-guide-'));
let server: LiveServer;
let close: () => Promise<void>;
let env: Record<string, string>;
let tokenRequests = 0;

beforeAll(async () => {
  // Step 1: `openssl genpkey ... -out private.pem` writes an unencrypted PKCS #8 key, as this does.
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  writeFileSync(join(dir, 'private.pem'), privateKey.export({ format: 'pem', type: 'pkcs8' }));
  const test = createTestApp({ now: () => new Date() });
  const account = await test.sa.admin.createAccount({ name: 'key-pair-client' });
  // Step 2.
  await test.sa.admin.addKey(account.clientId, publicKey.export({ format: 'pem', type: 'spki' }).toString());
  server = await listen((req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    if (req.url === '/oauth/token') tokenRequests++;
    test.app(req, res);
  });
  close = () => test.sa.close();
  // Step 3's exports.
  env = { API_URL: server.url, ISSUER: TEST_ISSUER, CLIENT_ID: account.clientId };
});

afterAll(async () => {
  await server?.close();
  await close?.();
  rmSync(dir, { recursive: true, force: true });
});

const clients: [string, string, string, (file: string) => [string, string[]], RegExp][] = [
  ['jose, TypeScript', 'jose', 'jose.mts', (file) => [TSX, [file]], /^true\n$/],
  ['jose, CommonJS', 'jose-js', 'jose.cjs', (file) => [process.execPath, [file]], /^true\n$/],
  ['openid-client, TypeScript', 'openid-client', 'openid-client.mts', (file) => [TSX, [file]], /^\d+\n$/],
  ['openid-client, CommonJS', 'openid-client-js', 'openid-client.cjs', (file) => [process.execPath, [file]], /^\d+\n$/],
];

describe('docs/private-key-jwt.md: the clients of step 3, as written', { timeout: 60_000 }, () => {
  it.each(clients)('%s gets a token from the server at API_URL with an assertion made out to ISSUER', async (_name, marker, fileName, command, printed) => {
    const file = join(dir, fileName);
    writeFileSync(file, block(marker));
    const before = tokenRequests;
    const [bin, args] = command(file);
    const result = await run(bin, args, env);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(printed);
    expect(result.code).toBe(0);
    expect(tokenRequests - before).toBe(1);
  });

  it.each([
    ['jose, TypeScript', 'jose', 'jose-refused.mts', TSX],
    ['jose, CommonJS', 'jose-js', 'jose-refused.cjs', process.execPath],
  ])('%s: a refused request fails with its status and error, not with "cannot read access_token"', async (_name, marker, fileName, bin) => {
    const file = join(dir, fileName);
    writeFileSync(file, block(marker));
    // The two values the guide tells apart, mixed up: the server's URL given as the issuer.
    const result = await run(bin, [file], { ...env, ISSUER: env.API_URL! });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('token request failed: 401 {"error":"invalid_client"');
  });

  // Debian's python3-jwt installs into /usr/bin/python3's path, which a pyenv or venv python3 first on PATH does not see.
  const withPyJwt = (bin: string): Promise<string | undefined> =>
    new Promise((done) => execFile(bin, ['-c', 'import jwt, requests'], (error) => done(error ? undefined : bin)));
  const python = (async () => (await withPyJwt('python3')) ?? (await withPyJwt('/usr/bin/python3')))();
  it('PyJWT: the same (skipped with a note without python3, PyJWT and requests)', async (context) => {
    const bin = await python;
    if (!bin) {
      console.warn('docs/private-key-jwt.md Python client not run: python3 with PyJWT and requests is not installed');
      context.skip();
      return;
    }
    writeFileSync(join(dir, 'client.py'), block('python'));
    const result = await run(bin, ['client.py'], env);
    expect(result.stdout).toBe('True\n');
    expect(result.code).toBe(0);
  });
});
