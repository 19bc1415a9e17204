/**
 * The example server (examples/server.ts, on the built package) on a private PostgreSQL cluster
 * survives `pg_ctl stop -m immediate` with requests in flight: it keeps running, answers 503
 * temporarily_unavailable while the database is down (docs/stores.md: "service resumes without a
 * restart"), and serves again once the database is back.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import { withPrivatePostgres } from '../helpers/private-postgres.js';
import { bearer, getToken, killAllServers, requestToken, startServer } from '../examples/example-server.js';
import { lockSchema } from './pg-instance.js';

/** Repeats `call` every 100 ms until it answers `status`, failing after `timeoutMs`. */
function eventuallyStatus(call: () => Promise<Response>, status: number, timeoutMs = 15_000): Promise<void> {
  return vi.waitFor(async () => expect((await call()).status).toBe(status), { timeout: timeoutMs, interval: 100 });
}

withPrivatePostgres('the example server on a PostgreSQL store that crashes', (cluster) => {
  afterAll(killAllServers);
  const releases: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await Promise.all(releases.splice(0).map((release) => release()));
    await cluster().ensureStarted();
  });

  it('keeps running through pg_ctl stop -m immediate with requests in flight, answers 503, then serves again', async () => {
    const store = `${cluster().url}?schema=example`;
    const server = await startServer({ PORT: '0', SERVICE_ACCOUNTS_STORE: store, TOKEN_ISSUER: 'http://api.faults.test', TOKEN_SIGNING_KEY: randomBytes(32).toString('base64') });
    const demo = server.demo!;
    expect(demo).toBeDefined();
    const token = await getToken(server.url, demo);
    const whoami = (): Promise<Response> => fetch(`${server.url}/api/whoami`, { headers: bearer(token) });
    const activity = (): Promise<Response> => fetch(`${server.url}/api/activity`, { headers: bearer(token) });
    expect((await whoami()).status).toBe(200);
    expect((await activity()).status).toBe(200);

    // In flight at the moment of the crash: an account lookup and an activity read, both waiting on a lock.
    const lock = await lockSchema(cluster(), 'example');
    releases.push(lock.release);
    const inFlight = [requestToken(server.url, { clientId: 'esa_unknownunknownunknown1', secret: demo.secret }, 'basic'), activity()];
    await cluster().waitForLockWaiters(2);
    await cluster().stop('immediate');
    const answers = await Promise.all(inFlight);
    expect(answers[0]!.status).toBe(503);
    expect(answers[1]!.status).toBeGreaterThanOrEqual(500);

    // Down: refused, never let through, and still running.
    await eventuallyStatus(whoami, 503, 5000);
    expect(await (await requestToken(server.url, demo, 'basic')).json()).toMatchObject({ error: 'temporarily_unavailable' });
    expect(server.exitCode).toBeUndefined();

    await cluster().start();
    await eventuallyStatus(whoami, 200);
    await eventuallyStatus(activity, 200);
    expect(await getToken(server.url, demo)).toEqual(expect.any(String));
    expect(server.exitCode, server.output).toBeUndefined();
    expect(server.output).not.toMatch(/Unhandled 'error' event|uncaught/i);
    expect(await server.stop()).toBe(0);
  });
});
