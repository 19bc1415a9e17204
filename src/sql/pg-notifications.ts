/**
 * @module pg-notifications
 * The change feed's push channel on PostgreSQL: `LISTEN` on a dedicated pool client, held until stopped
 * or broken. A listening connection is idle, so one whose network path died silently would otherwise
 * look healthy until TCP keepalive gives up on it (many minutes): it repeats its `LISTEN` every
 * {@link LISTEN_CHECK_INTERVAL_MS} (which changes nothing on a live session, and keeps the session
 * shown as listening in `pg_stat_activity`), and is given up when that goes unanswered.
 */
import type { ChangeNotifications } from './change-feed.js';
import { socketOf } from './pg-client-guard.js';
import type { PgNotification, PgPool, PgPoolClient } from './pg-types.js';

/** Longest `LISTEN`, or a later check of its connection, may take before the connection is given up as silent. */
export const LISTEN_DEADLINE_MS = 2000;

/**
 * How often a listening connection is checked (its `LISTEN` repeated). With {@link LISTEN_DEADLINE_MS},
 * a path that died silently is found within 7 seconds; the feed then reports `reconnecting` and
 * listens again on a fresh connection. Changes arrive by polling meanwhile.
 */
export const LISTEN_CHECK_INTERVAL_MS = 5000;

/**
 * `LISTEN` on `channel`, each time on a fresh client of the pool, which is given back destroyed when
 * stopped or broken.
 *
 * @example
 * ```ts
 * declare const pool: PgPool
 * const stop = await pgNotifications(async () => pool, 'public_account_changes').listen(console.log, console.error)
 * ```
 */
export function pgNotifications(getPool: () => Promise<PgPool>, channel: string): ChangeNotifications {
  return {
    async listen(onPayload, onError) {
      const client = await (await getPool()).connect();
      const listen = `LISTEN ${quoteIdentifier(channel)}`;
      let done = false;
      let checks: NodeJS.Timeout | undefined;
      const onNotification = (message: PgNotification): void => {
        if (!done && message.channel === channel && message.payload !== undefined) onPayload(message.payload);
      };
      /**
       * Stops delivering and gives the client back destroyed (`release` with an error or `true`), never
       * to the pool: it is broken, or its socket is unref()ed and still LISTENing. False when already done.
       */
      const finish = (destroy: Error | true): boolean => {
        if (done) return false;
        done = true;
        clearInterval(checks);
        client.removeListener('notification', onNotification);
        client.release(destroy);
        return true;
      };
      const fail = (error: Error): void => {
        if (finish(error)) onError(error);
      };
      client.on('notification', onNotification);
      // Stays attached for good: a late 'error' from this client must never be unhandled.
      client.on('error', fail);
      client.on('end', () => fail(new Error('The LISTEN connection ended')));
      try {
        // A connection that went silent must not hold the feed's start (and so the instance's
        // readiness) for as long as TCP takes to give up: it is destroyed, and the feed tries again.
        await answered(client, listen, `LISTEN did not answer within ${LISTEN_DEADLINE_MS} ms`);
      } catch (error) {
        finish(error instanceof Error ? error : true);
        throw error;
      }
      if (done) throw new Error('The LISTEN connection ended'); // it failed as LISTEN answered
      socketOf(client)?.unref?.(); // like the poll timers, an idle watch must not keep the process alive
      let checking = false;
      checks = setInterval(() => {
        if (checking || done) return;
        checking = true;
        const message = `The LISTEN connection did not answer a check within ${LISTEN_DEADLINE_MS} ms`;
        answered(client, listen, message).then(
          () => void (checking = false),
          (error: unknown) => fail(error instanceof Error ? error : new Error(message)),
        );
      }, LISTEN_CHECK_INTERVAL_MS);
      checks.unref();
      return async () => {
        finish(true);
      };
    },
  };
}

/** Runs `sql` on `client`; rejects with `silent` when no answer comes within {@link LISTEN_DEADLINE_MS}. */
async function answered(client: PgPoolClient, sql: string, silent: string): Promise<void> {
  const query = client.query(sql, []);
  let deadline: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      query,
      new Promise<never>((_, reject) => {
        // setImmediate: an answer that arrived while the event loop was blocked (a long synchronous
        // task) is read first, so such a stall is not mistaken for a silent connection.
        deadline = setTimeout(() => setImmediate(() => reject(new Error(silent))), LISTEN_DEADLINE_MS);
        deadline.unref();
      }),
    ]);
  } catch (error) {
    query.catch(() => undefined); // rejects once the client is destroyed
    throw error;
  } finally {
    clearTimeout(deadline);
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
