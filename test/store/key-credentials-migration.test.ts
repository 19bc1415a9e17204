/**
 * @module key-credentials-migration.test
 * Upgrading a SQL store to key-pair credentials: a database that the previous schema (version 1, as
 * released) created and filled with accounts is migrated on first use by the new code, keeps every
 * account and secret, and then holds keys; several processes opening it at once migrate it once; and
 * a key revocation through one store reaches another store's watch listener within 1 s, as a secret
 * revocation does (docs/security.md: "takes effect on every instance within a second").
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { Pool } from 'pg';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createPostgresAccountStore, createSqliteAccountStore, type SqlAccountStore } from '../../src/sql/index.js';
import { SCHEMA_VERSIONS, migrateTo, type Database, type SchemaLocation } from '../../src/sql/schema.js';
import { IdFactory } from '../../src/testing/contract-fixtures.js';
import { quoteIdentifier, usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';
import { within } from './helpers.js';
import { accountAnnouncements } from '../helpers/account-announcements.js';

const ids = new IdFactory();
const CREATED = Date.parse('2025-03-01T08:00:00.000Z');

/** How one dialect builds a database at schema version 1 and opens the current store on it. */
interface Dialect {
  /** A new database at schema version 1, through `db` (a Kysely on it, destroyed by the caller). */
  createV1(): Promise<{ db: Kysely<Database>; location: SchemaLocation; open: () => SqlAccountStore }>;
  /** The schema versions recorded in the database. */
  versions(location: SchemaLocation, db: Kysely<Database>): Promise<number[]>;
}

/** What version 1 held: one account with a live, used secret and a revoked one, filled in with plain SQL. */
async function fillV1(db: Kysely<Database>, table: (name: string) => ReturnType<typeof sql.id>) {
  const clientId = ids.clientId();
  const [live, revoked] = [ids.secretId(), ids.secretId()];
  const hash = `$2b$12$${'h'.repeat(53)}`;
  await sql`insert into ${table('accounts')} (client_id, name, client_account_id, scopes, enabled, created_at)
    values (${clientId}, ${'procurement-portal'}, ${'acme'}, ${'["jobs:write"]'}, 1, ${CREATED})`.execute(db);
  await sql`insert into ${table('secrets')} (id, client_id, hash, created_at, last_used_at, revoked_at)
    values (${live}, ${clientId}, ${hash}, ${CREATED}, ${CREATED + 5000}, null),
           (${revoked}, ${clientId}, ${hash}, ${CREATED + 1000}, null, ${CREATED + 2000})`.execute(db);
  return {
    clientId,
    expected: {
      clientId,
      name: 'procurement-portal',
      clientAccountId: 'acme',
      scopes: ['jobs:write'],
      resources: [],
      accessTokenLifetime: null,
      dpopBoundAccessTokens: false,
      enabled: true,
      createdAt: new Date(CREATED),
      secrets: [
        { id: live, hash, createdAt: new Date(CREATED), lastUsedAt: new Date(CREATED + 5000), revokedAt: null },
        { id: revoked, hash, createdAt: new Date(CREATED + 1000), lastUsedAt: null, revokedAt: new Date(CREATED + 2000) },
      ],
      keys: [],
      federated: [],
    },
  };
}

function describeUpgrade(name: string, dialect: Dialect): void {
  describe(`${name}: upgrading a database of the previous schema`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    async function setUp() {
      const v1 = await dialect.createV1();
      cleanups.push(() => v1.db.destroy());
      const table = (t: string) => (v1.location.dialect === 'postgres' ? sql.id(v1.location.schema, t) : sql.id(t));
      expect(await dialect.versions(v1.location, v1.db)).toEqual([1]);
      const filled = await fillV1(v1.db, table);
      const open = (): SqlAccountStore => {
        const store = v1.open();
        cleanups.push(() => store.close());
        return store;
      };
      return { ...v1, ...filled, open };
    }

    it('migrates on first use, keeps every account and secret, and then holds keys', async () => {
      const { db, location, clientId, expected, open } = await setUp();
      const store = open();
      expect(await store.findAccount(clientId)).toEqual(expected);
      expect(await dialect.versions(location, db)).toEqual([...SCHEMA_VERSIONS]);
      const key = ids.key();
      expect(await store.addKey(clientId, key, { maxLiveCredentials: 5 })).toEqual({ ...key, lastUsedAt: null, revokedAt: null });
      // The cap counts what version 1 stored: one live secret, and now one key.
      expect(await store.addKey(clientId, ids.key(), { maxLiveCredentials: 2 })).toBe('limit_reached');
      expect((await store.listAccounts()).find((a) => a.clientId === clientId)).toEqual({
        ...expected,
        keys: [{ ...key, lastUsedAt: null, revokedAt: null }],
      });
    });

    it('migrates once when several stores open it at the same moment', async () => {
      const { db, location, clientId, expected, open } = await setUp();
      const stores = [open(), open(), open()];
      await Promise.all(stores.map((store) => store.init()));
      expect(await dialect.versions(location, db)).toEqual([...SCHEMA_VERSIONS]);
      for (const store of stores) expect(await store.findAccount(clientId)).toEqual(expected);
    });

    it("a key revocation through store A reaches store B's watch listener within 1 s, like a secret revocation", async () => {
      const { clientId, open } = await setUp();
      const [a, b] = [open(), open()];
      const key = ids.key();
      await a.addKey(clientId, key, { maxLiveCredentials: 5 });
      const seen = await accountAnnouncements(b);
      await a.revokeKey(clientId, key.id, new Date());
      await vi.waitFor(() => expect(seen, 'revokeKey seen by B').toContain(clientId), within(1000));
      expect((await b.findAccount(clientId))?.keys?.[0]?.revokedAt).toBeInstanceOf(Date);
      // Last use is bookkeeping, never announced: the feed is ordered, so once a later change (a new
      // account) has arrived, an announcement of the use would have arrived before it.
      seen.length = 0;
      await a.recordKeyUse(clientId, key.id, new Date());
      const marker = await a.createAccount({ ...ids.account(), clientId: ids.clientId() });
      await vi.waitFor(() => expect(seen, 'later change seen by B').toContain(marker.clientId), within(1000));
      expect(seen).toEqual([marker.clientId]);
    });
  });
}

const root = mkdtempSync(join(tmpdir(), 'esa-key-migration-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describeUpgrade('SQLite', {
  async createV1() {
    const filename = join(root, `${randomUUID()}.db`);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(filename) }) });
    const location: SchemaLocation = { dialect: 'sqlite', schema: 'public' };
    await migrateTo(db, location, 1);
    return { db, location, open: () => createSqliteAccountStore({ filename, pollIntervalMs: 100 }) };
  },
  async versions(_location, db) {
    const result = await sql<{ version: number }>`select version from account_store_migrations order by version`.execute(db);
    return result.rows.map((row) => Number(row.version));
  },
});

withPostgres('PostgreSQL key-credentials migration', (connectionString) => {
  const schemas = usePostgresSchemas(connectionString);
  describeUpgrade('PostgreSQL', {
    async createV1() {
      const schema = schemas.name();
      const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString, max: 2 }) }) });
      const location: SchemaLocation = { dialect: 'postgres', schema };
      await migrateTo(db, location, 1);
      return { db, location, open: () => createPostgresAccountStore({ connectionString, schema, pollIntervalMs: 100 }) };
    },
    async versions(location, db) {
      const result = await sql<{ version: number }>`select version from ${sql.raw(quoteIdentifier(location.schema))}.account_store_migrations order by version`.execute(db);
      return result.rows.map((row) => Number(row.version));
    },
  });
});
