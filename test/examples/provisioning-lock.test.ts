/**
 * The lock under which the example server provisions its demo account on a SQLite store: an instance
 * that dies holding it (stopped by SIGTERM mid-provisioning, killed, crashed) must not hold up the
 * next start, and nothing but the holder's own release or death may end it. On PostgreSQL: every store
 * URL the store accepts.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { parseAccountStoreUrl } from 'express-service-accounts/sql';
import { provisioningLock } from '../../examples/server/provisioning-lock.js';
import { ROOT } from '../helpers/run-cli.js';
import { withPostgres } from '../helpers/with-postgres.js';

const root = mkdtempSync(join(tmpdir(), 'esa-example-lock-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => {
  vi.useRealTimers();
});

/** Takes the lock of `filename` in another process, which is then killed while it holds it. */
async function dieHoldingTheLock(filename: string): Promise<void> {
  const script = [
    `const { provisioningLock } = require('./examples/server/provisioning-lock.ts');`,
    `provisioningLock({ kind: 'sqlite', filename: ${JSON.stringify(filename)} })(() => { console.log('held'); return new Promise(() => {}); });`,
  ].join('\n');
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((done) => child.once('exit', done));
  await new Promise<void>((done) => child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('held') && done()));
  child.kill('SIGKILL');
  await exited;
}

describe.skipIf(process.platform === 'win32')('example server provisioning lock (SQLite)', () => {
  it('is free at once when the instance that held it died', async () => {
    const filename = join(root, `${randomUUID()}.db`);
    await dieHoldingTheLock(filename);
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] });
    let ran = false;
    const taken = provisioningLock({ kind: 'sqlite', filename })(async () => {
      ran = true;
    });
    // One second of the lock's own clock: far less than any stale-lock delay.
    await vi.advanceTimersByTimeAsync(1000);
    expect(ran).toBe(true);
    await taken;
  });

  it('runs one holder at a time within a process', async () => {
    const filename = join(root, `${randomUUID()}.db`);
    const lock = provisioningLock({ kind: 'sqlite', filename });
    const events: string[] = [];
    let release!: () => void;
    const first = lock(async () => {
      events.push('first in');
      await new Promise<void>((done) => (release = done));
      events.push('first out');
    });
    await vi.waitFor(() => expect(events).toEqual(['first in']));
    const second = lock(async () => {
      events.push('second in');
    });
    release();
    await Promise.all([first, second]);
    expect(events).toEqual(['first in', 'first out', 'second in']);
  });
});

withPostgres('example server provisioning lock (PostgreSQL)', (postgresUrl) => {
  describe('example server provisioning lock (PostgreSQL)', () => {
    // The host given as `?host=` (how a socket folder is named), which the store accepts: it is no WHATWG URL.
    it('takes its advisory lock with a store URL whose host is in the query', async () => {
      const url = new URL(postgresUrl);
      const store = parseAccountStoreUrl(`postgres://${url.username}@${url.pathname}?host=${url.hostname}&port=${url.port || '5432'}&schema=lock_test`);
      expect(await provisioningLock(store)(async () => 'ran')).toBe('ran');
    });
  });
});
