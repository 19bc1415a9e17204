/**
 * docs/admin-api.md followed as written: its mount sample (TypeScript with tsx, CommonJS with node)
 * started with the page's `export ADMIN_TOKEN=...` and a PORT, then every curl line of the page, in
 * page order, against it: they authenticate as the sample does, and each `$CLIENT_ID`, `$SECRET_ID`
 * and `$CREDENTIAL_ID` is taken from the answer the page says it comes from (Create, Add a secret,
 * Add a federated credential).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { scratchFolder, shellCommands } from '../helpers/doc-scratch.js';

const ROOT = resolve(__dirname, '..', '..');
const PAGE = readFileSync(join(ROOT, 'docs', 'admin-api.md'), 'utf8');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

/** The first ```lang block under "## Mounting it". */
function mountSample(lang: string): string {
  const section = PAGE.split('## Mounting it')[1]!;
  return new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'm').exec(section)![1]!;
}

function bash(script: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile('bash', ['-c', script], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 30_000 }, (error, stdout, stderr) =>
      done({ code: error ? ((error.code as number | undefined) ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Where the page says each variable comes from: the answer of the command that creates it. */
const SOURCES: [RegExp, string][] = [
  [/-X POST \S+\/admin\/service-accounts\s/, 'CLIENT_ID'],
  [/-X POST \S+\/secrets\b/, 'SECRET_ID'],
  [/-X POST \S+\/federated\b/, 'CREDENTIAL_ID'],
];
const FIELD: Record<string, string> = { CLIENT_ID: 'clientId', SECRET_ID: 'id', CREDENTIAL_ID: 'id' };

const { dir, children } = scratchFolder('admin-api-guide-');

/**
 * Runs the sample `file` with `bin` on a free port until it prints "listening"; resolves with the port and the process.
 * A port another process took between freePort's probe and the sample's listen stops the sample with
 * EADDRINUSE (its listen callback throws the error): then it is run again on another port.
 */
async function startSample(bin: string, file: string, adminToken: string): Promise<{ port: number; child: ChildProcess }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn(bin, [file], { cwd: dir, env: { PATH: process.env.PATH ?? '', PORT: String(port), ADMIN_TOKEN: adminToken }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      process.stderr.write(chunk);
    });
    const first = await new Promise<string | undefined>((done) => {
      createInterface({ input: child.stdout! }).once('line', done);
      child.once('close', () => done(undefined));
    });
    if (first === 'listening') return { port, child };
    if (first === undefined && stderr.includes('EADDRINUSE') && attempt < 3) continue;
    throw new Error(`the sample did not start on port ${port}: ${first === undefined ? `it exited (${child.exitCode})` : `it printed ${JSON.stringify(first)}`}\n${stderr}`);
  }
}

describe('docs/admin-api.md, as written', { timeout: 60_000 }, () => {
  it.each([
    ['TypeScript', 'ts', 'admin.mts', TSX],
    ['CommonJS', 'js', 'admin.cjs', process.execPath],
  ])('%s: the curl lines, in order, against the mount sample', async (_name, lang, fileName, bin) => {
    const tokenLine = shellCommands(PAGE).find((c) => c.startsWith('export ADMIN_TOKEN='));
    expect(tokenLine, 'the page says how to make ADMIN_TOKEN').toBeDefined();
    const adminToken = (await bash(`${tokenLine}\nprintf %s "$ADMIN_TOKEN"`, {})).stdout;
    expect(adminToken.length).toBeGreaterThanOrEqual(24);
    const file = join(dir, fileName);
    // The one change: a callback that says when it listens. Express 5 hands it a failure to listen
    // (the port taken) as its argument: it throws it, as the sample without a callback would (an
    // 'error' event nobody listens to), and never says "listening" then.
    const listen = 'app.listen(Number(process.env.PORT) || 3000);';
    expect(mountSample(lang)).toContain(listen);
    writeFileSync(
      file,
      mountSample(lang).replace(listen, "app.listen(Number(process.env.PORT) || 3000, (error) => {\n  if (error) throw error;\n  console.log('listening');\n});"),
    );
    const { port, child } = await startSample(bin, file, adminToken);
    const base = `http://127.0.0.1:${port}`;

    const env: Record<string, string> = { ADMIN_TOKEN: adminToken };
    const curls = shellCommands(PAGE).filter((c) => c.startsWith('curl '));
    expect(curls.length).toBeGreaterThanOrEqual(10);
    for (const command of curls) {
      const script = command.replace(/http:\/\/localhost:3000/g, base).replace(/^curl /, `curl -q --noproxy "*" -w '\\n%{http_code}' `);
      const run = await bash(script, env);
      const status = run.stdout.slice(run.stdout.lastIndexOf('\n') + 1);
      expect(status, `${command}\n${run.stdout}`).toMatch(/^20[01]$/);
      const source = SOURCES.find(([pattern]) => pattern.test(command));
      if (source) {
        const body = JSON.parse(run.stdout.slice(0, run.stdout.lastIndexOf('\n'))) as Record<string, string>;
        env[source[1]] = body[FIELD[source[1]]!]!;
      }
    }
    // Every variable the page uses was set by the answer it names.
    expect(Object.keys(env).sort()).toEqual(['ADMIN_TOKEN', 'CLIENT_ID', 'CREDENTIAL_ID', 'SECRET_ID']);
    child.kill();
  });
});
