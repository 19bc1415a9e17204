/**
 * @module pg-client-guard
 * Keeps every `pg` client the PostgreSQL store checks out from crashing the process.
 *
 * A `pg` client whose connection breaks (the server restarts, a backend is terminated, the network
 * drops) emits `'error'`. A pool listens on its idle clients only: while a client is checked out, an
 * `'error'` nobody listens to is thrown by Node as an uncaught exception, even when the query in flight
 * already rejected with the same error and the caller handled it. So every client this store checks
 * out gets a listener of its own, once, for as long as it lives. Nothing is lost by ignoring the event:
 * the query in flight rejects with it, the next query on that client fails ("not queryable"), and the
 * pool discards a broken client when it is released.
 */
import type { PgPool, PgPoolClient } from './pg-types.js';

const guarded = new WeakSet<PgPoolClient>();

function ignoreConnectionError(): void {
  // Reported by the failing query instead (see the module description).
}

/**
 * A view of `pool` whose `connect()` hands out guarded clients. `end()` ends the pool only when the
 * store owns it (a pool given by the host is the host's to end).
 *
 * @example
 * ```ts
 * import pg from 'pg'
 *
 * const pool = guardClients(new pg.Pool({ connectionString: url }), { ownsPool: true })
 * ```
 */
export function guardClients(pool: PgPool, options: { readonly ownsPool: boolean }): PgPool {
  return {
    connect: async () => {
      const client = await pool.connect();
      if (!guarded.has(client)) {
        guarded.add(client);
        client.on('error', ignoreConnectionError);
      }
      return client;
    },
    end: options.ownsPool ? () => pool.end() : async () => undefined,
  };
}
