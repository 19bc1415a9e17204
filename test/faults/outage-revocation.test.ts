/**
 * docs/security.md: revoking a credential, disabling an account or deny-listing a token takes effect
 * on every instance within 1 second, and service resumes without a restart once PostgreSQL is back.
 * Injected for real on a private cluster: an instance started while the server is down (its host
 * calls `ready()` once, which fails), a kill -9 of an instance's `LISTEN` backend (the server then
 * restarts every backend) while requests run, and a server stopped (cleanly or as a crash) and
 * started again on the same port; then each kind of revocation is made through the other instance.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createPostgresAccountStore } from '../../src/sql/index.js';
import { notificationChannel } from '../../src/sql/postgres-account-store.js';
import { createTestApp } from '../helpers/create-app.js';
import { assertionFields, newKeyPair, signAssertion } from '../helpers/client-assertions.js';
import { json, listen, tokenRequest } from '../hardening/helpers.js';
import { failOnUncaughtErrors } from '../helpers/uncaught-errors.js';
import { withPrivatePostgres } from '../helpers/private-postgres.js';
import { callApi, eventually, expectUnavailable, issue, requestToken, startInstance, type PgInstance } from './pg-instance.js';

const NOW = Date.parse('2026-11-22T10:00:00Z') / 1000;

withPrivatePostgres('revocation around PostgreSQL faults', (cluster) => {
  failOnUncaughtErrors();
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await cluster().ensureStarted();
    await Promise.all(open.splice(0).map((instance) => instance.close()));
  });

  async function tokensOf(first: PgInstance, second: PgInstance, name: string) {
    const account = await second.sa.admin.createAccount({ name });
    const pair = await newKeyPair();
    const key = await second.sa.admin.addKey(account.clientId, pair.publicPem);
    const bySecret = await issue(first, account.clientId, account.secret.value);
    const res = await tokenRequest(first.server, assertionFields(await signAssertion(pair, account.clientId, { now: NOW })));
    expect(res.status, res.text).toBe(200);
    const byKey = (json(res) as { access_token: string }).access_token;
    const other = await issue(first, account.clientId, account.secret.value);
    for (const token of [bySecret, byKey, other]) expect((await callApi(first, token)).status).toBe(200);
    return { account, key, bySecret, byKey, other };
  }

  async function expectEachRevocationWithin1s(first: PgInstance, second: PgInstance, name: string): Promise<void> {
    const t = await tokensOf(first, second, name);
    const jti = (JSON.parse(Buffer.from(t.other.split('.')[1]!, 'base64url').toString()) as { jti: string }).jti;
    await second.sa.admin.revokeToken(jti);
    await eventually(() => callApi(first, t.other), 401, 1000);
    await second.sa.admin.revokeKey(t.account.clientId, t.key.id);
    await eventually(() => callApi(first, t.byKey), 401, 1000);
    expect((await callApi(first, t.bySecret)).status).toBe(200);
    await second.sa.admin.revokeSecret(t.account.clientId, t.account.secret.id);
    await eventually(() => callApi(first, t.bySecret), 401, 1000);
  }

  it('an instance started while PostgreSQL is down serves once it is back, and hears revocations', async () => {
    const schema = 'outage_start_down';
    // The schema exists already.
    const init = createPostgresAccountStore({ connectionString: cluster().url, schema });
    await init.init();
    await init.close();
    await cluster().stop('fast');
    const store = createPostgresAccountStore({ connectionString: cluster().url, schema });
    const { app, sa } = createTestApp({ store, storeTimeout: 1000 });
    const server = await listen(app);
    const first: PgInstance = {
      store,
      sa,
      server,
      watchErrors: [],
      close: async () => {
        await server.close();
        await sa.close();
      },
    };
    open.push(first);
    await expect(sa.ready()).rejects.toThrow();
    expectUnavailable(await requestToken(first, 'esa_unknownunknownunknown1', 'x'));
    await cluster().start();
    const second = await startInstance(cluster().url, schema);
    open.push(second);
    const account = await second.sa.admin.createAccount({ name: 'late' });
    await eventually(() => requestToken(first, account.clientId, account.secret.value), 200);
    await vi.waitFor(async () => expect((await sa.health()).changeFeed).toEqual({ status: 'push' }), { timeout: 15_000, interval: 100 });
    await expectEachRevocationWithin1s(first, second, 'late2');
    await second.sa.admin.disableAccount(account.clientId);
    await eventually(() => requestToken(first, account.clientId, account.secret.value), 401, 1000);
  });

  it('kill -9 of the LISTEN backend while requests run', async () => {
    const schema = 'outage_kill9';
    const first = await startInstance(cluster().url, schema);
    open.push(first);
    const second = await startInstance(cluster().url, schema);
    open.push(second);
    const t = await tokensOf(first, second, 'k9');
    const [pid] = await cluster().backendPids({ listeningOn: notificationChannel(schema) });
    let running = true;
    const load = (async () => {
      while (running) await callApi(first, t.bySecret).catch(() => undefined);
    })();
    process.kill(pid!, 'SIGKILL');
    await eventually(() => callApi(second, t.bySecret), 200, 20_000);
    await eventually(() => callApi(first, t.bySecret), 200, 20_000);
    running = false;
    await load;
    await expectEachRevocationWithin1s(first, second, 'k9b');
  });

  describe.each(['fast', 'immediate'] as const)('restart (%s)', (mode) => {
    it('revocations made right after PostgreSQL is back reach the other instance within 1 s', async () => {
      const schema = `outage_restart_${mode}`;
      const first = await startInstance(cluster().url, schema);
      open.push(first);
      const second = await startInstance(cluster().url, schema);
      open.push(second);
      const t = await tokensOf(first, second, 'r');
      await cluster().stop(mode);
      await cluster().start();
      await eventually(() => callApi(second, t.bySecret), 200, 20_000);
      await second.sa.admin.revokeSecret(t.account.clientId, t.account.secret.id);
      await eventually(() => callApi(first, t.bySecret), 401, 1000);
      await expectEachRevocationWithin1s(first, second, 'r2');
    });
  });
});
