/**
 * @module postgres-account-store.test
 * The PostgreSQL store (needs POSTGRES_URL; skipped without it unless CI=true): the contract suite, plus
 * migrations, concurrent start-up, LISTEN/poll delivery and schema quoting. Each store uses a fresh schema, dropped afterwards.
 */
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createPostgresAccountStore, type PostgresAccountStoreOptions, type SqlAccountStore } from '../../src/sql/index.js';
import { ALL_ACCOUNTS } from '../../src/sql/change-feed.js';
import { notificationChannel } from '../../src/sql/postgres-account-store.js';
import { SCHEMA_VERSIONS } from '../../src/sql/schema.js';
import { describeAccountStore } from '../../src/testing/index.js';
import { quoteIdentifier, usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';
import { newAccount, runInitWorkers, within } from './helpers.js';
import { accountAnnouncements } from '../helpers/account-announcements.js';

withPostgres('PostgreSQL account store', describePostgres);

function describePostgres(connectionString: string): void {
  // Every store gets a fresh schema: the contract suite drops it when its test ends, the helper drops
  // every one left at the end of the file.
  const schemas = usePostgresSchemas(connectionString);

  describeAccountStore(
    'SqlAccountStore (PostgreSQL)',
    async () => {
      const schema = schemas.name();
      return { store: createPostgresAccountStore({ connectionString, schema }), cleanup: () => schemas.drop(schema) };
    },
    { describe, it, expect, beforeEach, afterEach },
  );

  describe('PostgreSQL account store', () => {
    const opened: SqlAccountStore[] = [];
    function open(schema: string, options: Partial<PostgresAccountStoreOptions> = {}): SqlAccountStore {
      const store = createPostgresAccountStore({ connectionString, schema, ...options });
      opened.push(store);
      return store;
    }
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });

    async function migrationCount(schema: string): Promise<number> {
      const result = await schemas.query<{ n: string }>(`select count(*) as n from ${quoteIdentifier(schema)}.account_store_migrations`);
      return Number(result.rows[0]?.n);
    }

    it('runs migrations once: init again, and init of a second store on the same schema, change nothing', async () => {
      const schema = schemas.name();
      const first = open(schema);
      await first.init();
      const account = await first.createAccount(newAccount());
      await first.init();
      const second = open(schema);
      await second.init();
      expect(await second.findAccount(account.clientId)).toEqual(account);
      expect(await migrationCount(schema)).toBe(SCHEMA_VERSIONS.length);
    });

    // AccountStore.revokeToken on a schema made before the deny-list existed (schema version 2, accounts
    // in it): the first use of the new version adds the table and keeps every account.
    it('a schema at version 2 that holds accounts gains the token deny-list on first use', async () => {
      const schema = schemas.name();
      const old = open(schema);
      const account = await old.createAccount(newAccount());
      const q = quoteIdentifier(schema);
      await schemas.query(`alter table ${q}.secrets drop column expires_at`);
      await schemas.query(`alter table ${q}.client_keys drop column expires_at`);
      await schemas.query(`alter table ${q}.secrets drop column verified_digest`);
      await schemas.query(`alter table ${q}.accounts drop column resources`);
      await schemas.query(`alter table ${q}.accounts drop column access_token_lifetime, drop column dpop_bound_access_tokens`);
      await schemas.query(`drop table ${q}.federated_credentials`);
      await schemas.query(`drop table ${q}.revoked_tokens`);
      await schemas.query(`drop index ${q}.accounts_client_account_id_idx`);
      await schemas.query(`delete from ${q}.account_store_migrations where version >= 3`);
      const store = open(schema);
      const record = { tokenId: randomUUID(), clientId: account.clientId, revokedAt: new Date(), expiresAt: new Date(Date.now() + 60_000) };
      expect(await store.revokeToken(record)).toEqual(record);
      expect(await store.findAccount(account.clientId)).toEqual(account);
      expect(await migrationCount(schema)).toBe(SCHEMA_VERSIONS.length);
    });

    it('concurrent init() of several stores on a fresh schema all succeed', async () => {
      const schema = schemas.name();
      const stores = [open(schema), open(schema), open(schema), open(schema)];
      await Promise.all(stores.map((store) => store.init()));
      await Promise.all(stores.map((store) => store.createAccount(newAccount())));
      expect(await stores[0]?.listAccounts()).toHaveLength(4);
      expect(await migrationCount(schema)).toBe(SCHEMA_VERSIONS.length);
    });

    // AccountStore.addSecret: "Counting the live secrets and inserting must be one atomic step with respect to
    // every other `addSecret` on the same account, including calls from other processes sharing the store".
    it('keeps the live-secret cap when four stores (four pools, as four processes) add to one account at once', async () => {
      const schema = schemas.name();
      const stores = [open(schema), open(schema), open(schema), open(schema)];
      await Promise.all(stores.map((store) => store.init()));
      const account = await stores[0]!.createAccount(newAccount());
      const secrets = Array.from({ length: 12 }, (_, i) => ({ id: `sec_race_${i}`, hash: `$2b$12$${'y'.repeat(53)}`, createdAt: new Date() }));
      const results = await Promise.all(
        secrets.map((secret, i) => stores[i % stores.length]!.addSecret(account.clientId, secret, { maxLiveCredentials: 4, maxLiveSecrets: 4 })),
      );
      expect(results.filter((r) => typeof r === 'object')).toHaveLength(3);
      expect(results.filter((r) => r === 'limit_reached')).toHaveLength(9);
      const rows = await schemas.query<{ n: string }>(`select count(*) as n from ${quoteIdentifier(schema)}.secrets where client_id = $1`, [account.clientId]);
      expect(Number(rows.rows[0]?.n)).toBe(4);
    });

    it('two processes initialising the same fresh schema at once both succeed', async () => {
      const schema = schemas.name();
      const clientIds = ['svc_worker_one', 'svc_worker_two', 'svc_worker_three'];
      const results = await runInitWorkers(schemas.url(schema), clientIds);
      for (const result of results) expect(result, result.stderr).toMatchObject({ code: 0, stdout: 'ok\n' });
      expect((await open(schema).listAccounts()).map((a) => a.clientId).sort()).toEqual([...clientIds].sort());
    });

    it('stores timestamps as BIGINT milliseconds and reads them back as Dates', async () => {
      const schema = schemas.name();
      const store = open(schema);
      const input = newAccount(new Date('2025-02-03T04:05:06.789Z'));
      await store.createAccount(input);
      const column = await schemas.query<{ data_type: string }>(
        `select data_type from information_schema.columns where table_schema = $1 and table_name = 'accounts' and column_name = 'created_at'`,
        [schema],
      );
      expect(column.rows[0]?.data_type).toBe('bigint');
      const row = await schemas.query<{ created_at: string }>(`select created_at from ${quoteIdentifier(schema)}.accounts`);
      expect(row.rows[0]?.created_at).toBe('1738555506789'); // pg returns BIGINT as a string...
      const found = await store.findAccount(input.clientId);
      expect(found?.createdAt).toEqual(input.createdAt); // ...which the store turns back into a Date
    });

    it("LISTEN delivers a change made through store A to store B's listener within 1 s, once", async () => {
      const schema = schemas.name();
      const a = open(schema);
      const b = open(schema, { pollIntervalMs: 60_000 }); // the poll cannot help: only NOTIFY can be this fast
      const seen: string[] = [];
      await b.watch((clientId) => seen.push(clientId));
      const account = await a.createAccount(newAccount());
      await vi.waitFor(() => expect(seen, 'NOTIFY seen by B').toContain(account.clientId), within(1000));
      await a.setAccountEnabled(account.clientId, false);
      await vi.waitFor(() => expect(seen, 'second NOTIFY seen by B').toHaveLength(2), within(1000));
      expect(seen).toEqual([account.clientId, account.clientId]);
    });

    it("polling alone delivers a change to store B's listener within 1 s, once", async () => {
      const schema = schemas.name();
      const a = open(schema);
      const b = open(schema, { listen: false });
      const seen = await accountAnnouncements(b);
      const account = await a.createAccount(newAccount());
      await vi.waitFor(() => expect(seen, 'poll seen by B').toContain(account.clientId), within(1000));
      const other = await a.createAccount(newAccount());
      await vi.waitFor(() => expect(seen, 'second poll seen by B').toContain(other.clientId), within(1000));
      expect(seen).toEqual([account.clientId, other.clientId]);
    });

    it('with LISTEN and polling both on, each change reaches the listener exactly once', async () => {
      const schema = schemas.name();
      const a = open(schema);
      const b = open(schema, { pollIntervalMs: 20 });
      const seen = await accountAnnouncements(b);
      const accounts = [];
      for (let i = 0; i < 5; i++) accounts.push(await a.createAccount(newAccount()));
      const last = accounts[4]?.clientId ?? '';
      await vi.waitFor(() => expect(seen, 'last change seen by B').toContain(last), within(1000));
      const witness = await a.createAccount(newAccount()); // a later change, so any repeat of the first five had time to arrive
      await vi.waitFor(() => expect(seen, 'witness seen by B').toContain(witness.clientId), within(1000));
      expect(seen).toEqual([...accounts.map((x) => x.clientId), witness.clientId]);
    });

    it("reports '*' when the LISTEN connection dies, then listens again", async () => {
      const schema = schemas.name();
      const errors: unknown[] = [];
      const a = open(schema);
      const b = open(schema, { pollIntervalMs: 60_000, onWatchError: (error) => errors.push(error) });
      const seen: string[] = [];
      await b.watch((clientId) => seen.push(clientId));
      const listenQuery = `LISTEN ${quoteIdentifier(notificationChannel(schema))}`;
      const killed = await schemas.query(`select pg_terminate_backend(pid) from pg_stat_activity where query = $1`, [listenQuery]);
      expect(killed.rowCount).toBe(1);
      await vi.waitFor(() => expect(seen, "'*' after the connection died").toContain(ALL_ACCOUNTS), within(1000));
      expect(errors.length).toBeGreaterThan(0);
      // Re-LISTEN happens after a short backoff; changes made from then on arrive by NOTIFY again.
      // Until then a change is missed (the poll is a minute away): make a new one, up to 3 s.
      await vi.waitFor(async () => {
        const account = await a.createAccount(newAccount());
        await vi.waitFor(() => expect(seen, 'NOTIFY after reconnect').toContain(account.clientId), within(500));
      }, within(3000));
    });

    it('quotes the schema name: a schema with capitals, spaces and quotes works', async () => {
      const schema = schemas.name('Esa "Test" ');
      const a = open(schema);
      const b = open(schema, { pollIntervalMs: 60_000 });
      const seen: string[] = [];
      await b.watch((clientId) => seen.push(clientId));
      const account = await a.createAccount(newAccount());
      expect(await b.findAccount(account.clientId)).toEqual(account);
      await vi.waitFor(() => expect(seen, 'NOTIFY on a quoted channel').toContain(account.clientId), within(1000));
      expect(await migrationCount(schema)).toBe(SCHEMA_VERSIONS.length);
    });

    it('close() leaves a pool it was given open', async () => {
      const schema = schemas.name();
      const pool = new Pool({ connectionString, max: 3 });
      try {
        const store = createPostgresAccountStore({ pool, schema });
        await store.createAccount(newAccount());
        await store.watch(() => undefined);
        await store.close();
        const result = await pool.query<{ one: number }>('select 1 as one');
        expect(result.rows).toEqual([{ one: 1 }]);
      } finally {
        await pool.end();
      }
    });
  });
}
