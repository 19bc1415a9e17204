/**
 * An operator's view of a PostgreSQL store that cannot be reached and then can (docs/observability.md):
 * `sa.health()` reports `unavailable` with an `error` that says how (the class and code of the cause,
 * such as `ECONNREFUSED`) and never the connection string's password; `onEvent` is told of the
 * outage and of its end, once each; the report turns `ok` again without a restart.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import request from 'supertest';
import { afterEach, expect, it, vi } from 'vitest';
import type { OperationalEvent } from '../../src/index.js';
import { createPostgresAccountStore } from '../../src/sql/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { freePort } from '../helpers/free-port.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';

/** A TCP forwarder on `port` to PostgreSQL: the database comes back at the address the pool was given. */
async function forward(port: number, target: URL): Promise<() => Promise<void>> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

withPostgres('health and events through a PostgreSQL outage', (connectionString) => {
  const schemas = usePostgresSchemas(connectionString);

  it('reports the store unavailable with the cause, never the credentials, and tells the outage and the recovery once each', async () => {
    const password = 'pw-Observability-Probe-7f3k';
    const port = await freePort(); // nothing listens there yet: connections are refused
    const url = new URL(connectionString);
    const closedUrl = new URL(connectionString);
    closedUrl.hostname = '127.0.0.1';
    closedUrl.port = String(port);
    closedUrl.password = password;
    const store = createPostgresAccountStore({ connectionString: closedUrl.toString(), schema: schemas.name() });
    const events: OperationalEvent[] = [];
    const { app, sa, clock } = createTestApp({ store, storeTimeout: 1000, onEvent: (event) => void events.push(event) });
    closers.push(() => sa.close());

    const down = await sa.health();
    expect(down.status).toBe('unavailable');
    expect(down.store.status).toBe('unavailable');
    // Says how the store failed: the class and code of the driver's error.
    expect(down.store.error).toMatch(/ECONNREFUSED/);
    const token = await request(app).post('/oauth/token').auth('esa_abcdefghijklmnopqrstuvwx', 'x').type('form').send({ grant_type: 'client_credentials' });
    expect(token.status).toBe(503);
    await vi.waitFor(() => expect(events.map((e) => e.type)).toEqual(['store.unavailable']), { timeout: 2000, interval: 10 });
    expect(events[0]).toMatchObject({ dependency: 'store', error: expect.stringMatching(/ECONNREFUSED/) });

    // The database answers at that address now: health and the token endpoint recover without a restart.
    closers.push(await forward(port, url));
    await vi.waitFor(
      async () => {
        clock.advance(1); // past the second a probe's result answers for
        expect((await sa.health()).status).toBe('ok');
      },
      { timeout: 10_000, interval: 100 },
    );
    await vi.waitFor(() => expect(events.map((e) => e.type)).toContain('store.recovered'), { timeout: 2000, interval: 10 });
    const outage = events.filter((e) => e.type === 'store.unavailable' || e.type === 'store.recovered');
    expect(outage.map((e) => e.type)).toEqual(['store.unavailable', 'store.recovered']);
    expect(outage[1]).toMatchObject({ dependency: 'store', downtimeMs: expect.any(Number) });
    const account = await sa.admin.createAccount({ name: 'after the outage' });
    await request(app).post('/oauth/token').auth(account.clientId, account.secret.value).type('form').send({ grant_type: 'client_credentials' }).expect(200);

    // Neither the report nor any event names the password of the connection string.
    const seen = JSON.stringify({ down, events, after: await sa.health() });
    expect(seen).not.toContain(password);
  });
});
