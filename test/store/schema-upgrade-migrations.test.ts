/**
 * @module schema-upgrade-migrations.test
 * Upgrading a SQL store across one schema version, for each version that added something an earlier
 * database lacks: account resources (schema version 7, RFC 8707 resource indicators), credential
 * expiry (8), account token policies (ACCOUNT_POLICY_MIGRATION) and claim conditions on federated
 * credentials (FEDERATED_CLAIMS_MIGRATION, the nullable column `federated_credentials.claims`). For
 * each, a database that the schema before it created and filled with an account (and a secret or a
 * federated credential) is migrated on first use by the new code; what it holds reads as before
 * (no resources, no expiry, the server's token lifetime and no DPoP requirement, no claim
 * conditions); and what the version added is then kept, and read by another store sharing the
 * database. One shape, one row per version (UPGRADES), on SQLite and on PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { Pool } from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ACCOUNT_POLICY_MIGRATION } from '../../src/sql/account-policy-schema.js';
import { FEDERATED_CLAIMS_MIGRATION } from '../../src/sql/federated-claims-schema.js';
import { createPostgresAccountStore, createSqliteAccountStore, type SqlAccountStore } from '../../src/sql/index.js';
import { LATEST_SCHEMA_VERSION, SCHEMA_VERSIONS, migrateTo, type Database, type SchemaLocation } from '../../src/sql/schema.js';
import { IdFactory } from '../../src/testing/contract-fixtures.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';

const ids = new IdFactory();
const CREATED = Date.parse('2025-06-01T08:00:00.000Z');
const ISSUER = 'https://token.actions.githubusercontent.com';
/** The schema version just before `version`. */
const before = (version: number): number => SCHEMA_VERSIONS[SCHEMA_VERSIONS.indexOf(version) - 1]!;

/** What the earlier database holds: an account and one credential of it. */
interface Held {
  readonly clientId: string;
  readonly credentialId: string;
}

/** One schema version's upgrade. */
interface Upgrade {
  /** The schema version the earlier database is at. */
  readonly from: number;
  /** The describe block's name, after the dialect's. */
  readonly title: string;
  /** The name of the PostgreSQL block, and the prefix of the SQLite files' folder. */
  readonly postgresTitle: string;
  readonly folder: string;
  /** The account's name and scopes, and its one credential (`secret` or `federated`). */
  readonly account: { readonly name: string; readonly scopes: string };
  readonly credential: 'secret' | 'federated';
  /** The first test: what the migrated store reads of what the earlier database held. */
  readonly first: { readonly name: string; check(store: SqlAccountStore, held: Held): Promise<void> };
  /** The second test: what the version added is kept by one store (`a`) and read by another (`b`). */
  readonly then: { readonly name: string; check(a: SqlAccountStore, b: SqlAccountStore, held: Held): Promise<void> };
}

const UPGRADES: readonly Upgrade[] = [
  {
    from: 6,
    title: 'upgrading a database of schema version 6 to account resources',
    postgresTitle: 'PostgreSQL account-resources migration',
    folder: 'esa-resources-migration-',
    account: { name: 'billing-exporter', scopes: '["jobs:read"]' },
    credential: 'secret',
    first: {
      name: 'migrates on first use and reads an account of version 6 as one without resources',
      async check(store, { clientId }) {
        const account = await store.findAccount(clientId);
        expect(account).toMatchObject({ clientId, name: 'billing-exporter', scopes: ['jobs:read'], resources: [], enabled: true });
        expect(account?.secrets).toHaveLength(1);
        expect(LATEST_SCHEMA_VERSION).toBeGreaterThanOrEqual(7);
      },
    },
    then: {
      name: 'then keeps the resources set on that account, and another store reads them',
      async check(a, b, { clientId }) {
        const updated = await a.setAccountResources(clientId, ['https://api.example.com/', 'billing']);
        expect(updated?.resources).toEqual(['https://api.example.com/', 'billing']);
        expect((await b.findAccount(clientId))?.resources).toEqual(['https://api.example.com/', 'billing']);
        expect((await b.listAccounts()).find((account) => account.clientId === clientId)?.resources).toEqual(['https://api.example.com/', 'billing']);
      },
    },
  },
  {
    from: 7,
    title: 'upgrading a database of schema version 7 to credential expiry',
    postgresTitle: 'PostgreSQL credential-expiry migration',
    folder: 'esa-expiry-migration-',
    account: { name: 'billing-exporter', scopes: '["jobs:read"]' },
    credential: 'secret',
    first: {
      name: 'migrates on first use and reads a secret of version 7 as one that never expires',
      async check(store, { clientId }) {
        const account = await store.findAccount(clientId);
        expect(account?.secrets).toHaveLength(1);
        // SecretRecord.expiresAt: "null or absent: never"
        expect(account?.secrets[0]?.expiresAt ?? null).toBeNull();
        expect(LATEST_SCHEMA_VERSION).toBeGreaterThanOrEqual(8);
      },
    },
    then: {
      name: 'then keeps the expiresAt of a secret added to that account, and another store reads it',
      async check(a, b, { clientId }) {
        const expiresAt = new Date('2030-01-01T00:00:00.000Z');
        const secret = { ...ids.secret(), expiresAt };
        const stored = await a.addSecret(clientId, secret, { maxLiveCredentials: 5, maxLiveSecrets: 5 });
        expect(typeof stored === 'object' && stored.expiresAt).toEqual(expiresAt);
        expect((await b.findAccount(clientId))?.secrets.find((s) => s.id === secret.id)?.expiresAt).toEqual(expiresAt);
      },
    },
  },
  {
    from: before(ACCOUNT_POLICY_MIGRATION.version),
    title: 'upgrading a database of the previous schema to account token policies',
    postgresTitle: 'PostgreSQL account-policy migration',
    folder: 'esa-policy-migration-',
    account: { name: 'billing-exporter', scopes: '["jobs:read"]' },
    credential: 'secret',
    first: {
      name: 'migrates on first use and reads an earlier account with the server lifetime (null) and no DPoP requirement',
      async check(store, { clientId }) {
        const account = await store.findAccount(clientId);
        expect(account).toMatchObject({ clientId, name: 'billing-exporter', scopes: ['jobs:read'], accessTokenLifetime: null, dpopBoundAccessTokens: false });
        expect(account?.secrets).toHaveLength(1);
      },
    },
    then: {
      name: 'then keeps the policy set on that account, and another store reads it',
      async check(a, b, { clientId }) {
        const updated = await a.setAccountPolicy(clientId, { accessTokenLifetime: 900, dpopBoundAccessTokens: true });
        expect(updated).toMatchObject({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
        expect(await b.findAccount(clientId)).toMatchObject({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
        expect((await b.listAccounts()).find((account) => account.clientId === clientId)).toMatchObject({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
      },
    },
  },
  {
    from: before(FEDERATED_CLAIMS_MIGRATION.version),
    title: `upgrading a database of schema version ${before(FEDERATED_CLAIMS_MIGRATION.version)} to federated claim conditions`,
    postgresTitle: 'PostgreSQL federated-claims migration',
    folder: 'esa-claims-migration-',
    account: { name: 'deployer', scopes: '[]' },
    credential: 'federated',
    first: {
      name: 'migrates on first use and reads a credential from before as one without claim conditions',
      async check(store, { clientId, credentialId }) {
        const account = await store.findAccount(clientId);
        expect(account?.federated).toHaveLength(1);
        const [credential] = account!.federated!;
        expect(credential).toMatchObject({ id: credentialId, issuer: ISSUER, subject: 'repo:acme/app:ref:refs/heads/main', revokedAt: null });
        expect(credential!.claims).toBeUndefined();
        expect(await store.findFederatedClients(ISSUER, 'repo:acme/app:ref:refs/heads/main', 2)).toEqual([clientId]);
      },
    },
    then: {
      name: 'then keeps the claim conditions of a credential added to that account, and another store reads them',
      async check(a, b, { clientId }) {
        const claims = { repository_owner: 'acme', '/kubernetes.io/namespace': 'payments' };
        const credential = ids.federated({ issuer: ISSUER, subject: 'repo:acme/app:environment:production', claims });
        const added = await a.addFederatedCredential(clientId, credential, { maxLiveCredentials: 5 });
        expect(added).toMatchObject({ id: credential.id, claims });
        const read = (await b.findAccount(clientId))?.federated?.find((c) => c.id === credential.id);
        expect(Object.entries(read?.claims ?? {})).toEqual(Object.entries(claims));
      },
    },
  },
];

interface Dialect {
  /** A new database at schema version `version`, through `db` (destroyed by the caller). */
  create(version: number): Promise<{ db: Kysely<Database>; location: SchemaLocation; open: () => SqlAccountStore }>;
}

function describeUpgrade(name: string, upgrade: Upgrade, dialect: Dialect): void {
  describe(`${name}: ${upgrade.title}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    async function setUp() {
      const earlier = await dialect.create(upgrade.from);
      cleanups.push(() => earlier.db.destroy());
      const table = (t: string) => (earlier.location.dialect === 'postgres' ? sql.id(earlier.location.schema, t) : sql.id(t));
      const versions = async (): Promise<number[]> => {
        const result = await sql<{ version: number }>`select version from ${table('account_store_migrations')} order by version`.execute(earlier.db);
        return result.rows.map((row) => Number(row.version));
      };
      expect(await versions()).toEqual(SCHEMA_VERSIONS.filter((version) => version <= upgrade.from));
      const clientId = ids.clientId();
      const { name: accountName, scopes } = upgrade.account;
      await sql`insert into ${table('accounts')} (client_id, name, client_account_id, scopes, enabled, created_at)
        values (${clientId}, ${accountName}, ${null}, ${scopes}, 1, ${CREATED})`.execute(earlier.db);
      let credentialId: string;
      if (upgrade.credential === 'secret') {
        credentialId = ids.secretId();
        const hash = `$2b$10$${'h'.repeat(53)}`;
        await sql`insert into ${table('secrets')} (id, client_id, hash, created_at, last_used_at, revoked_at)
          values (${credentialId}, ${clientId}, ${hash}, ${CREATED}, null, null)`.execute(earlier.db);
      } else {
        credentialId = ids.federatedId();
        await sql`insert into ${table('federated_credentials')} (id, client_id, issuer, subject, audience, jwks_uri, created_at, last_used_at, revoked_at)
          values (${credentialId}, ${clientId}, ${ISSUER}, ${'repo:acme/app:ref:refs/heads/main'}, ${null}, ${null}, ${CREATED}, null, null)`.execute(earlier.db);
      }
      const open = (): SqlAccountStore => {
        const store = earlier.open();
        cleanups.push(() => store.close());
        return store;
      };
      return { held: { clientId, credentialId }, open, versions };
    }

    it(upgrade.first.name, async () => {
      const { held, open, versions } = await setUp();
      const store = open();
      await upgrade.first.check(store, held);
      expect(await versions()).toEqual([...SCHEMA_VERSIONS]);
    });

    it(upgrade.then.name, async () => {
      const { held, open } = await setUp();
      const [a, b] = [open(), open()];
      await upgrade.then.check(a, b, held);
    });
  });
}

for (const upgrade of UPGRADES) {
  const root = mkdtempSync(join(tmpdir(), upgrade.folder));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  describeUpgrade('SQLite', upgrade, {
    async create(version) {
      const filename = join(root, `${randomUUID()}.db`);
      const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(filename) }) });
      const location: SchemaLocation = { dialect: 'sqlite', schema: 'public' };
      await migrateTo(db, location, version);
      return { db, location, open: () => createSqliteAccountStore({ filename, pollIntervalMs: 100 }) };
    },
  });
}

for (const upgrade of UPGRADES) {
  withPostgres(upgrade.postgresTitle, (connectionString) => {
    const schemas = usePostgresSchemas(connectionString);
    describeUpgrade('PostgreSQL', upgrade, {
      async create(version) {
        const schema = schemas.name();
        const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString, max: 2 }) }) });
        const location: SchemaLocation = { dialect: 'postgres', schema };
        await migrateTo(db, location, version);
        return { db, location, open: () => createPostgresAccountStore({ connectionString, schema, pollIntervalMs: 100 }) };
      },
    });
  });
}
