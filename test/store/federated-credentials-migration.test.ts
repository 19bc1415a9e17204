/**
 * @module federated-credentials-migration.test
 * Upgrading a SQL store to federated credentials: a database that the previous schema (version 3, as
 * released) created and filled with accounts, secrets and keys is migrated on first use by the new
 * code, keeps every account and credential, and then holds federated credentials under the shared
 * cap; several processes opening it at once migrate it once; a revocation through one store reaches
 * another store's watch listener within 1 s (docs/security.md: "takes effect on every instance within
 * a second"); and on PostgreSQL, stores adding to one account at once keep the cap and refuse duplicates
 * (AccountStore.addFederatedCredential: "atomic in the same way" as addSecret).
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
const STORES = 4;

/** How one dialect builds a database at schema version 3 and opens the current store on it. */
interface Dialect {
  /** A new database at schema version 3, through `db` (a Kysely on it, destroyed by the caller). */
  createV3(): Promise<{ db: Kysely<Database>; location: SchemaLocation; open: () => SqlAccountStore }>;
  /** The schema versions recorded in the database. */
  versions(location: SchemaLocation, db: Kysely<Database>): Promise<number[]>;
  /** Whether stores of this one process can interleave write transactions (not better-sqlite3's, which block). */
  readonly interleavedTransactions: boolean;
}

/** What version 3 held: one account with a live secret, a revoked one and a live key, filled in with plain SQL. */
async function fillV3(db: Kysely<Database>, table: (name: string) => ReturnType<typeof sql.id>) {
  const clientId = ids.clientId();
  const [live, revoked] = [ids.secretId(), ids.secretId()];
  const hash = `$2b$12$${'h'.repeat(53)}`;
  const key = ids.key();
  await sql`insert into ${table('accounts')} (client_id, name, client_account_id, scopes, enabled, created_at)
    values (${clientId}, ${'procurement-portal'}, ${'acme'}, ${'["jobs:write"]'}, 1, ${CREATED})`.execute(db);
  await sql`insert into ${table('secrets')} (id, client_id, hash, created_at, last_used_at, revoked_at)
    values (${live}, ${clientId}, ${hash}, ${CREATED}, ${CREATED + 5000}, null),
           (${revoked}, ${clientId}, ${hash}, ${CREATED + 1000}, null, ${CREATED + 2000})`.execute(db);
  await sql`insert into ${table('client_keys')} (id, client_id, thumbprint, public_jwk, created_at, last_used_at, revoked_at)
    values (${key.id}, ${clientId}, ${key.thumbprint}, ${JSON.stringify(key.publicKey)}, ${CREATED + 3000}, null, null)`.execute(db);
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
      keys: [{ ...key, createdAt: new Date(CREATED + 3000), lastUsedAt: null, revokedAt: null }],
      federated: [],
    },
  };
}

function describeUpgrade(name: string, dialect: Dialect): void {
  describe(`${name}: upgrading a database of schema version 3 to federated credentials`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    async function setUp() {
      const v3 = await dialect.createV3();
      cleanups.push(() => v3.db.destroy());
      const table = (t: string) => (v3.location.dialect === 'postgres' ? sql.id(v3.location.schema, t) : sql.id(t));
      expect(await dialect.versions(v3.location, v3.db)).toEqual([1, 2, 3]);
      const filled = await fillV3(v3.db, table);
      const open = (): SqlAccountStore => {
        const store = v3.open();
        cleanups.push(() => store.close());
        return store;
      };
      return { ...v3, ...filled, open };
    }
    const allVersions = [...SCHEMA_VERSIONS];

    it('migrates on first use, keeps every account, secret and key, and then holds federated credentials', async () => {
      const { db, location, clientId, expected, open } = await setUp();
      const store = open();
      expect(await store.findAccount(clientId)).toEqual(expected);
      expect(await dialect.versions(location, db)).toEqual(allVersions);
      expect(allVersions).toContain(4);
      const trust = ids.federated();
      const stored = { ...trust, lastUsedAt: null, revokedAt: null };
      expect(await store.addFederatedCredential(clientId, trust, { maxLiveCredentials: 5 })).toEqual(stored);
      // The cap counts what version 3 stored: one live secret and one live key, and now the federated credential.
      expect(await store.addFederatedCredential(clientId, ids.federated(), { maxLiveCredentials: 3 })).toBe('limit_reached');
      expect(await store.findFederatedClients(trust.issuer, trust.subject, 10)).toEqual([clientId]);
      expect((await store.listAccounts()).find((a) => a.clientId === clientId)).toEqual({ ...expected, federated: [stored] });
    });

    it('migrates once when several stores open it at the same moment', async () => {
      const { db, location, clientId, expected, open } = await setUp();
      const stores = [open(), open(), open()];
      await Promise.all(stores.map((store) => store.init()));
      expect(await dialect.versions(location, db)).toEqual(allVersions);
      for (const store of stores) expect(await store.findAccount(clientId)).toEqual(expected);
    });

    it("a federated credential's revocation through store A reaches store B's watch listener within 1 s, like a key's", async () => {
      const { clientId, open } = await setUp();
      const [a, b] = [open(), open()];
      const trust = ids.federated();
      await a.addFederatedCredential(clientId, trust, { maxLiveCredentials: 5 });
      const seen = await accountAnnouncements(b);
      await a.revokeFederatedCredential(clientId, trust.id, new Date());
      await vi.waitFor(() => expect(seen, 'revokeFederatedCredential seen by B').toContain(clientId), within(1000));
      expect((await b.findAccount(clientId))?.federated?.[0]?.revokedAt).toBeInstanceOf(Date);
      expect(await b.findFederatedClients(trust.issuer, trust.subject, 10)).toEqual([]);
      // Last use is bookkeeping, never announced: the feed is ordered, so once a later change (a new
      // account) has arrived, an announcement of the use would have arrived before it.
      seen.length = 0;
      await a.recordFederatedCredentialUse(clientId, trust.id, new Date());
      const marker = await a.createAccount({ ...ids.account(), clientId: ids.clientId() });
      await vi.waitFor(() => expect(seen, 'later change seen by B').toContain(marker.clientId), within(1000));
      expect(seen).toEqual([marker.clientId]);
    });

    it(`keeps the shared cap and refuses a duplicate trust when ${STORES} stores add to one account at once`, async (context) => {
      if (!dialect.interleavedTransactions) return context.skip('one process cannot interleave SQLite write transactions');
      const { clientId, open } = await setUp(); // one live secret and one live key
      const stores = Array.from({ length: STORES }, open);
      await Promise.all(stores.map((store) => store.init()));
      const adds = Array.from({ length: 8 }, (_, i) => stores[i % STORES]!.addFederatedCredential(clientId, ids.federated(), { maxLiveCredentials: 5 }));
      const results = await Promise.all(adds);
      expect(results.filter((r) => typeof r === 'object')).toHaveLength(3);
      expect(results.filter((r) => r === 'limit_reached')).toHaveLength(5);
      const trust = ids.federated(); // the default audience (NULL in the table)
      const twins = await Promise.all(
        stores.map((store) => store.addFederatedCredential(clientId, { ...trust, id: ids.federatedId() }, { maxLiveCredentials: 100 })),
      );
      expect(twins.filter((r) => typeof r === 'object')).toHaveLength(1);
      expect(twins.filter((r) => r === 'duplicate')).toHaveLength(STORES - 1);
      expect((await stores[1]!.findAccount(clientId))?.federated).toHaveLength(4);
    });
  });
}

const root = mkdtempSync(join(tmpdir(), 'esa-federated-migration-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describeUpgrade('SQLite', {
  interleavedTransactions: false,
  async createV3() {
    const filename = join(root, `${randomUUID()}.db`);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(filename) }) });
    const location: SchemaLocation = { dialect: 'sqlite', schema: 'public' };
    await migrateTo(db, location, 3);
    return { db, location, open: () => createSqliteAccountStore({ filename, pollIntervalMs: 100 }) };
  },
  async versions(_location, db) {
    const result = await sql<{ version: number }>`select version from account_store_migrations order by version`.execute(db);
    return result.rows.map((row) => Number(row.version));
  },
});

// The token endpoint looks an outside token's (iss, sub) up among live credentials: an index serves it.
it('SQLite: the lookup of live credentials by issuer and subject uses an index', async () => {
  const filename = join(root, `${randomUUID()}.db`);
  const store = createSqliteAccountStore({ filename });
  await store.init();
  await store.close();
  const db = new BetterSqlite3(filename);
  try {
    const plan = db
      .prepare('explain query plan select client_id from federated_credentials where issuer = ? and subject = ? and revoked_at is null')
      .all('https://oidc.example.com', 'system:serviceaccount:payments:exporter') as { detail: string }[];
    expect(plan.map((step) => step.detail).join('\n')).toContain('federated_credentials_trust_idx');
  } finally {
    db.close();
  }
});

withPostgres('PostgreSQL federated-credentials migration', (connectionString) => {
  const schemas = usePostgresSchemas(connectionString);
  describeUpgrade('PostgreSQL', {
    interleavedTransactions: true,
    async createV3() {
      const schema = schemas.name();
      const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString, max: 2 }) }) });
      const location: SchemaLocation = { dialect: 'postgres', schema };
      await migrateTo(db, location, 3);
      return { db, location, open: () => createPostgresAccountStore({ connectionString, schema, pollIntervalMs: 100 }) };
    },
    async versions(location, db) {
      const result = await sql<{ version: number }>`select version from ${sql.raw(quoteIdentifier(location.schema))}.account_store_migrations order by version`.execute(db);
      return result.rows.map((row) => Number(row.version));
    },
  });
});
