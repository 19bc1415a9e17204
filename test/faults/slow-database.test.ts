/**
 * docs/security.md, "Revocation timing": "If, during a feed outage, the database still answers account
 * lookups, entries loaded meanwhile live at most 500 ms ... the 1-second bound holds through a partial
 * outage too." A slow database is such an outage: nothing fails, but every answer arrives 600 ms after
 * it was asked for (later than `pollIntervalMs + 200 ms`, sooner than the poll's 750 ms deadline), so
 * no poll of the change feed arrives in time. (Every account read then outlives the 500 ms an entry may
 * live, so each request whose read is not in flight reads the store itself.) Injected for real: the instance reaches its private
 * PostgreSQL cluster through a proxy that holds back every byte the server sends, and its LISTEN
 * backend is frozen (SIGSTOP), so only the poll could bring the revocation. A secret is revoked through
 * another store that reaches the server directly, while requests with its token arrive every 20 ms.
 */
import { performance } from 'node:perf_hooks';
import { afterEach, expect, it, vi } from 'vitest';
import type { ChangeFeedState } from '../../src/index.js';
import { createPostgresAccountStore } from '../../src/sql/index.js';
import { notificationChannel } from '../../src/sql/postgres-account-store.js';
import { DelayingProxy } from '../helpers/delaying-proxy.js';
import { withPrivatePostgres } from '../helpers/private-postgres.js';
import { failOnUncaughtErrors } from '../helpers/uncaught-errors.js';
import { callApi, eventually, issue, startInstance } from './pg-instance.js';

/** How late every answer of the database arrives. */
const LATENCY_MS = 600;
/** The lifetime of an account read while the change feed is failing. */
const BOUND_MS = 500;
/** How long the test sends requests after the revocation. */
const WINDOW_MS = 2000;

withPrivatePostgres('revocation while the database answers late', (cluster) => {
  failOnUncaughtErrors();
  const closers: Array<() => Promise<void>> = [];
  const frozen: number[] = [];
  const thaw = (): void => {
    for (const pid of frozen.splice(0)) cluster().resume(pid);
  };
  afterEach(async () => {
    thaw();
    for (const close of closers.splice(0).reverse()) await close();
  });
  let rounds = 0;

  it(`refuses a revoked secret's token to every request that arrives more than ${BOUND_MS} ms after the revocation, and reports the feed failing throughout`, async () => {
    for (let round = 0; round < 2; round++) {
      const schema = `fault_slow_${++rounds}`;
      const proxy = await DelayingProxy.start(cluster().port);
      closers.push(() => proxy.close());
      const instance = await startInstance(`postgres://postgres@127.0.0.1:${proxy.port}/postgres`, schema, 2000);
      closers.push(() => instance.close());
      const revoker = createPostgresAccountStore({ connectionString: cluster().url, schema, listen: false });
      closers.push(() => revoker.close());
      const states: ChangeFeedState[] = [];
      closers.push(await instance.store.watch!(() => {}, { onStateChange: (state) => states.push(state) }));
      const account = await instance.sa.admin.createAccount({ name: schema });
      const token = await issue(instance, account.clientId, account.secret.value);
      await revoker.findAccount(account.clientId); // its connection is open before anything slows down
      for (const pid of await cluster().backendPids({ listeningOn: notificationChannel(schema) })) {
        cluster().pause(pid);
        frozen.push(pid);
      }

      proxy.delayMs = LATENCY_MS;
      await vi.waitFor(() => expect(states.at(-1)).toBe('failing'), { timeout: 5000, interval: 20 });
      const failingFrom = states.length - 1;
      await new Promise((resolve) => setTimeout(resolve, 2000)); // several late polls
      expect((await callApi(instance, token)).status).toBe(200); // read while the feed fails

      await revoker.revokeSecret(account.clientId, account.secret.id, new Date());
      const revokedAt = performance.now();
      const answers: Array<Promise<{ sentAfter: number; status: number }>> = [];
      while (performance.now() - revokedAt < WINDOW_MS) {
        const sentAfter = performance.now() - revokedAt;
        answers.push(callApi(instance, token).then((res) => ({ sentAfter, status: res.status })));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const settled = await Promise.all(answers);
      const admitted = Math.max(0, ...settled.filter((a) => a.status === 200).map((a) => a.sentAfter));
      console.log(`database ${LATENCY_MS} ms late, LISTEN frozen: revoked secret's token admitted to requests sent up to ${admitted.toFixed(0)} ms after the revocation`);
      expect(admitted).toBeLessThanOrEqual(BOUND_MS);
      expect(settled.filter((a) => a.status !== 200 && a.status !== 401)).toEqual([]);
      // Not one late poll made the feed look healthy: caches never trusted it for longer.
      expect(states.slice(failingFrom)).toEqual(['failing']);

      proxy.delayMs = 0;
      thaw();
      await vi.waitFor(() => expect(states.at(-1)).toBe('push'), { timeout: 10_000, interval: 20 });
      await eventually(() => callApi(instance, token), 401);
    }
  });
});
