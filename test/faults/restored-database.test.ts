/**
 * A PostgreSQL server brought back on the same port from a backup taken earlier (a restore, or a
 * standby promoted with the last transactions lost): the change feed's sequence numbers start again
 * below those the running instances have already read. docs/security.md: a revocation takes effect on
 * every instance within 1 second. Injected for real on a private cluster: a cold copy of its data
 * directory is taken, changes are made, and the copy is put back while the instances keep running.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, it, vi } from 'vitest';
import { withPrivatePostgres } from '../helpers/private-postgres.js';
import { failOnUncaughtErrors } from '../helpers/uncaught-errors.js';
import { callApi, eventually, issue, startInstance, type PgInstance } from './pg-instance.js';

const run = promisify(execFile);

withPrivatePostgres('a database restored from a backup', (cluster) => {
  failOnUncaughtErrors();
  const open: PgInstance[] = [];
  afterEach(async () => {
    await cluster().ensureStarted();
    await Promise.all(open.splice(0).map((instance) => instance.close()));
  });

  /** Stops the server and copies its data directory; `restore()` stops it, puts the copy back and starts it. */
  async function coldBackup(): Promise<{ restore(): Promise<void> }> {
    const copy = join(cluster().dir, 'backup');
    await cluster().stop('fast');
    await run('cp', ['-a', cluster().dataDir, copy]);
    await cluster().start();
    return {
      restore: async () => {
        await cluster().stop('fast');
        await run('rm', ['-rf', cluster().dataDir]);
        await run('cp', ['-a', copy, cluster().dataDir]);
        await cluster().start();
      },
    };
  }

  it('a revocation made after the restore reaches an instance that read changes made before it, within 1 s', async () => {
    const schema = 'fault_restored';
    const first = await startInstance(cluster().url, schema);
    open.push(first);
    const second = await startInstance(cluster().url, schema);
    open.push(second);
    const account = await second.sa.admin.createAccount({ name: 'restored' });
    const bySecret = await issue(first, account.clientId, account.secret.value);
    const other = await issue(first, account.clientId, account.secret.value);
    const backup = await coldBackup();
    // Changes after the backup, which the first instance reads (and the restore loses).
    for (let i = 0; i < 5; i++) await second.sa.admin.createAccount({ name: `lost ${i}` });
    await eventually(() => callApi(first, bySecret), 200);
    await backup.restore();
    await eventually(() => callApi(first, bySecret), 200);
    await eventually(() => callApi(second, bySecret), 200);
    // The first instance's feed reads changes again (not `failing`, when its caches trust themselves less).
    await vi.waitFor(async () => expect((await first.sa.health()).changeFeed).toEqual({ status: 'push' }), { timeout: 15_000, interval: 100 });

    const { jti } = JSON.parse(Buffer.from(other.split('.')[1]!, 'base64url').toString()) as { jti: string };
    await second.sa.admin.revokeToken(jti);
    await eventually(() => callApi(first, other), 401, 1000);
    await second.sa.admin.revokeSecret(account.clientId, account.secret.id);
    await eventually(() => callApi(first, bySecret), 401, 1000);
  });
});
