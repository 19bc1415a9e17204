/**
 * docs/stores.md, "Connections that go silent": "a query that gets no answer within `queryTimeoutMs`
 * ... fails, and its connection is never used again: the server is asked to cancel the query ... and
 * the connection is closed, at once if it answers and 1 second later if it stays silent ... While the
 * store closes, a query in flight gets 1 second more before it is cancelled the same way." The
 * deadlines of the clients the PostgreSQL store checks out, on a stand-in `pg` client whose queries
 * answer when the test says (time is faked; nothing sleeps; the stand-in has no server to send a
 * cancellation to). The same behaviour on a real cluster: test/faults/silent-queries.test.ts. Last, a
 * stand-in server that ends a connection as it opens, for when a checked-out client gets its `'error'` listener.
 */
import { createServer, type AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createPostgresAccountStore } from '../../src/sql/index.js';
import { CLOSE_GRACE_MS, guardClients } from '../../src/sql/pg-client-guard.js';
import type { PgPool, PgPoolClient } from '../../src/sql/pg-types.js';

/** A `pg` pool client whose queries wait until answered, and whose end() fails the one in flight. */
class StandInClient {
  ended = 0;
  readonly #pending: Array<{ resolve: (value: unknown) => void; reject: (error: Error) => void }> = [];
  on(): this {
    return this;
  }
  removeListener(): this {
    return this;
  }
  release(): void {}
  query(text: unknown): unknown {
    if (typeof text !== 'string') return text; // a cursor is returned as is, as pg does
    return new Promise((resolve, reject) => this.#pending.push({ resolve, reject }));
  }
  answer(rows: unknown[]): void {
    this.#pending.shift()?.resolve({ rows, command: 'SELECT', rowCount: rows.length });
  }
  /** The server cancelled the query in flight (as it answers a cancel request). */
  cancelled(): void {
    this.#pending.shift()?.reject(new Error('canceling statement due to user request'));
  }
  get waiting(): number {
    return this.#pending.length;
  }
  async end(): Promise<void> {
    this.ended++;
    this.#pending.shift()?.reject(new Error('Connection terminated'));
  }
}

function standInPool(client: StandInClient): PgPool & { endedTimes: number } {
  const pool = {
    endedTimes: 0,
    connect: async () => client as unknown as PgPoolClient,
    end: async () => void pool.endedTimes++,
  };
  return pool;
}

/** Runs one query on a client checked out of `pool`; settles with the rows or the error's message. */
async function ask(pool: PgPool): Promise<{ settled?: unknown; error?: string; client: StandInClient }> {
  const client = (await pool.connect()) as unknown as StandInClient & PgPoolClient;
  const outcome: { settled?: unknown; error?: string; client: StandInClient } = { client };
  void client.query('select 1', []).then(
    (result) => (outcome.settled = result.rows),
    (error: Error) => (outcome.error = error.message),
  );
  return outcome;
}

describe('the deadline of a PostgreSQL query', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fails a query unanswered after queryTimeoutMs and closes its connection (at once here: there is no server to ask to cancel it)', async () => {
    const pool = guardClients(standInPool(new StandInClient()), { ownsPool: true, queryTimeoutMs: 1000 });
    const outcome = await ask(pool);
    await vi.advanceTimersByTimeAsync(999);
    expect(outcome.client.ended).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(outcome.client.ended).toBe(1);
    expect(outcome.error).toBe('PostgreSQL did not answer a query within 1000 ms (queryTimeoutMs), so its connection was closed');
  });

  it('fails every later query on a client given up on (a transaction\'s rollback) with the same error, without sending it', async () => {
    const pool = guardClients(standInPool(new StandInClient()), { ownsPool: true, queryTimeoutMs: 1000 });
    const outcome = await ask(pool);
    await vi.advanceTimersByTimeAsync(1000);
    const rollback = (outcome.client as unknown as PgPoolClient).query('rollback', []);
    await expect(rollback).rejects.toThrow('PostgreSQL did not answer a query within 1000 ms (queryTimeoutMs), so its connection was closed');
    expect(outcome.client.waiting).toBe(0);
    expect(outcome.client.ended).toBe(1);
  });

  it('leaves a query answered in time and its connection alone', async () => {
    const pool = guardClients(standInPool(new StandInClient()), { ownsPool: true, queryTimeoutMs: 1000 });
    const outcome = await ask(pool);
    await vi.advanceTimersByTimeAsync(900);
    outcome.client.answer([{ one: 1 }]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(outcome).toMatchObject({ settled: [{ one: 1 }] });
    expect(outcome.client.ended).toBe(0);
  });

  it(`gives a query in flight at most ${CLOSE_GRACE_MS} ms more once the store closes, and never more than it had`, async () => {
    const slow = new StandInClient();
    const slowPool = guardClients(standInPool(slow), { ownsPool: true, queryTimeoutMs: 30_000 });
    const waiting = await ask(slowPool);
    const soon = new StandInClient();
    const soonPool = guardClients(standInPool(soon), { ownsPool: true, queryTimeoutMs: 1500 });
    const soonWaiting = await ask(soonPool);
    await vi.advanceTimersByTimeAsync(1000);
    await slowPool.end();
    await soonPool.end();
    await vi.advanceTimersByTimeAsync(499);
    expect(soon.ended).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(soonWaiting.error).toBe('PostgreSQL did not answer a query within 1500 ms (queryTimeoutMs), so its connection was closed');
    await vi.advanceTimersByTimeAsync(CLOSE_GRACE_MS - 501);
    expect(slow.ended).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(slow.ended).toBe(1);
    expect(waiting.error).toBe('PostgreSQL did not answer a query within the time left when the store closed, so its connection was closed');
  });

  it("sets no deadline on the host's own queries on a client of its pool once the store released it", async () => {
    const client = new StandInClient();
    const pool = guardClients(standInPool(client), { ownsPool: false, queryTimeoutMs: 1000 });
    const first = await ask(pool);
    first.client.answer([]);
    await vi.advanceTimersByTimeAsync(0);
    (client as unknown as PgPoolClient).release();
    const hostQuery = (client as unknown as PgPoolClient).query('select pg_sleep(60)', []).then(() => 'answered');
    await vi.advanceTimersByTimeAsync(5000);
    expect(client.ended).toBe(0);
    client.answer([]);
    expect(await hostQuery).toBe('answered');
  });

  it('ends the pool it owns, never a pool the host passed', async () => {
    const own = standInPool(new StandInClient());
    const given = standInPool(new StandInClient());
    await guardClients(own, { ownsPool: true, queryTimeoutMs: 1000 }).end();
    await guardClients(given, { ownsPool: false, queryTimeoutMs: 1000 }).end();
    expect([own.endedTimes, given.endedTimes]).toEqual([1, 0]);
  });

  it('checks out of a host pool whose connect only returns a promise, whatever arguments it declares', async () => {
    for (const connect of [async () => new StandInClient(), async (_options?: { signal?: AbortSignal }) => new StandInClient()]) {
      const pool = guardClients({ connect, end: async () => undefined } as unknown as PgPool, { ownsPool: false, queryTimeoutMs: 1000 });
      expect(await pool.connect()).toBeInstanceOf(StandInClient);
    }
  });

  it('returns a cursor as it is, without a deadline', async () => {
    const client = new StandInClient();
    const pool = guardClients(standInPool(client), { ownsPool: true, queryTimeoutMs: 1000 });
    const checkedOut = (await pool.connect()) as unknown as { query(cursor: object): unknown };
    const cursor = { read: async () => [], close: async () => {} };
    expect(checkedOut.query(cursor)).toBe(cursor);
    await vi.advanceTimersByTimeAsync(5000);
    expect(client.ended).toBe(0);
  });

  it('refuses a queryTimeoutMs that is not a whole number of milliseconds from 1 to 2^31 - 1, naming the option', () => {
    const pool = standInPool(new StandInClient());
    for (const queryTimeoutMs of [0, -1, 1.5, 2 ** 31, Number.NaN]) {
      expect(() => createPostgresAccountStore({ pool, queryTimeoutMs })).toThrow(/option "queryTimeoutMs" must be an integer from 1 to 2147483647/);
    }
    expect(() => createPostgresAccountStore({ pool, queryTimeoutMs: 1 })).not.toThrow();
  });
});

describe('the cancellation of a query given up on', () => {
  /** A stand-in server that records what each connection sends and closes it once 16 bytes arrived. */
  async function cancelServer(log: string[]): Promise<{ port: number; received: Buffer[]; close(): Promise<void> }> {
    const received: Buffer[] = [];
    const server = createServer((socket) => {
      let bytes = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        bytes = Buffer.concat([bytes, chunk]);
        if (bytes.length < 16) return;
        received.push(bytes);
        log.push('cancel read');
        socket.destroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { port: (server.address() as AddressInfo).port, received, close: () => new Promise((resolve) => server.close(() => resolve())) };
  }

  it('sends the CancelRequest of the PostgreSQL protocol with the session key, and closes the connection only once the server has read it', async () => {
    const log: string[] = [];
    const server = await cancelServer(log);
    const client = Object.assign(new StandInClient(), { host: '127.0.0.1', port: server.port, processID: 4242, secretKey: -123456789 });
    const ended = client.end.bind(client);
    client.end = async () => {
      log.push('connection closed');
      await ended();
    };
    const pool = guardClients(standInPool(client), { ownsPool: true, queryTimeoutMs: 50 });
    const outcome = await ask(pool);
    await vi.waitFor(() => expect(outcome.error).toBeDefined(), { timeout: 5000, interval: 10 });
    await server.close();
    expect(log).toEqual(['cancel read', 'connection closed']);
    const expected = Buffer.alloc(16);
    expected.writeInt32BE(16, 0);
    expected.writeInt32BE(80877102, 4); // 1234 << 16 | 5678
    expected.writeInt32BE(4242, 8);
    expected.writeInt32BE(-123456789, 12);
    expect(server.received).toEqual([expected]);
  });
});

/**
 * docs/stores.md: "A PostgreSQL server that restarts, crashes or terminates connections does not take
 * the instances down". A server shutting down as a connection opens
 * sends "ready" and, right after, "terminating connection due to administrator command" (SQLSTATE
 * 57P01); when both arrive in one read, `pg` hands the client out and emits the second as an `'error'`
 * in the same tick. A stand-in server speaks just that much of the PostgreSQL protocol, in one write.
 */
describe('a connection the server ends as it opens', () => {
  function message(type: string, body: Buffer): Buffer {
    const length = Buffer.alloc(4);
    length.writeInt32BE(body.length + 4);
    return Buffer.concat([Buffer.from(type), length, body]);
  }
  const int32s = (...values: number[]): Buffer => Buffer.concat(values.map((value) => Buffer.from([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255])));
  const fields = (entries: Record<string, string>): Buffer =>
    Buffer.concat([...Object.entries(entries).map(([code, text]) => Buffer.from(`${code}${text}\0`)), Buffer.from([0])]);
  const READY_THEN_TERMINATED = Buffer.concat([
    message('R', int32s(0)), // AuthenticationOk
    message('K', int32s(4242, 777)), // BackendKeyData
    message('Z', Buffer.from('I')), // ReadyForQuery, idle
    message('E', fields({ S: 'FATAL', V: 'FATAL', C: '57P01', M: 'terminating connection due to administrator command' })),
  ]);

  async function endingServer(): Promise<{ url: string; close(): Promise<void> }> {
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.once('data', () => socket.end(READY_THEN_TERMINATED)); // the startup message, whatever it says
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `postgres://postgres@127.0.0.1:${(server.address() as AddressInfo).port}/postgres`;
    return { url, close: () => new Promise((resolve) => server.close(() => resolve())) };
  }

  const uncaught: unknown[] = [];
  const record = (error: unknown): void => void uncaught.push(error);
  beforeEach(() => {
    uncaught.length = 0;
    process.on('uncaughtException', record);
  });
  afterEach(() => {
    process.off('uncaughtException', record);
  });

  /** Checks one client out of a guarded real `pg.Pool` (or of `wrap(pool)`) on the ending server. */
  async function checkOutFromEndingServer(wrap: (raw: import('pg').Pool) => unknown = (raw) => raw): Promise<void> {
    const server = await endingServer();
    const { default: pg } = await import('pg');
    const raw = new pg.Pool({ connectionString: server.url });
    raw.on('error', () => undefined);
    const pool = guardClients(wrap(raw) as PgPool, { ownsPool: true, queryTimeoutMs: 1000 });
    try {
      const client = await pool.connect();
      await expect(client.query('select 1', [])).rejects.toThrow(); // no longer queryable
      client.release(true);
    } finally {
      await pool.end();
      await server.close();
    }
  }

  it('hands the client out with its error listener already on it: no uncaught exception', async () => {
    await checkOutFromEndingServer();
    expect(uncaught).toEqual([]);
  });

  it('guards the clients of a wrapper that passes its arguments on to pg.Pool (as instrumentation does)', async () => {
    await checkOutFromEndingServer((raw) => ({ connect: (...args: unknown[]) => (raw.connect as (...a: unknown[]) => unknown).apply(raw, args), end: () => raw.end() }));
    expect(uncaught).toEqual([]);
  });

  it('fails the checkout when the server closes before the connection is ready, without a crash', async () => {
    const server = createServer((socket) => void socket.once('data', () => socket.destroy()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { default: pg } = await import('pg');
    const raw = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${(server.address() as AddressInfo).port}/postgres` });
    raw.on('error', () => undefined);
    const pool = guardClients(raw as unknown as PgPool, { ownsPool: true, queryTimeoutMs: 1000 });
    try {
      await expect(pool.connect()).rejects.toThrow();
      expect(uncaught).toEqual([]);
    } finally {
      await pool.end();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers the store call with a failure, not a crash', async () => {
    const server = await endingServer();
    const store = createPostgresAccountStore({ connectionString: server.url, schema: 'ending', listen: false });
    try {
      await expect(store.findAccount('esa_unknownunknownunknown1')).rejects.toThrow();
      expect(uncaught).toEqual([]);
    } finally {
      await store.close();
      await server.close();
    }
  });
});
