/**
 * @module account-resources-migration.test
 * Upgrading a SQL store to account resources (schema version 7, RFC 8707 resource indicators): a
 * database that the previous schema (version 6, as released) created and filled with an account is
 * migrated on first use by the new code, reads that account as one without resources (its tokens stay
 * for the server's audience, as before), and then keeps the resources set on it
 * (AccountStore.setAccountResources), which another store sharing the database reads.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { Pool } from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPostgresAccountStore, createSqliteAccountStore, type SqlAccountStore } from '../../src/sql/index.js';
import { SCHEMA_VERSIONS, LATEST_SCHEMA_VERSION, migrateTo, type Database, type SchemaLocation } from '../../src/sql/schema.js';
import { IdFactory } from '../../src/testing/contract-fixtures.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';

const ids = new IdFactory();
const CREATED = Date.parse('2025-06-01T08:00:00.000Z');

interface Dialect {
  /** A new database at schema version 6, through `db` (destroyed by the caller). */
  createV6(): Promise<{ db: Kysely<Database>; location: SchemaLocation; open: () => SqlAccountStore }>;
}

function describeUpgrade(name: string, dialect: Dialect): void {
  describe(`${name}: upgrading a database of schema version 6 to account resources`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    async function setUp() {
      const v6 = await dialect.createV6();
      cleanups.push(() => v6.db.destroy());
      const table = (t: string) => (v6.location.dialect === 'postgres' ? sql.id(v6.location.schema, t) : sql.id(t));
      const versions = async (): Promise<number[]> => {
        const result = await sql<{ version: number }>`select version from ${table('account_store_migrations')} order by version`.execute(v6.db);
        return result.rows.map((row) => Number(row.version));
      };
      expect(await versions()).toEqual([1, 2, 3, 4, 5, 6]);
      const clientId = ids.clientId();
      const secretId = ids.secretId();
      const hash = `$2b$10$${'h'.repeat(53)}`;
      await sql`insert into ${table('accounts')} (client_id, name, client_account_id, scopes, enabled, created_at)
        values (${clientId}, ${'billing-exporter'}, ${null}, ${'["jobs:read"]'}, 1, ${CREATED})`.execute(v6.db);
      await sql`insert into ${table('secrets')} (id, client_id, hash, created_at, last_used_at, revoked_at)
        values (${secretId}, ${clientId}, ${hash}, ${CREATED}, null, null)`.execute(v6.db);
      const open = (): SqlAccountStore => {
        const store = v6.open();
        cleanups.push(() => store.close());
        return store;
      };
      return { clientId, open, versions };
    }

    it('migrates on first use and reads an account of version 6 as one without resources', async () => {
      const { clientId, open, versions } = await setUp();
      const store = open();
      const account = await store.findAccount(clientId);
      expect(account).toMatchObject({ clientId, name: 'billing-exporter', scopes: ['jobs:read'], resources: [], enabled: true });
      expect(account?.secrets).toHaveLength(1);
      expect(await versions()).toEqual([...SCHEMA_VERSIONS]);
      expect(LATEST_SCHEMA_VERSION).toBeGreaterThanOrEqual(7);
    });

    it('then keeps the resources set on that account, and another store reads them', async () => {
      const { clientId, open } = await setUp();
      const [a, b] = [open(), open()];
      const updated = await a.setAccountResources(clientId, ['https://api.example.com/', 'billing']);
      expect(updated?.resources).toEqual(['https://api.example.com/', 'billing']);
      expect((await b.findAccount(clientId))?.resources).toEqual(['https://api.example.com/', 'billing']);
      expect((await b.listAccounts()).find((account) => account.clientId === clientId)?.resources).toEqual(['https://api.example.com/', 'billing']);
    });
  });
}

const root = mkdtempSync(join(tmpdir(), 'esa-resources-migration-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describeUpgrade('SQLite', {
  async createV6() {
    const filename = join(root, `${randomUUID()}.db`);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(filename) }) });
    const location: SchemaLocation = { dialect: 'sqlite', schema: 'public' };
    await migrateTo(db, location, 6);
    return { db, location, open: () => createSqliteAccountStore({ filename, pollIntervalMs: 100 }) };
  },
});

withPostgres('PostgreSQL account-resources migration', (connectionString) => {
  const schemas = usePostgresSchemas(connectionString);
  describeUpgrade('PostgreSQL', {
    async createV6() {
      const schema = schemas.name();
      const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString, max: 2 }) }) });
      const location: SchemaLocation = { dialect: 'postgres', schema };
      await migrateTo(db, location, 6);
      return { db, location, open: () => createPostgresAccountStore({ connectionString, schema, pollIntervalMs: 100 }) };
    },
  });
});
