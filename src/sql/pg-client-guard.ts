/**
 * @module pg-client-guard
 * Keeps every `pg` client the PostgreSQL store checks out from crashing the process, and from holding
 * its place in the pool for as long as TCP takes to give up on a dead connection.
 *
 * Errors. A `pg` client whose connection breaks (the server restarts, a backend is terminated, the
 * network drops) emits `'error'`. A pool listens on its idle clients only: while a client is checked
 * out, an `'error'` nobody listens to is thrown by Node as an uncaught exception, even when the query
 * in flight already rejected with the same error and the caller handled it. So every client this store
 * checks out gets a listener of its own, once, for as long as it lives. Nothing is lost by ignoring the
 * event: the query in flight rejects with it, the next query on that client fails ("not queryable"),
 * and the pool discards a broken client when it is released. The listener is added in the pool's own
 * callback, before anything else runs: a new connection's first bytes can hold both "ready" and the
 * server's "terminating connection" (a server shutting down as the connection opens), and `pg` reads
 * them in one go, emitting the second as an `'error'` right after handing the client out, before a
 * promise of `connect()` would have resumed anyone.
 *
 * Silence. A connection whose network path died without closing it (the database failed over to
 * another address, a firewall now drops its packets) answers nothing, and TCP gives up on a connection
 * with unanswered data only after about 15 minutes on Linux. Until then its query waits, its client is
 * out of the pool, and the pool's `end()` (so the store's `close()`) waits for it; a few such queries
 * use up the pool, and the store stays unreachable although new connections would work. So a query
 * still unanswered after `queryTimeoutMs` fails, and its client is never used again:
 * - the server is asked to cancel the query ({@link requestCancel}), so that a query that was only
 *   slow (waiting for a lock, say) does not go on running for nobody; a server busy with a query
 *   does not notice its connection closing, but takes a cancellation at once;
 * - the connection is then closed (its socket destroyed, in case it is silent): when it answers
 *   first, or once the server has read the cancellation, or after {@link CANCEL_WAIT_MS} when the
 *   server cannot be reached at all;
 * - every later query on the client (a transaction's `rollback`) fails with the same error.
 * The pool drops the client when it is released and opens a fresh connection for the next query.
 * A query that `pg` itself fails at its `query_timeout` (an option of a host's pool) is given up on
 * the same way at that moment: `pg` leaves it running on the connection and puts the client back.
 * Once the store is closing, a query in flight gets at most {@link CLOSE_GRACE_MS} more before it is
 * cancelled the same way.
 */
import { CANCEL_WAIT_MS, requestCancel } from './pg-cancel-request.js';
import type { PgPool, PgPoolClient } from './pg-types.js';

/** How long `close()` lets a query in flight go on before cancelling it. */
export const CLOSE_GRACE_MS = 1000;

/** What one store asks of the clients it checks out: the query limit, and the queries in flight. */
interface GuardState {
  readonly queryTimeoutMs: number;
  closing: boolean;
  readonly inFlight: Set<QueryDeadline>;
}

/** Clients given their listener and query deadlines, once each. */
const guarded = new WeakSet<PgPoolClient>();
/** The store that has each client checked out (a host's pool may serve two stores, and the host). */
const stateOf = new WeakMap<PgPoolClient, GuardState>();
/** Clients whose query went unanswered, and why: they are closed, and every later query fails so. */
const abandoned = new WeakMap<PgPoolClient, string>();

function ignoreConnectionError(): void {
  // Reported by the failing query instead (see the module description).
}

/**
 * Closes the connection of `client` for good: `end()` marks it so (the pool then drops it), and its
 * socket is destroyed (`pg` does that itself for a client with a query in flight, but not in its
 * pipeline mode, and not for a connection that answers nothing more).
 */
function closeConnection(client: PgPoolClient): void {
  client.end().catch(ignoreConnectionError);
  socketOf(client)?.destroy?.();
}

/** The socket of a `pg` client (`client.connection.stream`), when it has one. */
export function socketOf(client: object): { destroy?: () => void; unref?: () => void } | undefined {
  const connection = 'connection' in client ? client.connection : undefined;
  if (typeof connection !== 'object' || connection === null || !('stream' in connection)) return undefined;
  const stream = connection.stream;
  return typeof stream === 'object' && stream !== null ? (stream as { destroy?: () => void; unref?: () => void }) : undefined;
}

/** The deadline of one query in flight (see the module description). */
class QueryDeadline {
  readonly #client: PgPoolClient;
  readonly #state: GuardState;
  #endsAt = 0;
  #limit = '';
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(client: PgPoolClient, state: GuardState) {
    this.#client = client;
    this.#state = state;
    state.inFlight.add(this);
    this.within(state.queryTimeoutMs, `${state.queryTimeoutMs} ms (queryTimeoutMs)`);
    if (state.closing) this.closing();
  }

  /** The store closes: at most {@link CLOSE_GRACE_MS} more. */
  closing(): void {
    this.within(CLOSE_GRACE_MS, 'the time left when the store closed');
  }

  /** Moves the deadline to `ms` from now, unless it already falls sooner. */
  within(ms: number, limit: string): void {
    const endsAt = Date.now() + ms;
    if (this.#timer !== undefined && endsAt >= this.#endsAt) return;
    clearTimeout(this.#timer);
    this.#endsAt = endsAt;
    this.#limit = limit;
    this.#timer = setTimeout(() => this.#expire(), ms);
    this.#timer.unref();
  }

  /** The query answered, or failed: a client given up on is closed now. */
  settled(): void {
    clearTimeout(this.#timer);
    this.#state.inFlight.delete(this);
    if (abandoned.has(this.#client)) this.#close();
  }

  #expire(): void {
    this.abandon(this.#limit);
  }

  /** Gives the client up now, as at the deadline: no query is sent on it again, and it is cancelled, then closed. */
  abandon(limit: string): void {
    clearTimeout(this.#timer);
    this.#state.inFlight.delete(this);
    abandoned.set(this.#client, `PostgreSQL did not answer a query within ${limit}, so its connection was closed`);
    void requestCancel(this.#client as object).then(() => this.#close());
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    closeConnection(this.#client);
  }
}

/**
 * `connect` as `pg.Pool` also offers it: with a callback, called as the client is handed out. The
 * public `PgPool` type promises only the promise form; a pool without the callback form ignores it.
 */
type ConnectWithCallback = (callback: (error: unknown, client?: PgPoolClient | null) => void) => unknown;

/**
 * Checks a client out of `pool` and guards it (its `'error'` listener and query deadlines, once per
 * client). The pool is handed a callback, which `pg.Pool` (and a wrapper passing its arguments on)
 * calls as it hands the client out, so the listener is there before the client can emit anything
 * (see the module description); a pool that only returns a promise is answered from the promise.
 * Whichever brings a client first wins. The callback may run inside `pg`'s socket reader, so nothing
 * thrown there may escape: it rejects the checkout instead.
 */
function checkOut(pool: PgPool): Promise<PgPoolClient> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (error: unknown, client: PgPoolClient | null | undefined): void => {
      if (settled) return;
      settled = true;
      if (error) return reject(error);
      if (client === undefined || client === null) return reject(new Error('The PostgreSQL pool handed out no client'));
      try {
        resolve(guard(client));
      } catch (thrown) {
        reject(thrown);
      }
    };
    let returned: unknown;
    try {
      returned = (pool.connect as unknown as ConnectWithCallback).call(pool, settle);
    } catch (thrown) {
      return settle(thrown ?? new Error('The PostgreSQL pool could not connect'), undefined);
    }
    if (!isThenable(returned)) return;
    returned.then(
      // No client: a wrapper that passed the callback on to `pg.Pool` (which then returns nothing); the callback brings it.
      (client) => void (client !== undefined && client !== null && settle(undefined, client as PgPoolClient)),
      (error: unknown) => settle(error ?? new Error('The PostgreSQL pool could not connect'), undefined),
    );
  });
}

function guard(client: PgPoolClient): PgPoolClient {
  if (!guarded.has(client)) {
    guarded.add(client);
    client.on('error', ignoreConnectionError);
    limitQueries(client);
  }
  return client;
}

/** Gives each query of `client` a deadline while a store has it checked out (set up once per client). */
function limitQueries(client: PgPoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (...args: unknown[]): unknown => {
    const givenUp = abandoned.get(client);
    if (givenUp !== undefined) return Promise.reject(new Error(givenUp));
    const answer = query(...args);
    const state = stateOf.get(client);
    // A cursor is read by its owner, who decides how long to wait; this store reads none.
    if (!isThenable(answer) || state === undefined) return answer;
    const deadline = new QueryDeadline(client, state);
    return Promise.resolve(answer).then(
      (result: unknown) => {
        deadline.settled();
        return result;
      },
      (error: unknown) => {
        // pg's own `query_timeout` (an option of the host's pool) fails the query but leaves it running
        // on the connection, which goes back to the pool: a silent one would fail every query sent on it.
        if (isReadTimeout(error) && !abandoned.has(client)) deadline.abandon("the pool's query_timeout");
        else deadline.settled();
        const why = abandoned.get(client);
        throw why === undefined ? error : new Error(why, { cause: error });
      },
    );
  };
}

/** The error `pg` fails a query with at its `query_timeout`. */
function isReadTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Query read timeout';
}

/** A promise, of whatever library `pg` was told to use. */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && 'then' in value && typeof value.then === 'function';
}

/**
 * A view of `pool` whose `connect()` hands out guarded clients (see the module description). `end()`
 * gives the queries in flight at most {@link CLOSE_GRACE_MS} more before cancelling them, and ends the
 * pool only when the store owns it (a pool given by the host is the host's to end).
 *
 * @example
 * ```ts
 * import pg from 'pg'
 *
 * const pool = guardClients(new pg.Pool({ connectionString: url }), { ownsPool: true, queryTimeoutMs: 30_000 })
 * ```
 */
export function guardClients(pool: PgPool, options: { readonly ownsPool: boolean; readonly queryTimeoutMs: number }): PgPool {
  const state: GuardState = { queryTimeoutMs: options.queryTimeoutMs, closing: false, inFlight: new Set() };
  return {
    connect: async () => {
      const client = await checkOut(pool);
      // Deadlines hold while this store has the client: a host's pool also serves the host's own queries.
      stateOf.set(client, state);
      const release = client.release; // the pool gives each checkout a release of its own
      client.release = (error) => {
        stateOf.delete(client);
        release.call(client, error);
      };
      return client;
    },
    end: async () => {
      state.closing = true;
      for (const deadline of state.inFlight) deadline.closing();
      if (options.ownsPool) await pool.end();
    },
  };
}
