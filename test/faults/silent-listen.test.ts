/**
 * docs/stores.md: an instance is ready once it can read its store, and changes made elsewhere still
 * reach it by polling while its notification connection is down. Injected for real: the instance
 * reaches its private PostgreSQL cluster through a proxy that makes every connection half-open the
 * moment it sends `LISTEN` (the server runs the command, its answer never arrives, nothing closes the
 * socket), as when a network path dies silently. Start-up must not wait on that connection for as long
 * as TCP takes to give up.
 */
import { performance } from 'node:perf_hooks';
import { afterEach, expect, it, vi } from 'vitest';
import { createPostgresAccountStore } from '../../src/sql/index.js';
import { notificationChannel } from '../../src/sql/postgres-account-store.js';
import { DelayingProxy } from '../helpers/delaying-proxy.js';
import { withPrivatePostgres } from '../helpers/private-postgres.js';
import { failOnUncaughtErrors } from '../helpers/uncaught-errors.js';
import { callApi, eventually, issue, startInstance } from './pg-instance.js';

withPrivatePostgres('a LISTEN connection that goes silent', (cluster) => {
  failOnUncaughtErrors();
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  it('becomes ready within seconds, reports the feed reconnecting, still hears of a revocation within 1 s, and listens again once the path is back', async () => {
    const schema = 'fault_silent_path';
    // Another instance, on a healthy path, creates the account and revokes its secret.
    const other = await startInstance(cluster().url, schema);
    closers.push(() => other.close());
    const account = await other.sa.admin.createAccount({ name: schema });
    const revoker = createPostgresAccountStore({ connectionString: cluster().url, schema, listen: false });
    closers.push(() => revoker.close());
    const proxy = await DelayingProxy.start(cluster().port);
    closers.push(() => proxy.close());
    proxy.silenceAfter = 'LISTEN';

    const started = performance.now();
    // storeTimeout 1000: the first readiness check gives up before the LISTEN deadline; a later one
    // (as a readiness probe repeats) finds the instance ready.
    const instance = await startInstance(`postgres://postgres@127.0.0.1:${proxy.port}/postgres`, schema, 1000);
    closers.push(() => instance.close());
    const readyAfter = performance.now() - started;
    console.log(`LISTEN silent: ready after ${readyAfter.toFixed(0)} ms`);
    expect(readyAfter).toBeLessThan(10_000);
    expect((await instance.sa.health()).changeFeed.status).toBe('reconnecting');

    const token = await issue(instance, account.clientId, account.secret.value);
    expect((await callApi(instance, token)).status).toBe(200);
    await revoker.revokeSecret(account.clientId, account.secret.id, new Date());
    const revokedAt = performance.now();
    await eventually(() => callApi(instance, token), 401, 5000);
    expect(performance.now() - revokedAt).toBeLessThan(1000);

    proxy.silenceAfter = undefined;
    await vi.waitFor(async () => expect((await instance.sa.health()).changeFeed.status).toBe('push'), { timeout: 40_000, interval: 100 });
    // The silent connections were closed, not left open: the server has two listeners, the live one
    // and the other instance's.
    await vi.waitFor(async () => expect(await cluster().backendPids({ listeningOn: notificationChannel(schema) })).toHaveLength(2), { timeout: 10_000 });
  });
});
