/**
 * @module federated-claims-migration.test
 * Upgrading a SQL store to claim conditions on federated credentials (the migration
 * FEDERATED_CLAIMS_MIGRATION, which adds the nullable column `federated_credentials.claims`): a database
 * that the schema before it created, holding an account with a federated credential, is migrated on
 * first use by the new code; that credential reads as one without conditions (it trusts exactly what
 * it trusted before); and a credential added afterwards keeps its conditions, which another store
 * sharing the database reads.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { Pool } from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FEDERATED_CLAIMS_MIGRATION } from '../../src/sql/federated-claims-schema.js';
import { createPostgresAccountStore, createSqliteAccountStore, type SqlAccountStore } from '../../src/sql/index.js';
import { SCHEMA_VERSIONS, migrateTo, type Database, type SchemaLocation } from '../../src/sql/schema.js';
import { IdFactory } from '../../src/testing/contract-fixtures.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';

const ids = new IdFactory();
const CREATED = Date.parse('2025-06-01T08:00:00.000Z');
const ISSUER = 'https://token.actions.githubusercontent.com';
/** The schema version just before claim conditions. */
const BEFORE = SCHEMA_VERSIONS[SCHEMA_VERSIONS.indexOf(FEDERATED_CLAIMS_MIGRATION.version) - 1]!;

interface Dialect {
  /** A new database at the schema version before claim conditions, through `db` (destroyed by the caller). */
  createBefore(): Promise<{ db: Kysely<Database>; location: SchemaLocation; open: () => SqlAccountStore }>;
}

function describeUpgrade(name: string, dialect: Dialect): void {
  describe(`${name}: upgrading a database of schema version ${BEFORE} to federated claim conditions`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    async function setUp() {
      const before = await dialect.createBefore();
      cleanups.push(() => before.db.destroy());
      const table = (t: string) => (before.location.dialect === 'postgres' ? sql.id(before.location.schema, t) : sql.id(t));
      const versions = async (): Promise<number[]> => {
        const result = await sql<{ version: number }>`select version from ${table('account_store_migrations')} order by version`.execute(before.db);
        return result.rows.map((row) => Number(row.version));
      };
      expect(await versions()).toEqual(SCHEMA_VERSIONS.filter((version) => version <= BEFORE));
      const clientId = ids.clientId();
      const credentialId = ids.federatedId();
      await sql`insert into ${table('accounts')} (client_id, name, client_account_id, scopes, enabled, created_at)
        values (${clientId}, ${'deployer'}, ${null}, ${'[]'}, 1, ${CREATED})`.execute(before.db);
      await sql`insert into ${table('federated_credentials')} (id, client_id, issuer, subject, audience, jwks_uri, created_at, last_used_at, revoked_at)
        values (${credentialId}, ${clientId}, ${ISSUER}, ${'repo:acme/app:ref:refs/heads/main'}, ${null}, ${null}, ${CREATED}, null, null)`.execute(before.db);
      const open = (): SqlAccountStore => {
        const store = before.open();
        cleanups.push(() => store.close());
        return store;
      };
      return { clientId, credentialId, open, versions };
    }

    it('migrates on first use and reads a credential from before as one without claim conditions', async () => {
      const { clientId, credentialId, open, versions } = await setUp();
      const store = open();
      const account = await store.findAccount(clientId);
      expect(account?.federated).toHaveLength(1);
      const [credential] = account!.federated!;
      expect(credential).toMatchObject({ id: credentialId, issuer: ISSUER, subject: 'repo:acme/app:ref:refs/heads/main', revokedAt: null });
      expect(credential!.claims).toBeUndefined();
      expect(await versions()).toEqual([...SCHEMA_VERSIONS]);
      expect(await store.findFederatedClients(ISSUER, 'repo:acme/app:ref:refs/heads/main', 2)).toEqual([clientId]);
    });

    it('then keeps the claim conditions of a credential added to that account, and another store reads them', async () => {
      const { clientId, open } = await setUp();
      const [a, b] = [open(), open()];
      const claims = { repository_owner: 'acme', '/kubernetes.io/namespace': 'payments' };
      const credential = ids.federated({ issuer: ISSUER, subject: 'repo:acme/app:environment:production', claims });
      const added = await a.addFederatedCredential(clientId, credential, { maxLiveCredentials: 5 });
      expect(added).toMatchObject({ id: credential.id, claims });
      const read = (await b.findAccount(clientId))?.federated?.find((c) => c.id === credential.id);
      expect(Object.entries(read?.claims ?? {})).toEqual(Object.entries(claims));
    });
  });
}

const root = mkdtempSync(join(tmpdir(), 'esa-claims-migration-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describeUpgrade('SQLite', {
  async createBefore() {
    const filename = join(root, `${randomUUID()}.db`);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(filename) }) });
    const location: SchemaLocation = { dialect: 'sqlite', schema: 'public' };
    await migrateTo(db, location, BEFORE);
    return { db, location, open: () => createSqliteAccountStore({ filename, pollIntervalMs: 100 }) };
  },
});

withPostgres('PostgreSQL federated-claims migration', (connectionString) => {
  const schemas = usePostgresSchemas(connectionString);
  describeUpgrade('PostgreSQL', {
    async createBefore() {
      const schema = schemas.name();
      const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString, max: 2 }) }) });
      const location: SchemaLocation = { dialect: 'postgres', schema };
      await migrateTo(db, location, BEFORE);
      return { db, location, open: () => createPostgresAccountStore({ connectionString, schema, pollIntervalMs: 100 }) };
    },
  });
});
