/**
 * The example server's app (examples/server/app.ts) in this process, on a memory store and an
 * in-memory activity store, listening on 127.0.0.1 with its issuer set to its own URL: for tests that
 * drive it with real OAuth clients.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../examples/server/app.js';
import { openActivityStore } from '../../examples/server/activity-store.js';
import { createServiceAccounts, MemoryAccountStore, type ServiceAccounts, type ServiceAccountsOptions } from '../../src/index.js';
import { TEST_HS256_KEY } from './create-app.js';

export interface RunningExampleApp {
  readonly server: Server;
  /** `http://127.0.0.1:PORT`, also the tokens' issuer. */
  readonly issuer: string;
  readonly sa: ServiceAccounts;
  close(): Promise<void>;
}

/** Starts the app; `onRequest` sees each request before the app does; `settings` are further library options. */
export async function startExampleApp(
  options: { now?: () => Date; onRequest?: (req: IncomingMessage) => void; settings?: Partial<ServiceAccountsOptions> } = {},
): Promise<RunningExampleApp> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sa = createServiceAccounts({
    store: new MemoryAccountStore(),
    issuer,
    signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY }],
    secretHashRounds: 4,
    ...(options.now && { now: options.now }),
    ...options.settings,
  });
  const app = createApp(sa, { issuer, activity: openActivityStore({ kind: 'sqlite', filename: ':memory:' }) });
  server.on('request', (req, res) => {
    options.onRequest?.(req);
    app(req, res);
  });
  return {
    server,
    issuer,
    sa,
    close: async () => {
      await new Promise((done) => server.close(done));
      await sa.close();
    },
  };
}
