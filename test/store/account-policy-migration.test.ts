/**
 * @module account-policy-migration.test
 * Upgrading a SQL store to account token policies (the schema version of ACCOUNT_POLICY_MIGRATION):
 * a database that the previous schema created and filled with an account is migrated on first use by
 * the new code, reads that account as one with the server's token lifetime and no DPoP requirement
 * (its tokens are issued as before), and then keeps the policy set on it (AccountStore.setAccountPolicy),
 * which another store sharing the database reads.
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
import { ACCOUNT_POLICY_MIGRATION } from '../../src/sql/account-policy-schema.js';
import { SCHEMA_VERSIONS, migrateTo, type Database, type SchemaLocation } from '../../src/sql/schema.js';
import { IdFactory } from '../../src/testing/contract-fixtures.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';

const ids = new IdFactory();
const CREATED = Date.parse('2025-06-01T08:00:00.000Z');
/** The schema just before account policies. */
const PREVIOUS = SCHEMA_VERSIONS[SCHEMA_VERSIONS.indexOf(ACCOUNT_POLICY_MIGRATION.version) - 1]!;

interface Dialect {
  /** A new database at the previous schema version, through `db` (destroyed by the caller). */
  createPrevious(): Promise<{ db: Kysely<Database>; location: SchemaLocation; open: () => SqlAccountStore }>;
}

function describeUpgrade(name: string, dialect: Dialect): void {
  describe(`${name}: upgrading a database of the previous schema to account token policies`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    async function setUp() {
      const previous = await dialect.createPrevious();
      cleanups.push(() => previous.db.destroy());
      const table = (t: string) => (previous.location.dialect === 'postgres' ? sql.id(previous.location.schema, t) : sql.id(t));
      const versions = async (): Promise<number[]> => {
        const result = await sql<{ version: number }>`select version from ${table('account_store_migrations')} order by version`.execute(previous.db);
        return result.rows.map((row) => Number(row.version));
      };
      expect(await versions()).toEqual(SCHEMA_VERSIONS.filter((version) => version <= PREVIOUS));
      const clientId = ids.clientId();
      const secretId = ids.secretId();
      const hash = `$2b$10$${'h'.repeat(53)}`;
      await sql`insert into ${table('accounts')} (client_id, name, client_account_id, scopes, enabled, created_at)
        values (${clientId}, ${'billing-exporter'}, ${null}, ${'["jobs:read"]'}, 1, ${CREATED})`.execute(previous.db);
      await sql`insert into ${table('secrets')} (id, client_id, hash, created_at, last_used_at, revoked_at)
        values (${secretId}, ${clientId}, ${hash}, ${CREATED}, null, null)`.execute(previous.db);
      const open = (): SqlAccountStore => {
        const store = previous.open();
        cleanups.push(() => store.close());
        return store;
      };
      return { clientId, open, versions };
    }

    it('migrates on first use and reads an earlier account with the server lifetime (null) and no DPoP requirement', async () => {
      const { clientId, open, versions } = await setUp();
      const store = open();
      const account = await store.findAccount(clientId);
      expect(account).toMatchObject({ clientId, name: 'billing-exporter', scopes: ['jobs:read'], accessTokenLifetime: null, dpopBoundAccessTokens: false });
      expect(account?.secrets).toHaveLength(1);
      expect(await versions()).toEqual([...SCHEMA_VERSIONS]);
    });

    it('then keeps the policy set on that account, and another store reads it', async () => {
      const { clientId, open } = await setUp();
      const [a, b] = [open(), open()];
      const updated = await a.setAccountPolicy(clientId, { accessTokenLifetime: 900, dpopBoundAccessTokens: true });
      expect(updated).toMatchObject({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
      expect(await b.findAccount(clientId)).toMatchObject({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
      expect((await b.listAccounts()).find((account) => account.clientId === clientId)).toMatchObject({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
    });
  });
}

const root = mkdtempSync(join(tmpdir(), 'esa-policy-migration-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describeUpgrade('SQLite', {
  async createPrevious() {
    const filename = join(root, `${randomUUID()}.db`);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(filename) }) });
    const location: SchemaLocation = { dialect: 'sqlite', schema: 'public' };
    await migrateTo(db, location, PREVIOUS);
    return { db, location, open: () => createSqliteAccountStore({ filename, pollIntervalMs: 100 }) };
  },
});

withPostgres('PostgreSQL account-policy migration', (connectionString) => {
  const schemas = usePostgresSchemas(connectionString);
  describeUpgrade('PostgreSQL', {
    async createPrevious() {
      const schema = schemas.name();
      const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString, max: 2 }) }) });
      const location: SchemaLocation = { dialect: 'postgres', schema };
      await migrateTo(db, location, PREVIOUS);
      return { db, location, open: () => createPostgresAccountStore({ connectionString, schema, pollIntervalMs: 100 }) };
    },
  });
});
