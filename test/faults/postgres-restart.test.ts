/**
 * Faults injected for real on a private PostgreSQL cluster while requests are in flight: a crash
 * (`pg_ctl stop -m immediate`), every backend terminated (`pg_terminate_backend`), and connections
 * refused (server down). docs/stores.md: "a store that cannot be reached answers 503
 * temporarily_unavailable ... and service resumes without a restart"; docs/security.md: revocation takes
 * effect everywhere within 1 second. The process must never crash (an `'error'` event of a pg client
 * nobody listens to would): `failOnUncaughtErrors` fails the test if one escapes.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresAccountStore } from '../../src/sql/index.js';
import { failOnUncaughtErrors } from '../helpers/uncaught-errors.js';
import { withPrivatePostgres } from '../helpers/private-postgres.js';
import { callApi, eventually, expectUnavailable, issue, lockSchema, requestToken, startInstance, type PgInstance } from './pg-instance.js';

const UNKNOWN_CLIENT = 'esa_unknownunknownunknown1';

withPrivatePostgres('PostgreSQL faults', (cluster) => {
  failOnUncaughtErrors();
  const open: PgInstance[] = [];
  const locks: Array<{ release(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(locks.splice(0).map((lock) => lock.release()));
    await cluster().ensureStarted();
    await Promise.all(open.splice(0).map((instance) => instance.close()));
  });

  /** Two instances on one schema (the second revokes), an account, and a token accepted by the first. */
  async function setUp(schema: string) {
    const first = await startInstance(cluster().url, schema);
    open.push(first);
    const second = await startInstance(cluster().url, schema);
    open.push(second);
    const account = await first.sa.admin.createAccount({ name: schema });
    const token = await issue(first, account.clientId, account.secret.value);
    expect((await callApi(first, token)).status).toBe(200);
    return { schema, first, second, account, token };
  }

  /** After the fault: 200 again without a restart, and a revocation made elsewhere takes effect. */
  async function expectRecovery(setup: Awaited<ReturnType<typeof setUp>>): Promise<void> {
    const { first, second, account, token } = setup;
    await eventually(() => callApi(first, token), 200);
    await eventually(() => requestToken(first, account.clientId, account.secret.value), 200);
    await second.sa.admin.revokeSecret(account.clientId, account.secret.id);
    await eventually(() => callApi(first, token), 401, 1000);
    expect((await requestToken(first, account.clientId, account.secret.value)).status).toBe(401);
  }

  /** Store calls and requests that wait on a lock held in another session, so they are in flight. */
  async function inFlight(setup: Awaited<ReturnType<typeof setUp>>) {
    const { first, account } = setup;
    const lock = await lockSchema(cluster(), setup.schema);
    locks.push(lock);
    const calls = {
      // The store alone: handled rejections must stay handled.
      find: first.store.findAccount(account.clientId),
      revoke: first.store.revokeSecret(account.clientId, account.secret.id, new Date()),
      // Through the app: an unknown client goes to the store.
      token: requestToken(first, UNKNOWN_CLIENT, account.secret.value),
    };
    for (const call of Object.values(calls)) call.catch(() => undefined);
    await cluster().waitForLockWaiters(3);
    return { lock, calls };
  }

  describe('pg_ctl stop -m immediate while queries are in flight', () => {
    it('answers 503 without crashing, then recovers without a restart, and revocation still works', async () => {
      const setup = await setUp('fault_stop');
      const { lock, calls } = await inFlight(setup);

      await cluster().stop('immediate');
      await expect(calls.find).rejects.toThrow();
      await expect(calls.revoke).rejects.toThrow();
      expectUnavailable(await calls.token);
      await lock.release();
      // Down: the cache no longer trusts itself, nothing is let through.
      await eventually(() => callApi(setup.first, setup.token), 503, 3000);
      expectUnavailable(await callApi(setup.first, setup.token));
      expectUnavailable(await requestToken(setup.first, setup.account.clientId, setup.account.secret.value));

      await cluster().start();
      await expectRecovery(setup);
    });
  });

  describe('pg_terminate_backend of every backend while queries are in flight', () => {
    it('answers 503 for the interrupted calls without crashing, then serves and revokes again', async () => {
      const setup = await setUp('fault_terminate');
      const { lock, calls } = await inFlight(setup);

      expect(await cluster().terminateBackends([lock.pid])).toBeGreaterThanOrEqual(3);
      await expect(calls.find).rejects.toThrow();
      await expect(calls.revoke).rejects.toThrow();
      expectUnavailable(await calls.token);
      await lock.release();

      await expectRecovery(setup);
    });
  });

  describe('connections refused (server down)', () => {
    it('answers 503 while it is down, then recovers without a restart', async () => {
      const setup = await setUp('fault_refused');
      await cluster().stop('fast');
      try {
        await expect(setup.first.store.findAccount(setup.account.clientId)).rejects.toThrow();
        await eventually(() => callApi(setup.first, setup.token), 503, 3000);
        expectUnavailable(await requestToken(setup.first, setup.account.clientId, setup.account.secret.value));
        expectUnavailable(await requestToken(setup.first, UNKNOWN_CLIENT, setup.account.secret.value));
        expect(setup.first.watchErrors.length).toBeGreaterThan(0);
      } finally {
        await cluster().start();
      }
      await expectRecovery(setup);
    });
  });

  describe('a pool given by the host', () => {
    it('keeps the clients the store checks out from crashing the process on pg_ctl stop -m immediate', async () => {
      const pool = new pg.Pool({ connectionString: cluster().url });
      pool.on('error', () => undefined); // the host's own duty, for its idle clients
      const store = createPostgresAccountStore({ pool, schema: 'fault_host_pool' });
      try {
        await store.init();
        const lock = await lockSchema(cluster(), 'fault_host_pool');
        locks.push(lock);
        const pending = store.findAccount(UNKNOWN_CLIENT);
        pending.catch(() => undefined);
        await cluster().waitForLockWaiters(1);
        await cluster().stop('immediate');
        await expect(pending).rejects.toThrow();
        await cluster().start();
        expect(await store.findAccount(UNKNOWN_CLIENT)).toBeUndefined();
      } finally {
        await store.close();
        await pool.end();
      }
    });
  });
});
