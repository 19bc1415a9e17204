/**
 * CONTRACT §4 "1 on a failure (message on stderr, no stack trace)"; §5 the example server's
 * SERVICE_ACCOUNTS_STORE: a SQLite path whose folder cannot exist, such as one under /proc, made
 * Node's `mkdir(..., { recursive: true })` spin forever (procfs answers ENOENT for the child, Node then
 * "creates" the existing parent and retries): the CLI and the example server hung at 100% CPU instead
 * of failing with a message. The bounds below only tell a hang from an answer. Linux only.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/run-cli.js';

const onProcfs = existsSync('/proc/self');
const storeUrl = `sqlite:/proc/sa-audit-${process.pid}/x.db`;

/** Runs the example server, killing it after `ms`; resolves with its exit code (null when killed) and output. */
function runServer(env: Record<string, string>, ms: number): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, TOKEN_SIGNING_KEY: undefined, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (output += text));
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  return new Promise((done) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, output });
    }),
  );
}

describe.runIf(onProcfs)('a SQLite store under /proc', { timeout: 60_000 }, () => {
  it('service-accounts list fails with exit 1 and one line on stderr, within seconds', async () => {
    const run = await Promise.race([
      runCli(['list', '--store', storeUrl, '--json']),
      new Promise<'hung'>((done) => setTimeout(() => done('hung'), 25_000)),
    ]);
    expect(run, 'the CLI was still running after 25 s').not.toBe('hung');
    if (run === 'hung') return;
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^service-accounts: .+\n$/);
  });

  it('the example server exits 1 with a message (generated signing key)', async () => {
    const { code, output } = await runServer({ PORT: '0', SERVICE_ACCOUNTS_STORE: storeUrl }, 25_000);
    expect(code, `still running after 25 s:\n${output}`).toBe(1);
    expect(output).toMatch(/^error: /m);
  });

  it('the example server exits 1 with a message (TOKEN_SIGNING_KEY given)', async () => {
    const { code, output } = await runServer({ PORT: '0', SERVICE_ACCOUNTS_STORE: storeUrl, TOKEN_SIGNING_KEY: 'k'.repeat(40) }, 25_000);
    expect(code, `still running after 25 s:\n${output}`).toBe(1);
    expect(output).toMatch(/^error: /m);
  });
});
