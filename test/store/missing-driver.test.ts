/**
 * A missing database driver is said at start, with the package and the command that installs it:
 * `ready()` rejects with it, and when nobody awaits `ready()` (requests only get 503) it is reported
 * once, to the `onEvent` hook or, without one, on stderr. The driver is really missing: each case runs
 * in a child process whose module resolution cannot find it (test/helpers/hide-packages.mjs).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '..', '..');
mkdirSync(join(ROOT, '.tmp'), { recursive: true });
const dir = mkdtempSync(join(ROOT, '.tmp', 'missing-driver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `source` (TypeScript, importing ../src), or the file `script` with `args`, with `hide` impossible to find. */
function runWithout(hide: string, name: string, source: string, args: readonly string[] = []): Promise<Run> {
  let file = source;
  if (name !== '') writeFileSync((file = join(dir, `${name}.ts`)), source);
  const env: NodeJS.ProcessEnv = { ...process.env, HIDE_PACKAGES: hide, NODE_ENV: 'production' };
  delete env.SERVICE_ACCOUNTS_STORE; // the CLI's default store, in the temporary folder
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--import', join(ROOT, 'test', 'helpers', 'hide-packages.mjs'), file, ...args],
      { cwd: dir, env, timeout: 30_000 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') return fail(error);
        done({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
  });
}

const src = (path: string): string => JSON.stringify(join(ROOT, 'src', path));
const instance = (store: string, extra = ''): string => `
import express from 'express';
import { createServiceAccounts } from ${src('index.js')};
import { openAccountStore } from ${src('sql/index.js')};
const sa = createServiceAccounts({
  store: openAccountStore(${JSON.stringify(store)}),
  issuer: 'https://api.example.com',
  signingKeys: { alg: 'HS256', key: 'k'.repeat(40) },
  ${extra}
});
const app = express();
app.use('/oauth', sa.tokenRouter);
`;

/** Two token requests, as an app that never awaited ready() gets them, then their statuses. */
const twoTokenRequests = `
const server = app.listen(0, async () => {
  const url = 'http://127.0.0.1:' + (server.address() as import('node:net').AddressInfo).port + '/oauth/token';
  const statuses: number[] = [];
  for (let i = 0; i < 2; i++) {
    const res = await fetch(url, { method: 'POST', headers: { authorization: 'Basic ' + Buffer.from('esa_a:esas_b').toString('base64'), 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' });
    statuses.push(res.status);
  }
  console.log('statuses ' + statuses.join(' '));
  server.close();
});
`;

const SQLITE_FIX = 'The SQLite account store needs the optional peer dependency "better-sqlite3", which is not installed: npm install better-sqlite3';

describe('a missing driver', () => {
  it('ready() rejects naming better-sqlite3 and the command that installs it', async () => {
    const run = await runWithout(
      'better-sqlite3',
      'ready-sqlite',
      `${instance('sqlite:./.data/sa.db', 'onEvent: () => {},')}
sa.ready().then(() => console.log('ready'), (error: Error) => console.log('rejected: ' + error.message));`,
    );
    expect(run.stdout.trim()).toBe(`rejected: Store call init failed: ${SQLITE_FIX}`);
  });

  it('ready() rejects naming pg and the command that installs it', async () => {
    const run = await runWithout(
      'pg',
      'ready-pg',
      `${instance('postgres://app@127.0.0.1:1/db', 'onEvent: () => {},')}
sa.ready().then(() => console.log('ready'), (error: Error) => console.log('rejected: ' + error.message));`,
    );
    expect(run.stdout.trim()).toBe(
      'rejected: Store call init failed: The PostgreSQL account store needs the optional peer dependency "pg", which is not installed: npm install pg',
    );
  });

  it('without anyone awaiting ready() and without an onEvent hook, it is written once on stderr while requests get 503', async () => {
    const run = await runWithout('better-sqlite3', 'unawaited', instance('sqlite:./.data/sa.db') + twoTokenRequests);
    expect(run.stdout.trim()).toBe('statuses 503 503');
    expect(run.stderr.trim().split('\n')).toEqual([`express-service-accounts: Store call init failed: ${SQLITE_FIX}`]);
  });

  it('the CLI says the same, from the same message', async () => {
    const run = await runWithout('better-sqlite3', '', join(ROOT, 'src', 'cli', 'main.ts'), ['list']);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`service-accounts: the account store is unavailable: ${SQLITE_FIX}\n`);
  });

  it('with an onEvent hook, the hook is told (store.unavailable, with the fix) and stderr stays quiet', async () => {
    const run = await runWithout(
      'better-sqlite3',
      'unawaited-event',
      instance('sqlite:./.data/sa.db', "onEvent: (event) => console.log('event ' + event.type + ': ' + ('error' in event ? event.error : '')),") + twoTokenRequests,
    );
    expect(run.stdout).toContain(`event store.unavailable: StoreUnavailableError: Store call init failed: ${SQLITE_FIX}`);
    expect(run.stdout.match(/event store\.unavailable/g)).toHaveLength(1);
    expect(run.stderr).toBe('');
  });
});
