/**
 * `AccountStore.listAccounts({ clientAccountId })`: the stores of this package read only that client
 * account's accounts (so one tenant's many accounts do not slow another tenant's listing), and the
 * admin API keeps only them even over a store that ignores the filter, as one written before it
 * existed does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createServiceAccounts, MemoryAccountStore, type AccountStore } from '../../src/index.js';
import { createPostgresAccountStore, createSqliteAccountStore } from '../../src/sql/index.js';
import { IdFactory } from '../../src/testing/contract-fixtures.js';
import { selectAccountRows, type AccountRowsFilter } from '../../src/sql/account-rows.js';
import { migrateToLatest, type Database } from '../../src/sql/schema.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';
import { ForwardingStore } from '../helpers/forwarding-store.js';
import { TEST_HS256_KEY } from '../helpers/create-app.js';

const ids = new IdFactory();

/**
 * Creates two accounts of one client account, one of another and one without a client account; then
 * the filter must return exactly the first two, oldest first, and no filter all four. Closes the store.
 */
async function expectOnlyThatClientAccount(store: AccountStore & { close?: () => Promise<void> }): Promise<void> {
  try {
    const acmeId = ids.account().clientAccountId!;
    const acme = [];
    for (const overrides of [{ clientAccountId: acmeId }, {}, { clientAccountId: null }, { clientAccountId: acmeId }]) {
      const account = await store.createAccount(ids.account(overrides));
      if (account.clientAccountId === acmeId) acme.push(account.clientId);
    }
    expect((await store.listAccounts({ clientAccountId: acmeId })).map((account) => account.clientId)).toEqual(acme);
    expect(await store.listAccounts()).toHaveLength(4);
  } finally {
    await store.close?.();
  }
}

describe('listAccounts({ clientAccountId }) reads only that client account’s accounts', () => {
  it('MemoryAccountStore', () => expectOnlyThatClientAccount(new MemoryAccountStore()));

  it('the SQLite store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sa-list-filter-'));
    try {
      await expectOnlyThatClientAccount(createSqliteAccountStore({ filename: join(dir, 'a.db') }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the SQL store’s account reads use its indexes', () => {
  /** SQLite's query plan of the store's account query under `filter`, one step a line. */
  async function planOf(filter: AccountRowsFilter): Promise<string[]> {
    const sqlite = new BetterSqlite3(':memory:');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    try {
      await migrateToLatest(db, { dialect: 'sqlite', schema: 'public' });
      const { sql, parameters } = selectAccountRows(db, filter).compile();
      return (sqlite.prepare(`explain query plan ${sql}`).all(...(parameters as unknown[])) as { detail: string }[]).map((row) => row.detail);
    } finally {
      await db.destroy();
    }
  }

  it('one client account’s list reads its accounts through the index by client account, not by scanning every account', async () => {
    const plan = await planOf({ clientAccountId: 'acme' });
    expect(plan.some((step) => /^SEARCH a USING INDEX accounts_client_account_id_idx \(client_account_id=\?\)/.test(step)), plan.join('\n')).toBe(true);
    expect(plan.some((step) => /^SCAN a\b/.test(step)), plan.join('\n')).toBe(false);
  });

  it.each([{ clientAccountId: 'acme' }, { clientId: 'sa_x' }])('reading %o scans no credential table (each is searched by client ID)', async (filter) => {
    const plan = await planOf(filter);
    for (const table of ['secrets', 'client_keys', 'federated_credentials']) {
      expect(plan.some((step) => step.startsWith(`SEARCH ${table} USING INDEX`)), plan.join('\n')).toBe(true);
      expect(plan.some((step) => step.startsWith(`SCAN ${table}`)), plan.join('\n')).toBe(false);
    }
  });
});

withPostgres('PostgreSQL listAccounts by client account', (connectionString) => {
  const schemas = usePostgresSchemas(connectionString);
  it('the PostgreSQL store reads only that client account’s accounts', () =>
    expectOnlyThatClientAccount(createPostgresAccountStore({ connectionString, schema: schemas.name() })));
});

describe('admin.listAccounts({ clientAccountId })', () => {
  it('returns only that client account’s accounts, oldest first, even from a store that ignores the filter', async () => {
    // A store written before the filter existed: it lists every account whatever it is asked.
    const ignoring = new ForwardingStore(new MemoryAccountStore());
    const sa = createServiceAccounts({ store: ignoring, issuer: 'https://api.example.com', signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY }], secretHashRounds: 4 });
    const first = await sa.admin.createAccount({ name: 'acme sync', clientAccountId: 'acme' });
    await sa.admin.createAccount({ name: 'globex sync', clientAccountId: 'globex' });
    const second = await sa.admin.createAccount({ name: 'acme export', clientAccountId: 'acme' });
    expect((await sa.admin.listAccounts({ clientAccountId: 'acme' })).map((a) => a.clientId)).toEqual([first.clientId, second.clientId]);
    expect(await sa.admin.listAccounts()).toHaveLength(3);
  });
});
