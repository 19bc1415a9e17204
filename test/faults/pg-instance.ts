/**
 * One application instance on a PostgreSQL store for the fault tests: the store, createServiceAccounts
 * through the test app, a listening HTTP server, and the watch errors it reported.
 */
import { expect, vi } from 'vitest';
import { StoreUnavailableError } from '../../src/errors.js';
import type { ServiceAccounts } from '../../src/index.js';
import { createPostgresAccountStore, type PostgresAccountStoreOptions, type SqlAccountStore } from '../../src/sql/index.js';
import { json, listen, tokenRequest, type LiveServer, type RawResponse } from '../hardening/helpers.js';
import { createTestApp } from '../helpers/create-app.js';
import type { PrivatePostgres } from '../helpers/private-postgres.js';

export interface PgInstance {
  readonly store: SqlAccountStore;
  readonly sa: ServiceAccounts;
  readonly server: LiveServer;
  readonly watchErrors: unknown[];
  close(): Promise<void>;
}

export async function startInstance(
  url: string,
  schema: string,
  storeTimeout = 1000,
  storeOptions: Partial<PostgresAccountStoreOptions> = {},
): Promise<PgInstance> {
  const watchErrors: unknown[] = [];
  const store = createPostgresAccountStore({ connectionString: url, schema, onWatchError: (error) => watchErrors.push(error), ...storeOptions });
  const { app, sa } = createTestApp({ store, storeTimeout });
  await startUp(sa);
  const server = await listen(app);
  return {
    store,
    sa,
    server,
    watchErrors,
    close: async () => {
      await server.close();
      await sa.close();
    },
  };
}

/**
 * `sa.ready()`, tried again (as a host's readiness probe would) when a start-up read met a short
 * `storeTimeout` on a busy machine: start-up is set-up here, never what a fault test measures.
 */
async function startUp(sa: ServiceAccounts): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sa.ready();
    } catch (error) {
      if (attempt >= 5 || !(error instanceof StoreUnavailableError)) throw error;
    }
  }
}

/** POST /oauth/token with the client's credentials in the body. */
export function requestToken(instance: PgInstance, clientId: string, secret: string): Promise<RawResponse> {
  return tokenRequest(instance.server, { grant_type: 'client_credentials', client_id: clientId, client_secret: secret });
}

/** A token issued through the instance (asserts the 200). */
export async function issue(instance: PgInstance, clientId: string, secret: string): Promise<string> {
  const res = await requestToken(instance, clientId, secret);
  expect(res.status, res.text).toBe(200);
  return (json(res) as { access_token: string }).access_token;
}

/** GET /api/whoami with the token. */
export function callApi(instance: PgInstance, token: string): Promise<RawResponse> {
  return instance.server.request({ path: '/api/whoami', headers: { authorization: `Bearer ${token}` } });
}

/** The answer the contract requires while the store is unreachable. */
export function expectUnavailable(res: RawResponse): void {
  expect(res.status, res.text).toBe(503);
  expect(json(res)).toMatchObject({ error: 'temporarily_unavailable' });
}

/** Repeats `call` every 50 ms until it answers `status` (recovery without a restart), failing after `timeoutMs`. */
export function eventually(call: () => Promise<RawResponse>, status: number, timeoutMs = 15_000): Promise<RawResponse> {
  return vi.waitFor(
    async () => {
      const res = await call();
      expect(res.status, res.text).toBe(status);
      return res;
    },
    { timeout: timeoutMs, interval: 50 },
  );
}

/**
 * Opens a session holding an exclusive lock on every table of `schema`, so that any store query on
 * them waits: queries provably in flight at the moment a fault is injected.
 */
export async function lockSchema(cluster: PrivatePostgres, schema: string): Promise<{ pid: number; release(): Promise<void> }> {
  const session = await cluster.session();
  const { rows } = await session.query<{ pid: number }>('select pg_backend_pid() as pid');
  const { rows: tables } = await session.query<{ name: string }>(
    `select format('%I.%I', schemaname, tablename) as name from pg_tables where schemaname = $1`,
    [schema],
  );
  await session.query('begin');
  await session.query(`lock table ${tables.map((t) => t.name).join(', ')} in access exclusive mode`);
  return {
    pid: rows[0]!.pid,
    release: async () => {
      await session.end().catch(() => undefined);
    },
  };
}
