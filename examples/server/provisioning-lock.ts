/**
 * A lock held while the example server checks for an empty store and provisions the demo account, so
 * that several instances starting at the same moment on one empty store provision one account between
 * them. SQLite instances share a host, so a lock on a file beside the database does; PostgreSQL instances
 * may run on different hosts, so a session advisory lock in the database does.
 */
import Database from 'better-sqlite3';
import type { AccountStoreLocation } from 'express-service-accounts/sql';
import pg from 'pg';

/** Runs `work` while holding the lock. */
export type ProvisioningLock = <T>(work: () => Promise<T>) => Promise<T>;

const LOCK_WAIT_MS = 15_000;
/** Advisory lock key: any constant pair; the second half is the schema, so schemas do not contend. */
const ADVISORY_KEY = 'express-service-accounts example: demo account';

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/**
 * An exclusive transaction on a small SQLite file beside the database: the operating system's file
 * lock behind it is released when the holder ends it or dies (SIGTERM mid-provisioning, SIGKILL, a
 * crash), so a lock is never left behind for the next start to wait out, and no waiter can take a
 * lock another instance still holds. The file stays: deleting it while another instance waits on it
 * would let a third lock a new file beside them.
 */
function lockFile(file: string): ProvisioningLock {
  return async (work) => {
    const deadline = Date.now() + LOCK_WAIT_MS;
    const db = new Database(file);
    try {
      // Never block the event loop in SQLite's own wait: poll instead.
      db.pragma('busy_timeout = 0');
      for (;;) {
        try {
          db.exec('begin exclusive');
          break;
        } catch (error) {
          if ((error as { code?: unknown }).code !== 'SQLITE_BUSY') throw error;
          if (Date.now() > deadline) throw new Error(`Timed out waiting for the provisioning lock ${file}`);
          await sleep(25);
        }
      }
      try {
        return await work();
      } finally {
        db.exec('commit');
      }
    } finally {
      db.close();
    }
  };
}

function advisoryLock(connectionString: string, schema: string): ProvisioningLock {
  return async (work) => {
    // As the store was given it, without ?schema= (parseAccountStoreUrl took it out): not always a WHATWG
    // URL (`postgres://user@/db?host=/var/run/postgresql` names a socket folder), so never parsed here.
    const client = new pg.Client({ connectionString, connectionTimeoutMillis: 5000 });
    // A lost connection emits 'error', which would crash the server unhandled; the query fails instead.
    client.on('error', () => {});
    await client.connect();
    try {
      // A session lock, released by pg_advisory_unlock or, if this process dies, by the server.
      await client.query('select pg_advisory_lock(hashtext($1), hashtext($2))', [ADVISORY_KEY, schema]);
      try {
        return await work();
      } finally {
        await client.query('select pg_advisory_unlock(hashtext($1), hashtext($2))', [ADVISORY_KEY, schema]);
      }
    } finally {
      await client.end();
    }
  };
}

/** The lock that fits the store; none for an in-memory SQLite database, which no other process sees. */
export function provisioningLock(store: AccountStoreLocation): ProvisioningLock {
  if (store.kind === 'postgres') return advisoryLock(store.connectionString, store.schema ?? 'public');
  if (store.filename === ':memory:') return (work) => work();
  return lockFile(`${store.filename}.provision.lock`);
}
