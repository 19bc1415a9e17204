/**
 * docs/security.md, "Revocation timing": with the notification channel stalled or lost, a revoked
 * secret's tokens, and a single token put on the deny-list, are refused within 500 ms of the
 * revocation, on every instance. Measured for real on
 * a private PostgreSQL cluster: the instance's LISTEN backend is frozen (SIGSTOP), a secret is revoked
 * through another store, and, in the worst case, the whole server is frozen right after the revocation
 * commits (so the instance's next poll hangs). The test requests the protected route continuously and
 * measures how long after the revocation a request (timed when sent) with a token of that secret is still admitted.
 */
import { performance } from 'node:perf_hooks';
import { afterEach, expect, it } from 'vitest';
import { createPostgresAccountStore } from '../../src/sql/index.js';
import { notificationChannel } from '../../src/sql/postgres-account-store.js';
import { withPrivatePostgres } from '../helpers/private-postgres.js';
import { failOnUncaughtErrors } from '../helpers/uncaught-errors.js';
import { callApi, eventually, issue, startInstance } from './pg-instance.js';

/** The documented bound. */
const BOUND_MS = 500;
/** How long the test keeps asking after the revocation. */
const WINDOW_MS = 1500;

withPrivatePostgres('revocation with a stalled notification channel', (cluster) => {
  failOnUncaughtErrors();
  const frozen: number[] = [];
  const closers: Array<() => Promise<void>> = [];
  const thaw = (): void => {
    for (const pid of frozen.splice(0).reverse()) cluster().resume(pid);
  };
  afterEach(async () => {
    thaw();
    await Promise.all(closers.splice(0).map((close) => close()));
  });
  let rounds = 0;

  /**
   * Milliseconds after the revocation committed during which the token was still admitted (0: never),
   * on a fresh instance (healthy feed, warm cache) and schema of its own.
   */
  async function admittedAfterRevoke(stall: 'listen' | 'server', what: 'secret' | 'token' = 'secret'): Promise<number> {
    const schema = `fault_revocation_${++rounds}`;
    // storeTimeout 300: once the cache stops trusting itself, a frozen store is answered 503 quickly.
    const instance = await startInstance(cluster().url, schema, 300);
    closers.push(() => instance.close());
    const revoker = createPostgresAccountStore({ connectionString: cluster().url, schema, listen: false });
    closers.push(() => revoker.close());
    const account = await instance.sa.admin.createAccount({ name: schema });
    const token = await issue(instance, account.clientId, account.secret.value);
    expect((await callApi(instance, token)).status).toBe(200); // cached
    const listening = await cluster().backendPids({ listeningOn: notificationChannel(schema) });
    expect(listening).toHaveLength(1);
    await revoker.findAccount(account.clientId); // its connection is open before anything freezes
    const everyone = stall === 'server' ? [cluster().serverPid(), ...(await cluster().backendPids())] : [];
    try {
      for (const pid of listening) {
        cluster().pause(pid);
        frozen.push(pid);
      }
      if (what === 'secret') await revoker.revokeSecret(account.clientId, account.secret.id, new Date());
      else {
        // One token on the deny-list, as the revocation endpoint of another instance (or the CLI) puts it.
        const { jti, exp } = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { jti: string; exp: number };
        await revoker.revokeToken({ tokenId: jti, clientId: account.clientId, revokedAt: new Date(), expiresAt: new Date(exp * 1000) });
      }
      const revokedAt = performance.now();
      for (const pid of everyone.filter((p) => !listening.includes(p))) {
        cluster().pause(pid);
        frozen.push(pid);
      }
      let admitted = 0;
      while (performance.now() - revokedAt < WINDOW_MS) {
        // Timed by when the request was sent: one sent within the bound may be answered after it.
        const sentAfter = performance.now() - revokedAt;
        const res = await callApi(instance, token);
        if (res.status === 200) admitted = sentAfter;
        else expect([401, 503]).toContain(res.status);
      }
      return admitted;
    } finally {
      thaw();
      await eventually(() => callApi(instance, token), 401);
    }
  }

  it(`refuses a revoked token within ${BOUND_MS} ms while the LISTEN connection is frozen`, async () => {
    const admitted = await admittedAfterRevoke('listen');
    console.log(`LISTEN frozen: revoked token admitted up to ${admitted.toFixed(0)} ms after the revocation`);
    expect(admitted).toBeLessThanOrEqual(BOUND_MS);
  });

  it(`refuses a token on the deny-list within ${BOUND_MS} ms while the LISTEN connection is frozen`, async () => {
    const admitted = await admittedAfterRevoke('listen', 'token');
    console.log(`LISTEN frozen: token on the deny-list admitted up to ${admitted.toFixed(0)} ms after the revocation`);
    expect(admitted).toBeLessThanOrEqual(BOUND_MS);
  });

  it(`refuses a token on the deny-list within ${BOUND_MS} ms when the whole server freezes right after the revocation`, async () => {
    const measured: number[] = [];
    for (let round = 0; round < 3; round++) measured.push(await admittedAfterRevoke('server', 'token'));
    console.log(`server frozen: token on the deny-list admitted up to ${measured.map((ms) => ms.toFixed(0)).join(', ')} ms after the revocation`);
    for (const admitted of measured) expect(admitted).toBeLessThanOrEqual(BOUND_MS);
  });

  it(`refuses a revoked token within ${BOUND_MS} ms when the whole server freezes right after the revocation`, async () => {
    // Where the revocation falls between two polls varies: three rounds sample the worst case.
    const measured: number[] = [];
    for (let round = 0; round < 3; round++) measured.push(await admittedAfterRevoke('server'));
    console.log(`server frozen: revoked token admitted up to ${measured.map((ms) => ms.toFixed(0)).join(', ')} ms after the revocation`);
    for (const admitted of measured) expect(admitted).toBeLessThanOrEqual(BOUND_MS);
  });
});
