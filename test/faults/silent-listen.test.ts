/**
 * docs/stores.md: "A `LISTEN` that gets no answer within 2 seconds is given up and tried again (the feed
 * reports `reconnecting` meanwhile), so a silent connection never holds up `sa.ready()`". Injected for
 * real: the instance reaches its private PostgreSQL cluster through a proxy that makes every connection
 * half-open the moment it sends `LISTEN` (the server runs the command, its answer never arrives,
 * nothing closes the socket), as when a network path dies silently. With the default settings, the
 * first readiness check passes, changes still arrive by polling, and listening resumes once the path
 * is back.
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { afterEach, expect, it, vi } from 'vitest';
import type { OperationalEvent } from '../../src/index.js';
import { createPostgresAccountStore } from '../../src/sql/index.js';
import { notificationChannel } from '../../src/sql/postgres-account-store.js';
import { listen } from '../hardening/helpers.js';
import { newAccount } from '../store/helpers.js';
import { createTestApp } from '../helpers/create-app.js';
import { DelayingProxy } from '../helpers/delaying-proxy.js';
import { withPrivatePostgres } from '../helpers/private-postgres.js';
import { failOnUncaughtErrors } from '../helpers/uncaught-errors.js';
import { callApi, eventually, issue, startInstance, type PgInstance } from './pg-instance.js';

withPrivatePostgres('a connection that goes silent', (cluster) => {
  failOnUncaughtErrors();
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  it('passes its first readiness check with the default settings, reports the feed reconnecting, still hears of a revocation within 1 s, and listens again once the path is back', async () => {
    const schema = 'fault_silent_path';
    // Another instance, on a healthy path, creates the account; a store of its own revokes the secret.
    const other = await startInstance(cluster().url, schema);
    closers.push(() => other.close());
    const account = await other.sa.admin.createAccount({ name: schema });
    const revoker = createPostgresAccountStore({ connectionString: cluster().url, schema, listen: false });
    closers.push(() => revoker.close());
    const proxy = await DelayingProxy.start(cluster().port);
    closers.push(() => proxy.close());
    proxy.silenceAfter = 'LISTEN';

    const events: OperationalEvent[] = [];
    const store = createPostgresAccountStore({ connectionString: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`, schema });
    const { app, sa } = createTestApp({ store, onEvent: (event) => void events.push(event) });
    closers.push(() => sa.close());
    const started = performance.now();
    await sa.ready(); // the first check, as a readiness probe's first call: no retry
    console.log(`LISTEN silent: ready after ${(performance.now() - started).toFixed(0)} ms`);
    const server = await listen(app);
    closers.push(() => server.close());
    const instance = { server } as PgInstance;
    expect((await sa.health()).changeFeed.status).toBe('reconnecting');

    const token = await issue(instance, account.clientId, account.secret.value);
    expect((await callApi(instance, token)).status).toBe(200);
    await revoker.revokeSecret(account.clientId, account.secret.id, new Date());
    const revokedAt = performance.now();
    await eventually(() => callApi(instance, token), 401, 5000);
    expect(performance.now() - revokedAt).toBeLessThan(1000);

    proxy.silenceAfter = undefined;
    await vi.waitFor(async () => expect((await sa.health()).changeFeed.status).toBe('push'), { timeout: 40_000, interval: 100 });
    // The silent connections were closed, not left open: the server has two listeners, the live one
    // and the other instance's.
    await vi.waitFor(async () => expect(await cluster().backendPids({ listeningOn: notificationChannel(schema) })).toHaveLength(2), { timeout: 10_000 });
    // The store was never reported unavailable, and each change of the feed's state was told once.
    expect(events.filter((event) => event.type === 'store.unavailable')).toEqual([]);
    const states = events.flatMap((event) => (event.type === 'change_feed.state_changed' ? [event.state] : []));
    expect(states).toEqual(['reconnecting', 'push']);
  });

  it('finds a listening connection whose path died silently within 7 s, reports the feed reconnecting, and listens again on a fresh connection', async () => {
    // docs/stores.md: "A listening connection is checked every 5 seconds; one that does not answer within
    // 2 seconds is given up".
    const schema = 'fault_silent_listener';
    const proxy = await DelayingProxy.start(cluster().port);
    closers.push(() => proxy.close());
    const errors: unknown[] = [];
    // Polled only every 10 s, so that a change heard within 2 s came by push.
    const store = createPostgresAccountStore({ connectionString: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`, schema, pollIntervalMs: 10_000, onWatchError: (error) => void errors.push(error) });
    closers.push(() => store.close());
    await store.init();
    const writer = createPostgresAccountStore({ connectionString: cluster().url, schema, listen: false });
    closers.push(() => writer.close());
    const states: string[] = [];
    const heard: string[] = [];
    closers.push(await store.watch!((clientId) => void heard.push(clientId), { onStateChange: (state) => void states.push(state) }));
    expect(states).toEqual(['push']);
    // A healthy listening connection passes its checks (its LISTEN, repeated) and stays.
    await vi.waitFor(() => expect(proxy.connectionsThatSent('LISTEN', 2)).toBe(1), { timeout: 8000, interval: 100 });
    expect(states).toEqual(['push']);
    expect(errors).toEqual([]);

    expect(proxy.blackholeConnectionsThatSent('LISTEN')).toBe(1);
    const silentAt = performance.now();
    await vi.waitFor(() => expect(states).toContain('reconnecting'), { timeout: 10_000, interval: 20 });
    const found = performance.now() - silentAt;
    console.log(`silent LISTEN connection given up after ${found.toFixed(0)} ms`);
    expect(found).toBeLessThan(9000); // 5 s to the next check, 2 s for its answer, and room for a busy machine
    expect(String(errors[0])).toContain('did not answer a check within 2000 ms');
    expect(heard).toContain('*'); // pushes may have been lost: caches stop trusting themselves
    const givenUpAt = performance.now();
    await vi.waitFor(() => expect(states.at(-1)).toBe('push'), { timeout: 10_000, interval: 20 });
    console.log(`listening again ${(performance.now() - givenUpAt).toFixed(0)} ms later`);
    expect(states).toEqual(['push', 'reconnecting', 'push']);
    // The silent connection was closed: one session of this store listens, the fresh one.
    await vi.waitFor(async () => expect(await cluster().backendPids({ listeningOn: notificationChannel(schema) })).toHaveLength(1), { timeout: 5000 });
    // The fresh connection delivers.
    const account = await writer.createAccount(newAccount());
    await vi.waitFor(() => expect(heard).toContain(account.clientId), { timeout: 2000, interval: 20 });
  });

  it('keeps a listening connection whose check was answered in time but read late, the event loop being busy', async () => {
    const schema = 'fault_busy_listener';
    const pool = new pg.Pool({ connectionString: cluster().url });
    pool.on('error', () => undefined);
    closers.push(() => pool.end());
    // The event loop is kept busy for 2.1 s (a long synchronous task) right after the first check (the
    // second LISTEN) is sent: the server answers at once, but the answer can be read only after the
    // check's deadline.
    let stalled = false;
    let listens = 0;
    pool.on('acquire', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
        const result = query(...args);
        if (typeof args[0] === 'string' && args[0].startsWith('LISTEN') && ++listens === 2) {
          stalled = true;
          process.nextTick(() => {
            const until = performance.now() + 2100;
            while (performance.now() < until);
          });
        }
        return result;
      };
    });
    const errors: unknown[] = [];
    const store = createPostgresAccountStore({ pool, schema, onWatchError: (error) => void errors.push(error) });
    closers.push(() => store.close());
    await store.init();
    const states: string[] = [];
    closers.push(await store.watch!(() => {}, { onStateChange: (state) => void states.push(state) }));
    await vi.waitFor(() => expect(stalled).toBe(true), { timeout: 8000, interval: 50 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The feed's own watchdog may have seen the stall (no poll for 2 s); the push channel was kept.
    expect(errors.filter((error) => String(error).includes('LISTEN'))).toEqual([]);
    expect(states).not.toContain('reconnecting');
    expect(await cluster().backendPids({ listeningOn: notificationChannel(schema) })).toHaveLength(1);
  });

  it('replaces a LISTEN connection cut while LISTEN is in flight once, and releases every connection when unwatched and closed', async () => {
    const schema = 'fault_cut_listen';
    const proxy = await DelayingProxy.start(cluster().port);
    closers.push(() => proxy.close());
    proxy.cutNextOn = 'LISTEN';
    const errors: unknown[] = [];
    const store = createPostgresAccountStore({ connectionString: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`, schema, onWatchError: (error) => void errors.push(error) });
    await store.init();
    const states: string[] = [];
    const stop = await store.watch!(() => {}, { onStateChange: (state) => void states.push(state) });
    const listening = () => cluster().backendPids({ listeningOn: notificationChannel(schema) });
    await vi.waitFor(() => expect(states.at(-1)).toBe('push'), { timeout: 10_000, interval: 20 });
    await new Promise((resolve) => setTimeout(resolve, 1500)); // a second retry, if one was scheduled, has run
    expect(proxy.cutNextOn).toBeUndefined(); // the cut happened
    expect(await listening()).toHaveLength(1);
    await stop();
    const closed = await Promise.race([store.close().then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('still open after 5 s'), 5000))]);
    expect(closed).toBe('closed');
    await vi.waitFor(async () => expect(await listening()).toHaveLength(0), { timeout: 5000 });
  });

  it('does not stay unready for good when its first read of the change feed never answers: ready within seconds once the path is back', async () => {
    const schema = 'fault_silent_start';
    const direct = createPostgresAccountStore({ connectionString: cluster().url, schema, listen: false });
    closers.push(() => direct.close());
    await direct.init(); // the schema exists: the instance's first read of the feed is its first query that waits
    const proxy = await DelayingProxy.start(cluster().port);
    proxy.silenceAfter = 'max("seq")';
    const store = createPostgresAccountStore({ connectionString: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`, schema });
    const { sa } = createTestApp({ store });
    closers.push(() => sa.close());
    // Closed first (closers run in reverse): the silent read holds its pooled connection until then.
    closers.push(() => proxy.close());
    await expect(sa.ready()).rejects.toThrow('timed out');
    proxy.silenceAfter = undefined;
    // Every later check would join the silent read, were it not given up after 5 seconds.
    const back = performance.now();
    await vi.waitFor(() => sa.ready(), { timeout: 20_000, interval: 200 });
    console.log(`first feed read silent: ready ${(performance.now() - back).toFixed(0)} ms after the path came back`);
    expect((await sa.health()).changeFeed.status).toBe('push');
  });
});

