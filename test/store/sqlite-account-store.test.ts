/**
 * @module sqlite-account-store.test
 * The SQLite store: the contract suite, plus migrations, multi-process start-up and cross-store watch.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSqliteAccountStore, type SqlAccountStore } from '../../src/sql/index.js';
import { ALL_ACCOUNTS } from '../../src/sql/change-feed.js';
import { SCHEMA_VERSIONS } from '../../src/sql/schema.js';
import { describeAccountStore } from '../../src/testing/index.js';
import { newAccount, runInitWorkers, within } from './helpers.js';
import { accountAnnouncements } from '../helpers/account-announcements.js';

const root = mkdtempSync(join(tmpdir(), 'esa-sqlite-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A path in a folder that does not exist yet: the store must create it. */
function newDatabasePath(): string {
  return join(root, randomUUID(), 'nested', 'service-accounts.db');
}

describeAccountStore(
  'SqlAccountStore (SQLite)',
  async () => ({ store: createSqliteAccountStore({ filename: newDatabasePath() }), cleanup: async () => {} }),
  { describe, it, expect, beforeEach, afterEach },
);

describe('SQLite account store', () => {
  const opened: SqlAccountStore[] = [];
  function open(filename: string, pollIntervalMs?: number): SqlAccountStore {
    const store = createSqliteAccountStore({ filename, ...(pollIntervalMs !== undefined && { pollIntervalMs }) });
    opened.push(store);
    return store;
  }
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });

  function inspect<T>(filename: string, read: (db: BetterSqlite3.Database) => T): T {
    const db = new BetterSqlite3(filename, { readonly: true });
    try {
      return read(db);
    } finally {
      db.close();
    }
  }

  it('creates the missing folder, uses WAL mode and records the schema version', async () => {
    const filename = newDatabasePath();
    await open(filename).init();
    expect(existsSync(filename)).toBe(true);
    inspect(filename, (db) => {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      const versions = db.prepare('select version from account_store_migrations order by version').all();
      expect(versions).toEqual(SCHEMA_VERSIONS.map((version) => ({ version })));
    });
  });

  it('runs migrations once: init again, and init of a second store on the same file, change nothing', async () => {
    const filename = newDatabasePath();
    const first = open(filename);
    await first.init();
    const account = await first.createAccount(newAccount());
    await first.init();
    const second = open(filename);
    await second.init();
    await second.init();
    expect(await second.findAccount(account.clientId)).toEqual(account);
    inspect(filename, (db) => {
      expect(db.prepare('select count(*) as n from account_store_migrations').get()).toEqual({ n: SCHEMA_VERSIONS.length });
    });
  });

  // AccountStore.revokeToken on a database made before the deny-list existed (schema version 2, accounts
  // in it): the first use of the new version adds the table and keeps every account.
  it('a database at schema version 2 that holds accounts gains the token deny-list on first use', async () => {
    const filename = newDatabasePath();
    const old = open(filename);
    const account = await old.createAccount(newAccount());
    await old.close();
    const db = new BetterSqlite3(filename);
    db.exec('alter table secrets drop column expires_at; alter table client_keys drop column expires_at; alter table secrets drop column verified_digest; alter table accounts drop column resources; alter table accounts drop column access_token_lifetime; alter table accounts drop column dpop_bound_access_tokens; drop table federated_credentials; drop table revoked_tokens; drop index accounts_client_account_id_idx; delete from account_store_migrations where version >= 3');
    db.close();
    const store = open(filename);
    const record = { tokenId: randomUUID(), clientId: account.clientId, revokedAt: new Date(), expiresAt: new Date(Date.now() + 60_000) };
    expect(await store.revokeToken(record)).toEqual(record);
    expect(await store.findAccount(account.clientId)).toEqual(account);
    inspect(filename, (db) => {
      expect(db.prepare('select count(*) as n from account_store_migrations').get()).toEqual({ n: SCHEMA_VERSIONS.length });
    });
  });

  it('stores timestamps as integer milliseconds and scopes as a JSON array', async () => {
    const filename = newDatabasePath();
    const store = open(filename);
    const input = { ...newAccount(new Date('2025-02-03T04:05:06.789Z')), scopes: ['b:write', 'a:read'] };
    await store.createAccount(input);
    inspect(filename, (db) => {
      const row = db.prepare('select scopes, enabled, created_at from accounts where client_id = ?').get(input.clientId);
      expect(row).toEqual({ scopes: '["b:write","a:read"]', enabled: 1, created_at: 1738555506789 });
    });
  });

  it('two processes initialising the same new database at once both succeed', async () => {
    const filename = newDatabasePath();
    const clientIds = ['svc_worker_one', 'svc_worker_two', 'svc_worker_three'];
    const results = await runInitWorkers(`sqlite:${filename}`, clientIds);
    for (const result of results) expect(result, result.stderr).toMatchObject({ code: 0, stdout: 'ok\n' });
    const listed = await open(filename).listAccounts();
    expect(listed.map((a) => a.clientId).sort()).toEqual([...clientIds].sort());
    inspect(filename, (db) => {
      expect(db.prepare('select count(*) as n from account_store_migrations').get()).toEqual({ n: SCHEMA_VERSIONS.length });
    });
  });

  it("a change made through store A reaches store B's watch listener within 1 s", async () => {
    const filename = newDatabasePath();
    const a = open(filename);
    const b = open(filename);
    const seen = await accountAnnouncements(b);
    const account = await a.createAccount(newAccount());
    await vi.waitFor(() => expect(seen, 'createAccount seen by B').toContain(account.clientId), within(1000));
    await a.revokeSecret(account.clientId, account.secrets[0]?.id ?? '', new Date());
    await vi.waitFor(() => expect(seen.filter((id) => id === account.clientId), 'revokeSecret seen by B').toHaveLength(2), within(1000));
    await a.recordSecretUse(account.clientId, account.secrets[0]?.id ?? '', new Date());
    const c = await a.createAccount(newAccount());
    await vi.waitFor(() => expect(seen, 'second account seen by B').toContain(c.clientId), within(1000));
    // recordSecretUse is not a change; each change is delivered exactly once.
    expect(seen).toEqual([account.clientId, account.clientId, c.clientId]);
  });

  it('close() stops watching', async () => {
    const filename = newDatabasePath();
    const writer = open(filename);
    const closing = open(filename, 20);
    const witness = open(filename, 20);
    const closed: string[] = [];
    const witnessed: string[] = [];
    await closing.watch((clientId) => closed.push(clientId));
    await witness.watch((clientId) => witnessed.push(clientId));
    await closing.close();
    for (let i = 0; i < 3; i++) {
      const account = await writer.createAccount(newAccount());
      await vi.waitFor(() => expect(witnessed, 'change seen by the witness').toContain(account.clientId), within(1000));
    }
    expect(closed).toEqual([]);
  });

  it("reports '*' when the feed cannot be read, keeps polling, and delivers changes once it recovers", async () => {
    const filename = newDatabasePath();
    const errors: unknown[] = [];
    const watcher = createSqliteAccountStore({ filename, pollIntervalMs: 20, onWatchError: (e) => errors.push(e) });
    opened.push(watcher);
    const writer = open(filename);
    const seen: string[] = [];
    await watcher.watch((clientId) => seen.push(clientId));
    const admin = new BetterSqlite3(filename);
    try {
      admin.exec('alter table account_changes rename to account_changes_away');
      await vi.waitFor(() => expect(seen, "'*' after the feed broke").toContain(ALL_ACCOUNTS), within(1000));
      await vi.waitFor(() => expect(errors.length, 'polling retried').toBeGreaterThanOrEqual(3), within(1000));
      expect(seen.filter((id) => id === ALL_ACCOUNTS)).toEqual([ALL_ACCOUNTS]); // once per outage
      admin.exec('alter table account_changes_away rename to account_changes');
    } finally {
      admin.close();
    }
    const account = await writer.createAccount(newAccount());
    await vi.waitFor(() => expect(seen, 'change after recovery').toContain(account.clientId), within(1000));
  });
});
