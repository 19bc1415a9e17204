/**
 * docs/stores.md, "Connections that go silent": "a query that gets no answer within `queryTimeoutMs`
 * (30 seconds unless you set it) fails, and its connection is never used again: the server is asked
 * to cancel the query, so that a query that was only slow (waiting for a lock, say) stops instead of
 * running for nobody ... so `sa.close()` finishes within 2 seconds even on such a connection."
 * Injected for real: the backends behind a store's open connections are frozen (SIGSTOP), so those
 * connections stay open and answer nothing, as when the database fails over to another address or a
 * firewall starts dropping their packets, while new connections reach a healthy server; or another
 * session holds a lock the store's query waits for. Also "The change feed's polls ... keep at most two
 * reads in flight: when the database stalls every read of the feed ... account reads keep their
 * connections." And "the store's write transactions tell the server to end them when they sit idle
 * for 10 seconds".
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { afterEach, expect, it, vi } from 'vitest';
import { createPostgresAccountStore } from '../../src/sql/index.js';
import { ADVISORY_LOCK_NAMESPACE } from '../../src/sql/schema.js';
import { DelayingProxy } from '../helpers/delaying-proxy.js';
import { withPrivatePostgres } from '../helpers/private-postgres.js';
import { newAccount } from '../store/helpers.js';
import { failOnUncaughtErrors } from '../helpers/uncaught-errors.js';
import { eventually, expectUnavailable, requestToken, startInstance } from './pg-instance.js';

/** A client ID no account has (the lookup is still made, then answers "no such account"). */
const UNKNOWN_CLIENT = 'esa_0000000000000000000000';

withPrivatePostgres('queries on connections that went silent', (cluster) => {
  failOnUncaughtErrors();
  const closers: Array<() => Promise<void>> = [];
  const frozen: number[] = [];
  afterEach(async () => {
    for (const pid of frozen.splice(0)) cluster().resume(pid);
    for (const close of closers.splice(0).reverse()) await close();
  });

  /** Freezes every backend connected with `applicationName`; resolves with how many. */
  async function freezeConnections(applicationName: string): Promise<number> {
    const rows = await cluster().query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [applicationName]);
    for (const { pid } of rows) {
      cluster().pause(pid);
      frozen.push(pid);
    }
    return rows.length;
  }

  const urlFor = (applicationName: string): string => `${cluster().url}${cluster().url.includes('?') ? '&' : '?'}application_name=${applicationName}`;

  it('fails a query unanswered after queryTimeoutMs and serves the next queries on fresh connections, with every pooled connection silent', async () => {
    const pool = new pg.Pool({ connectionString: urlFor('silent_store'), max: 2 });
    pool.on('error', () => undefined);
    closers.push(() => pool.end());
    const store = createPostgresAccountStore({ pool, schema: 'fault_silent_queries', listen: false, queryTimeoutMs: 1000 });
    closers.push(() => store.close());
    await store.init();
    await Promise.all([store.findAccount(UNKNOWN_CLIENT), store.findAccount(UNKNOWN_CLIENT)]); // both connections open
    expect(await freezeConnections('silent_store')).toBe(2);

    const started = performance.now();
    const outcomes = [1, 2, 3].map((n) =>
      store.findAccount(UNKNOWN_CLIENT).then(
        (found) => ({ n, found: found ?? null, ms: performance.now() - started }),
        (error: Error) => ({ n, error: error.message, ms: performance.now() - started }),
      ),
    );
    // Without a deadline the third query waits for a pooled client that never comes back.
    const settled = await Promise.race([Promise.all(outcomes), new Promise<'pool never freed'>((resolve) => setTimeout(resolve, 8000, 'pool never freed'))]);
    console.log(`silent connections: ${JSON.stringify(settled)}`);
    expect(settled).not.toBe('pool never freed');
    const [first, second, third] = settled as Array<{ n: number; ms: number; error?: string; found?: null }>;
    for (const hung of [first!, second!]) {
      expect(hung.error).toBe('PostgreSQL did not answer a query within 1000 ms (queryTimeoutMs), so its connection was closed');
      expect(hung.ms).toBeGreaterThanOrEqual(990);
    }
    expect(third).toMatchObject({ found: null });
    expect(third!.error).toBeUndefined();
    // The pool holds fresh connections only, and they answer.
    expect(await store.findAccount(UNKNOWN_CLIENT)).toBeUndefined();
    expect(pool.totalCount).toBeLessThanOrEqual(2);
  });

  it("closes a silent connection whose query failed at the pool's own query_timeout (docs/deployment.md's pool), so the next queries get fresh connections", async () => {
    // docs/deployment.md: "A client-side query_timeout ... keep[s] a stuck database from holding connections".
    // pg fails the query at query_timeout but keeps the connection, query and all, in the pool.
    const pool = new pg.Pool({ connectionString: urlFor('silent_query_timeout'), max: 2, query_timeout: 500 });
    pool.on('error', () => undefined);
    closers.push(() => pool.end());
    const store = createPostgresAccountStore({ pool, schema: 'fault_silent_query_timeout', listen: false }); // queryTimeoutMs: 30 s
    closers.push(() => store.close());
    await store.init();
    await Promise.all([store.findAccount(UNKNOWN_CLIENT), store.findAccount(UNKNOWN_CLIENT)]); // both connections open
    expect(await freezeConnections('silent_query_timeout')).toBe(2);

    const failures = await Promise.all([1, 2].map(() => store.findAccount(UNKNOWN_CLIENT).then(() => undefined, (error: Error) => error.message)));
    for (const failure of failures) expect(failure).toBe("PostgreSQL did not answer a query within the pool's query_timeout, so its connection was closed");
    // Fresh connections answer, long before queryTimeoutMs (a silent connection kept would fail every query sent on it).
    await vi.waitFor(async () => expect(await store.findAccount(UNKNOWN_CLIENT)).toBeUndefined(), { timeout: 5000, interval: 50 });
    for (let i = 0; i < 4; i++) expect(await store.findAccount(UNKNOWN_CLIENT)).toBeUndefined();
  });

  it('cancels a query that was only slow (waiting for a lock) when it gives up on it: the server runs nothing for nobody, and a transaction fails with the same error', async () => {
    const schema = 'fault_slow_lock';
    const open = () => {
      const store = createPostgresAccountStore({ connectionString: urlFor('slow_lock'), schema, listen: false, queryTimeoutMs: 1000 });
      closers.push(() => store.close());
      return store;
    };
    // Another session holds the lock init() takes to change the schema (as another instance would).
    const holder = await cluster().session();
    closers.push(() => holder.end());
    await holder.query('begin');
    await holder.query('select pg_advisory_xact_lock(hashtext($1), hashtext($2))', [ADVISORY_LOCK_NAMESPACE, `${schema}:migrations`]);

    for (let attempt = 0; attempt < 3; attempt++) {
      const error = await open().init().then(() => undefined, (thrown: Error) => thrown);
      expect(error?.message).toBe('PostgreSQL did not answer a query within 1000 ms (queryTimeoutMs), so its connection was closed');
    }
    // Not one of the store's sessions is left waiting for the lock (before: one more per attempt).
    const waiting = await cluster().query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity where application_name = 'slow_lock' and wait_event_type = 'Lock'`,
    );
    expect(waiting[0]!.n).toBe(0);
    await holder.query('rollback');
    const store = open();
    await store.init();
    expect(await store.findAccount(UNKNOWN_CLIENT)).toBeUndefined();
  });

  it('keeps answering account reads while a lock on the change feed\'s table stalls every poll of the feed for 10 s (the polls do not use up the pool)', async () => {
    const schema = 'fault_stalled_feed';
    const store = createPostgresAccountStore({ connectionString: urlFor('stalled_feed'), schema });
    closers.push(() => store.close());
    await store.init();
    const states: string[] = [];
    closers.push(await store.watch!(() => {}, { onStateChange: (state) => void states.push(state) }));
    // Another session locks the feed's table, as a migration or VACUUM FULL would.
    const holder = await cluster().session();
    closers.push(() => holder.end());
    await holder.query('begin');
    await holder.query(`lock table "${schema}".account_changes in access exclusive mode`);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const started = performance.now();
    const read = await store.findAccount(UNKNOWN_CLIENT).then(
      () => 'answered',
      (error: Error) => error.message,
    );
    console.log(`feed stalled 10 s: an account read ${read} after ${(performance.now() - started).toFixed(0)} ms`);
    expect(read).toBe('answered');
    const [held] = await cluster().query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity where application_name = 'stalled_feed' and wait_event_type = 'Lock'`,
    );
    expect(held!.n).toBeLessThanOrEqual(2);
    expect(states.at(-1)).toBe('failing');
    await holder.query('rollback');
  });

  it("keeps answering account reads while the change feed's table is locked, on the smallest pool docs/deployment.md allows", async () => {
    // docs/deployment.md, "Pool size": "keep `max` at N or more", with its recommended pool settings.
    const documented = /keep `max` at (\d+) or more/.exec(readFileSync(join(__dirname, '..', '..', 'docs', 'deployment.md'), 'utf8'));
    expect(documented).not.toBeNull();
    const max = Number(documented![1]);
    const schema = 'fault_stalled_feed_small_pool';
    const pool = new pg.Pool({ connectionString: cluster().url, max, connectionTimeoutMillis: 2000, query_timeout: 5000 });
    pool.on('error', () => undefined);
    closers.push(() => pool.end());
    const store = createPostgresAccountStore({ pool, schema });
    closers.push(() => store.close());
    await store.init();
    closers.push(await store.watch!(() => {}));
    const holder = await cluster().session();
    closers.push(() => holder.end());
    await holder.query('begin');
    await holder.query(`lock table "${schema}".account_changes in access exclusive mode`);
    await cluster().waitForLockWaiters(2); // the feed's two reads in flight, each holding a connection
    const read = await store.findAccount(UNKNOWN_CLIENT).then(
      () => 'answered',
      (error: Error) => error.message,
    );
    expect(read, `pool of ${max}`).toBe('answered');
    await holder.query('rollback');
  });

  it('ends, within 10 s, a write transaction whose connection died silently while it held the change feed\'s lock, so other instances write again', async () => {
    const schema = 'fault_silent_transaction';
    const other = createPostgresAccountStore({ connectionString: cluster().url, schema, listen: false });
    closers.push(() => other.close());
    await other.init();
    const account = await other.createAccount(newAccount());
    const proxy = await DelayingProxy.start(cluster().port);
    closers.push(() => proxy.close());
    // Its own deadline is far off: closing its end of a dead path would not reach the server anyway.
    const dying = createPostgresAccountStore({ connectionString: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`, schema, listen: false, queryTimeoutMs: 120_000 });
    closers.push(() => dying.close());
    await dying.init();
    // The path dies just after the feed's lock was taken: the server waits for the next statement.
    proxy.blackholeAfter = `insert into "${schema}"."account_changes"`;
    const lost = dying.setAccountEnabled(account.clientId, false).then(
      () => 'written',
      () => 'failed',
    );
    await vi.waitFor(async () => {
      const [row] = await cluster().query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where state = 'idle in transaction'`);
      expect(row!.n).toBe(1);
    });
    const started = performance.now();
    await other.setAccountEnabled(account.clientId, false); // waits for the lock
    console.log(`a write transaction gone silent holding the feed's lock: another store wrote after ${(performance.now() - started).toFixed(0)} ms`);
    expect(performance.now() - started).toBeLessThan(12_000);
    expect(await other.findAccount(account.clientId)).toMatchObject({ enabled: false });
    proxy.blackholeAfter = undefined;
    await proxy.close(); // the lost connection goes with it
    expect(await lost).toBe('failed');
  });

  it('closes within 2 s more while a query waits on a silent connection (the default queryTimeoutMs is 30 s)', async () => {
    // Through a proxy that passes everything at once, only to see what the store has sent.
    const proxy = await DelayingProxy.start(cluster().port);
    closers.push(() => proxy.close());
    const url = `postgres://postgres@127.0.0.1:${proxy.port}/postgres?application_name=silent_close`;
    const store = createPostgresAccountStore({ connectionString: url, schema: 'fault_silent_close', listen: false });
    await store.init();
    expect(await store.findAccount(UNKNOWN_CLIENT)).toBeUndefined();
    expect(proxy.connectionsThatSent(UNKNOWN_CLIENT)).toBe(1);
    // One query may carry the client ID more than once (one parameter per table it reads).
    const perQuery = proxy.timesSent(UNKNOWN_CLIENT);
    expect(await freezeConnections('silent_close')).toBe(1);
    const waiting = store.findAccount(UNKNOWN_CLIENT).then(
      () => 'answered',
      (error: Error) => error.message,
    );
    // The query is on the frozen connection: its client ID has gone out on it a second time.
    await vi.waitFor(() => expect(proxy.connectionsThatSent(UNKNOWN_CLIENT, 2 * perQuery)).toBe(1), { timeout: 10_000, interval: 5 });

    const started = performance.now();
    const closed = await Promise.race([store.close().then(() => 'closed'), new Promise((resolve) => setTimeout(resolve, 10_000, 'still closing after 10 s'))]);
    const tookMs = performance.now() - started;
    console.log(`close() with a query on a silent connection: ${closed} after ${tookMs.toFixed(0)} ms`);
    expect(closed).toBe('closed');
    expect(tookMs).toBeGreaterThanOrEqual(990); // the query had 1 s more, then was cancelled
    expect(await waiting).toBe('PostgreSQL did not answer a query within the time left when the store closed, so its connection was closed');
  });

  it('answers token requests again within queryTimeoutMs once every connection of an instance went silent and its pool filled with waiting queries', async () => {
    const instance = await startInstance(urlFor('silent_instance'), 'fault_silent_instance', 1000, { queryTimeoutMs: 2000 });
    closers.push(() => instance.close());
    const account = await instance.sa.admin.createAccount({ name: 'silent instance' });
    // The pool's 10 connections open (one of them LISTENs), then all go silent, and more queries than
    // the pool holds wait on them or for them.
    await Promise.all(Array.from({ length: 10 }, () => instance.store.findAccount(UNKNOWN_CLIENT)));
    expect(await freezeConnections('silent_instance')).toBe(10);
    const frozenAt = performance.now();
    const waiting = Array.from({ length: 12 }, () => instance.store.findAccount(UNKNOWN_CLIENT).catch(() => undefined));

    expectUnavailable(await requestToken(instance, account.clientId, account.secret.value));
    const res = await eventually(() => requestToken(instance, account.clientId, account.secret.value), 200, 15_000);
    console.log(`every connection silent: token requests answered again after ${(performance.now() - frozenAt).toFixed(0)} ms (queryTimeoutMs 2000)`);
    expect(res.status).toBe(200);
    await Promise.all(waiting);
  });
});
