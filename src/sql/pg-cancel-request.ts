/**
 * @module pg-cancel-request
 * Asks PostgreSQL, over a connection of its own, to cancel whatever query one session is running: the
 * CancelRequest of the frontend/backend protocol (PostgreSQL documentation, "Canceling Requests in
 * Progress"), which the server reads before any authentication, and which connection poolers such as
 * PgBouncer pass on. `pg` has no public way to send one (its `Client.cancel()` needs the deprecated
 * `activeQuery`), so the 16 bytes are written here. Best effort: the server answers nothing and closes
 * the connection, and a failure changes nothing.
 */
import { connect } from 'node:net';

/** The request code of a CancelRequest (1234 in the high 16 bits, 5678 in the low). */
const CANCEL_REQUEST_CODE = 80877102;
/** Longest the request's own connection may take (the server closes it once it has read the request). */
export const CANCEL_WAIT_MS = 1000;

/** Where a `pg` client is connected, and the key of its session (a `pg.Client` has these fields). */
export interface PgSession {
  readonly host?: unknown;
  readonly port?: unknown;
  readonly processID?: unknown;
  readonly secretKey?: unknown;
}

/**
 * Sends a CancelRequest for the session of `client`, if it knows its session key (it does once
 * connected). Resolves once the server has closed the request's connection (it has read the request),
 * or the request failed, or {@link CANCEL_WAIT_MS} passed; never rejects.
 *
 * @example
 * ```ts
 * import pg from 'pg'
 *
 * const client = await new pg.Pool({ connectionString: process.env.DATABASE_URL }).connect()
 * const sleeping = client.query('select pg_sleep(60)')
 * await requestCancel(client) // `sleeping` rejects: "canceling statement due to user request"
 * ```
 */
export function requestCancel(client: PgSession): Promise<void> {
  const { host, port, processID, secretKey } = client;
  if (typeof port !== 'number' || !isInt32(processID) || !isInt32(secretKey)) return Promise.resolve();
  const message = Buffer.alloc(16);
  message.writeInt32BE(16, 0);
  message.writeInt32BE(CANCEL_REQUEST_CODE, 4);
  message.writeInt32BE(processID, 8);
  message.writeInt32BE(secretKey, 12);
  const socket =
    typeof host === 'string' && host.startsWith('/')
      ? connect(`${host}/.s.PGSQL.${port}`) // a Unix-domain socket directory, as libpq names it
      : connect(port, typeof host === 'string' && host !== '' ? host : 'localhost');
  const giveUp = setTimeout(() => socket.destroy(), CANCEL_WAIT_MS);
  giveUp.unref();
  socket.on('error', () => socket.destroy());
  socket.on('connect', () => socket.end(message));
  socket.unref();
  return new Promise((resolve) => {
    socket.on('close', () => {
      clearTimeout(giveUp);
      resolve();
    });
  });
}

function isInt32(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31;
}
