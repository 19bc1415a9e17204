/**
 * @module verified-digest-migration.test
 * Upgrading a SQL store to verified secret digests (schema version 5): a database that the previous
 * schema (version 4, as released) created and filled with accounts, secrets (live and revoked), a key
 * and a federated credential is migrated on first use by the new code, keeps every account and
 * credential as it was (its secrets without a digest), and then keeps a secret's digest
 * (AccountStore.recordSecretDigest); several processes opening it at once migrate it once; and a
 * digest is bookkeeping, never announced to watchers (AccountStore.recordSecretDigest: "never
 * announced to watchers", like recordSecretUse).
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
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';
import { within } from './helpers.js';
import { accountAnnouncements } from '../helpers/account-announcements.js';

const ids = new IdFactory();
const CREATED = Date.parse('2025-06-01T08:00:00.000Z');
const DIGEST = `v1.AbCdEfGhIjKlMnOp.${'d'.repeat(43)}`;

interface Dialect {
  /** A new database at schema version 4, through `db` (destroyed by the caller). */
  createV4(): Promise<{ db: Kysely<Database>; location: SchemaLocation; open: () => SqlAccountStore }>;
}

/** What version 4 held, filled in with plain SQL: one account with a live and a revoked secret, a live key and a federated credential. */
async function fillV4(db: Kysely<Database>, table: (name: string) => ReturnType<typeof sql.id>) {
  const clientId = ids.clientId();
  const [live, revoked] = [ids.secretId(), ids.secretId()];
  const hash = `$2b$10$${'h'.repeat(53)}`;
  const key = ids.key();
  const trust = ids.federated();
  await sql`insert into ${table('accounts')} (client_id, name, client_account_id, scopes, enabled, created_at)
    values (${clientId}, ${'billing-exporter'}, ${null}, ${'[]'}, 1, ${CREATED})`.execute(db);
  await sql`insert into ${table('secrets')} (id, client_id, hash, created_at, last_used_at, revoked_at)
    values (${live}, ${clientId}, ${hash}, ${CREATED}, ${CREATED + 5000}, null),
           (${revoked}, ${clientId}, ${hash}, ${CREATED + 1000}, null, ${CREATED + 2000})`.execute(db);
  await sql`insert into ${table('client_keys')} (id, client_id, thumbprint, public_jwk, created_at, last_used_at, revoked_at)
    values (${key.id}, ${clientId}, ${key.thumbprint}, ${JSON.stringify(key.publicKey)}, ${CREATED + 3000}, null, null)`.execute(db);
  await sql`insert into ${table('federated_credentials')} (id, client_id, issuer, subject, audience, jwks_uri, created_at, last_used_at, revoked_at)
    values (${trust.id}, ${clientId}, ${trust.issuer}, ${trust.subject}, ${trust.audience}, ${trust.jwksUri}, ${CREATED + 4000}, null, null)`.execute(db);
  return {
    clientId,
    live,
    expected: {
      clientId,
      name: 'billing-exporter',
      clientAccountId: null,
      scopes: [],
      resources: [],
      accessTokenLifetime: null,
      dpopBoundAccessTokens: false,
      enabled: true,
      createdAt: new Date(CREATED),
      secrets: [
        { id: live, hash, createdAt: new Date(CREATED), lastUsedAt: new Date(CREATED + 5000), revokedAt: null },
        { id: revoked, hash, createdAt: new Date(CREATED + 1000), lastUsedAt: null, revokedAt: new Date(CREATED + 2000) },
      ],
      keys: [{ ...key, createdAt: new Date(CREATED + 3000), lastUsedAt: null, revokedAt: null }],
      federated: [{ ...trust, createdAt: new Date(CREATED + 4000), lastUsedAt: null, revokedAt: null }],
    },
  };
}

function describeUpgrade(name: string, dialect: Dialect): void {
  describe(`${name}: upgrading a database of schema version 4 to verified secret digests`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    async function setUp() {
      const v4 = await dialect.createV4();
      cleanups.push(() => v4.db.destroy());
      const table = (t: string) => (v4.location.dialect === 'postgres' ? sql.id(v4.location.schema, t) : sql.id(t));
      const versions = async (): Promise<number[]> => {
        const result = await sql<{ version: number }>`select version from ${table('account_store_migrations')} order by version`.execute(v4.db);
        return result.rows.map((row) => Number(row.version));
      };
      expect(await versions()).toEqual([1, 2, 3, 4]);
      const filled = await fillV4(v4.db, table);
      const open = (): SqlAccountStore => {
        const store = v4.open();
        cleanups.push(() => store.close());
        return store;
      };
      return { ...filled, open, versions };
    }
    const allVersions = [...SCHEMA_VERSIONS];

    it('migrates on first use, keeps every account and credential, and then keeps a secret’s digest', async () => {
      const { clientId, live, expected, open, versions } = await setUp();
      const store = open();
      expect(await store.findAccount(clientId)).toEqual(expected);
      expect(await versions()).toEqual(allVersions);
      expect(allVersions).toContain(5);
      await store.recordSecretDigest(clientId, live, DIGEST);
      const [liveSecret, revokedSecret] = expected.secrets;
      const withDigest = { ...expected, secrets: [{ ...liveSecret, verifiedDigest: DIGEST }, revokedSecret] };
      expect(await store.findAccount(clientId)).toEqual(withDigest);
      expect((await store.listAccounts()).find((a) => a.clientId === clientId)).toEqual(withDigest);
    });

    it('migrates once when several stores open it at the same moment', async () => {
      const { clientId, expected, open, versions } = await setUp();
      const stores = [open(), open(), open()];
      await Promise.all(stores.map((store) => store.init()));
      expect(await versions()).toEqual(allVersions);
      for (const store of stores) expect(await store.findAccount(clientId)).toEqual(expected);
    });

    it("a digest written through store A is read by store B, and is never announced to B's watch listener", async () => {
      const { clientId, live, open } = await setUp();
      const [a, b] = [open(), open()];
      const seen = await accountAnnouncements(b);
      await a.recordSecretDigest(clientId, live, DIGEST);
      expect((await b.findAccount(clientId))?.secrets[0]?.verifiedDigest).toBe(DIGEST);
      // The feed is ordered: once a later change (a new account) has arrived, an announcement of the digest would have arrived before it.
      const marker = await a.createAccount({ ...ids.account(), clientId: ids.clientId() });
      await vi.waitFor(() => expect(seen, 'later change seen by B').toContain(marker.clientId), within(1000));
      expect(seen).toEqual([marker.clientId]);
    });
  });
}

const root = mkdtempSync(join(tmpdir(), 'esa-digest-migration-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describeUpgrade('SQLite', {
  async createV4() {
    const filename = join(root, `${randomUUID()}.db`);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(filename) }) });
    const location: SchemaLocation = { dialect: 'sqlite', schema: 'public' };
    await migrateTo(db, location, 4);
    return { db, location, open: () => createSqliteAccountStore({ filename, pollIntervalMs: 100 }) };
  },
});

withPostgres('PostgreSQL verified-digest migration', (connectionString) => {
  const schemas = usePostgresSchemas(connectionString);
  describeUpgrade('PostgreSQL', {
    async createV4() {
      const schema = schemas.name();
      const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString, max: 2 }) }) });
      const location: SchemaLocation = { dialect: 'postgres', schema };
      await migrateTo(db, location, 4);
      return { db, location, open: () => createPostgresAccountStore({ connectionString, schema, pollIntervalMs: 100 }) };
    },
  });
});
