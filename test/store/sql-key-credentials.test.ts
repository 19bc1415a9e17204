/**
 * @module sql-key-credentials.test
 * Key-pair credentials in the SQL stores across instances (AccountStore.consumeAssertionId: "atomic
 * with respect to every process sharing the store"; addKey: "atomic in the same way" as addSecret):
 * several stores on one database, as several processes, race for one assertion ID and for the last
 * places under the cap; expired assertion IDs are deleted.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPostgresAccountStore, createSqliteAccountStore, type SqlAccountStore } from '../../src/sql/index.js';
import { IdFactory } from '../../src/testing/contract-fixtures.js';
import { quoteIdentifier, usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';

const ids = new IdFactory();
const STORES = 4;

interface Backend {
  /** `count` stores on one new database, each with its own connection (or pool), as separate processes. */
  openMany(count: number): SqlAccountStore[];
  /** Rows of `used_assertion_ids` in the database the last `openMany` created. */
  usedAssertionRows(): Promise<number>;
  /**
   * Whether write transactions of several stores in this one process can interleave. Not on SQLite:
   * better-sqlite3 is synchronous, so a second `BEGIN IMMEDIATE` in the same process blocks the event
   * loop that the first needs to commit (docs/stores.md); separate processes are fine there.
   */
  readonly interleavedTransactions: boolean;
}

function describeAcrossInstances(name: string, backend: () => Backend): void {
  describe(`${name}: key credentials across instances`, () => {
    const opened: SqlAccountStore[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });
    function open(b: Backend): SqlAccountStore[] {
      const stores = b.openMany(STORES);
      opened.push(...stores);
      return stores;
    }

    // RFC 7523 §3: a "jti" may be used once; a replay on another instance is refused.
    it(`exactly one of ${STORES} stores, each using the same assertion ID twice at once, gets true`, async () => {
      const stores = open(backend());
      await Promise.all(stores.map((store) => store.init()));
      const issuer = ids.clientId();
      const now = ids.time();
      const expiresAt = new Date(now.getTime() + 300_000);
      const results = await Promise.all(
        [...stores, ...stores].map((store) => store.consumeAssertionId(issuer, 'jti-shared-by-everyone', expiresAt, now)),
      );
      expect(results.filter((first) => first)).toHaveLength(1);
    });

    it(`keeps the shared cap and refuses a duplicate key when ${STORES} stores add to one account at once`, async (context) => {
      const b = backend();
      if (!b.interleavedTransactions) return context.skip('one process cannot interleave SQLite write transactions');
      const stores = open(b);
      await Promise.all(stores.map((store) => store.init()));
      const account = await stores[0]!.createAccount(ids.account()); // one live secret
      const keys = Array.from({ length: 8 }, () => ids.key());
      const results = await Promise.all(keys.map((key, i) => stores[i % STORES]!.addKey(account.clientId, key, { maxLiveCredentials: 4 })));
      expect(results.filter((r) => typeof r === 'object')).toHaveLength(3);
      expect(results.filter((r) => r === 'limit_reached')).toHaveLength(5);
      const twin = ids.key();
      const twins = await Promise.all(
        stores.map((store) => store.addKey(account.clientId, { ...twin, id: ids.keyId() }, { maxLiveCredentials: 100 })),
      );
      expect(twins.filter((r) => typeof r === 'object')).toHaveLength(1);
      expect(twins.filter((r) => r === 'duplicate')).toHaveLength(STORES - 1);
      expect((await stores[1]!.findAccount(account.clientId))?.keys).toHaveLength(4);
    });

    // AccountStore.consumeAssertionId: "the store deletes such entries from time to time".
    it('deletes expired assertion IDs, keeping the unexpired ones', async () => {
      const b = backend();
      const [store] = open(b);
      const now = ids.time();
      const issuer = ids.clientId();
      for (let i = 0; i < 5; i++) await store!.consumeAssertionId(issuer, `old-${i}`, new Date(now.getTime() + 1000), now);
      await store!.consumeAssertionId(issuer, 'long-lived', new Date(now.getTime() + 3_600_000), now);
      expect(await b.usedAssertionRows()).toBe(6);
      // A minute later the old ones have expired, and the next use sweeps them.
      const later = new Date(now.getTime() + 61_000);
      expect(await store!.consumeAssertionId(issuer, 'new', new Date(later.getTime() + 1000), later)).toBe(true);
      expect(await b.usedAssertionRows()).toBe(2);
      expect(await store!.consumeAssertionId(issuer, 'long-lived', new Date(later.getTime() + 1000), later)).toBe(false);
    });
  });
}

const root = mkdtempSync(join(tmpdir(), 'esa-sql-keys-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describeAcrossInstances('SQLite', () => {
  const filename = join(root, `${randomUUID()}.db`);
  return {
    interleavedTransactions: false,
    openMany: (count) => Array.from({ length: count }, () => createSqliteAccountStore({ filename })),
    async usedAssertionRows() {
      const db = new BetterSqlite3(filename, { readonly: true });
      try {
        return (db.prepare('select count(*) as n from used_assertion_ids').get() as { n: number }).n;
      } finally {
        db.close();
      }
    },
  };
});

withPostgres('PostgreSQL key credentials across instances', (connectionString) => {
  const schemas = usePostgresSchemas(connectionString);
  describeAcrossInstances('PostgreSQL', () => {
    const schema = schemas.name();
    return {
      interleavedTransactions: true,
      openMany: (count) => Array.from({ length: count }, () => createPostgresAccountStore({ connectionString, schema })),
      async usedAssertionRows() {
        const result = await schemas.query<{ n: string }>(`select count(*) as n from ${quoteIdentifier(schema)}.used_assertion_ids`);
        return Number(result.rows[0]?.n);
      },
    };
  });
});
