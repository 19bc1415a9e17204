/**
 * @module credential-expiry-migration.test
 * Upgrading a SQL store to credential expiry (schema version 8): a database that the previous schema
 * (version 7, as released) created and filled with an account is migrated on first use by the new
 * code, reads that account's secret as one that never expires (as before), and then keeps the
 * `expiresAt` of a secret added to it, which another store sharing the database reads.
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
import { LATEST_SCHEMA_VERSION, migrateTo, type Database, type SchemaLocation } from '../../src/sql/schema.js';
import { IdFactory } from '../../src/testing/contract-fixtures.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';

const ids = new IdFactory();
const CREATED = Date.parse('2025-06-01T08:00:00.000Z');

interface Dialect {
  /** A new database at schema version 7, through `db` (destroyed by the caller). */
  createV7(): Promise<{ db: Kysely<Database>; location: SchemaLocation; open: () => SqlAccountStore }>;
}

function describeUpgrade(name: string, dialect: Dialect): void {
  describe(`${name}: upgrading a database of schema version 7 to credential expiry`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    async function setUp() {
      const v6 = await dialect.createV7();
      cleanups.push(() => v6.db.destroy());
      const table = (t: string) => (v6.location.dialect === 'postgres' ? sql.id(v6.location.schema, t) : sql.id(t));
      const versions = async (): Promise<number[]> => {
        const result = await sql<{ version: number }>`select version from ${table('account_store_migrations')} order by version`.execute(v6.db);
        return result.rows.map((row) => Number(row.version));
      };
      expect(await versions()).toEqual([1, 2, 3, 4, 5, 6, 7]);
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

    it('migrates on first use and reads a secret of version 7 as one that never expires', async () => {
      const { clientId, open, versions } = await setUp();
      const store = open();
      const account = await store.findAccount(clientId);
      expect(account?.secrets).toHaveLength(1);
      // SecretRecord.expiresAt: "null or absent: never"
      expect(account?.secrets[0]?.expiresAt ?? null).toBeNull();
      expect(await versions()).toEqual(Array.from({ length: LATEST_SCHEMA_VERSION }, (_, i) => i + 1));
      expect(LATEST_SCHEMA_VERSION).toBeGreaterThanOrEqual(8);
    });

    it('then keeps the expiresAt of a secret added to that account, and another store reads it', async () => {
      const { clientId, open } = await setUp();
      const [a, b] = [open(), open()];
      const expiresAt = new Date('2030-01-01T00:00:00.000Z');
      const secret = { ...ids.secret(), expiresAt };
      const stored = await a.addSecret(clientId, secret, { maxLiveCredentials: 5, maxLiveSecrets: 5 });
      expect(typeof stored === 'object' && stored.expiresAt).toEqual(expiresAt);
      expect((await b.findAccount(clientId))?.secrets.find((s) => s.id === secret.id)?.expiresAt).toEqual(expiresAt);
    });
  });
}

const root = mkdtempSync(join(tmpdir(), 'esa-expiry-migration-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describeUpgrade('SQLite', {
  async createV7() {
    const filename = join(root, `${randomUUID()}.db`);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(filename) }) });
    const location: SchemaLocation = { dialect: 'sqlite', schema: 'public' };
    await migrateTo(db, location, 7);
    return { db, location, open: () => createSqliteAccountStore({ filename, pollIntervalMs: 100 }) };
  },
});

withPostgres('PostgreSQL credential-expiry migration', (connectionString) => {
  const schemas = usePostgresSchemas(connectionString);
  describeUpgrade('PostgreSQL', {
    async createV7() {
      const schema = schemas.name();
      const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString, max: 2 }) }) });
      const location: SchemaLocation = { dialect: 'postgres', schema };
      await migrateTo(db, location, 7);
      return { db, location, open: () => createPostgresAccountStore({ connectionString, schema, pollIntervalMs: 100 }) };
    },
  });
});
