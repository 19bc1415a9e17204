/**
 * What an operator sees of the example server when its PostgreSQL server goes away and comes back
 * (docs/observability.md), on a private cluster stopped for real: GET /readyz turns 503 within the
 * store timeout once PostgreSQL stops accepting connections, and 200 again after it recovers, without
 * a restart; the outage and the recovery are logged once each as JSON events (not once per request);
 * GET /metrics (METRICS=1) keeps serving and counts what was refused.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import { withPrivatePostgres } from '../helpers/private-postgres.js';
import { getToken, killAllServers, requestToken, startServer, type ExampleServer } from '../examples/example-server.js';

/** The operational events the server logged (JSON lines with an `event`). */
function loggedEvents(server: ExampleServer): Array<{ type: string; state?: string }> {
  return server.output
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes('"event"'))
    .map((line) => (JSON.parse(line) as { event: { type: string; state?: string } }).event);
}

/** HEALTH_DETAILS_TOKEN: /readyz gives the full report to a caller presenting it. */
const DETAILS_TOKEN = randomBytes(32).toString('hex');

async function readyz(server: ExampleServer): Promise<{ status: number; ms: number; body: { status: string; store: { status: string } } }> {
  const start = performance.now();
  const res = await fetch(`${server.url}/readyz`, { headers: { authorization: `Bearer ${DETAILS_TOKEN}` } });
  return { status: res.status, ms: performance.now() - start, body: (await res.json()) as { status: string; store: { status: string } } };
}

withPrivatePostgres('the example server readiness through a PostgreSQL outage', (cluster) => {
  afterAll(killAllServers);
  afterEach(async () => {
    await cluster().ensureStarted();
  });

  it('GET /readyz is 503 within the store timeout while PostgreSQL refuses connections, 200 after it recovers; one event each way', async () => {
    const server = await startServer({
      PORT: '0',
      SERVICE_ACCOUNTS_STORE: `${cluster().url}?schema=readiness`,
      TOKEN_ISSUER: 'http://api.readiness.test',
      TOKEN_SIGNING_KEY: randomBytes(32).toString('base64'),
      METRICS: '1',
      HEALTH_DETAILS_TOKEN: DETAILS_TOKEN,
    });
    const demo = server.demo!;
    expect(await getToken(server.url, demo)).toEqual(expect.any(String));
    expect((await readyz(server)).status).toBe(200);

    await cluster().stop('fast');
    // Readiness turns 503 at the next probe (a probe's result is reused for 1 s), answered within the
    // store timeout (2 s by default; generous margin).
    let down = await readyz(server);
    await vi.waitFor(
      async () => {
        down = down.status === 503 ? down : await readyz(server);
        expect(down.status).toBe(503);
      },
      { timeout: 1000 + 2000 + 1500, interval: 50 },
    );
    expect(down.status).toBe(503);
    expect(down.ms).toBeLessThan(2000 + 1500);
    expect(down.body).toMatchObject({ status: 'unavailable', store: { status: 'unavailable' } });
    // Requests during the outage are refused with 503 and counted; the outage is one event, not one per request.
    for (let i = 0; i < 5; i++) expect((await requestToken(server.url, { clientId: `esa_${'x'.repeat(24)}`, secret: demo.secret }, 'basic')).status).toBe(503);
    await vi.waitFor(() => expect(loggedEvents(server).filter((e) => e.type === 'store.unavailable')).toHaveLength(1), { timeout: 5000 });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^service_accounts_token_requests_refused_total\{error_type="temporarily_unavailable"[^}]*\} [1-9]/m);

    await cluster().start();
    await vi.waitFor(async () => expect((await readyz(server)).status).toBe(200), { timeout: 15_000, interval: 200 });
    await vi.waitFor(() => expect(loggedEvents(server).filter((e) => e.type === 'store.recovered')).toHaveLength(1), { timeout: 5000 });
    expect(loggedEvents(server).filter((e) => e.type === 'store.unavailable')).toHaveLength(1);
    expect(await getToken(server.url, demo)).toEqual(expect.any(String));
    // The change feed's push connection went down with the server and came back.
    await vi.waitFor(() => expect(loggedEvents(server).filter((e) => e.type === 'change_feed.state_changed').map((e) => e.state)).toContain('push'), {
      timeout: 15_000,
    });
    expect(server.exitCode, server.output).toBeUndefined();
    expect(await server.stop()).toBe(0);
  });
});
