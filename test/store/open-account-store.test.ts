/**
 * @module open-account-store.test
 * Store URLs: parsing, errors that never echo credentials, and opening a working store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresAccountStore, openAccountStore, parseAccountStoreUrl } from '../../src/sql/index.js';
import { notificationChannel } from '../../src/sql/postgres-account-store.js';
import { KyselyAccountStore } from '../../src/sql/sql-account-store.js';
import { newAccount } from './helpers.js';

describe('parseAccountStoreUrl', () => {
  it.each([
    ['sqlite:./.data/service-accounts.db', './.data/service-accounts.db'],
    ['sqlite:.data/accounts.db', '.data/accounts.db'],
    ['sqlite:/var/lib/app/accounts.db', '/var/lib/app/accounts.db'],
    ['sqlite:///var/lib/app/accounts.db', '/var/lib/app/accounts.db'],
    ['sqlite://./accounts.db', './accounts.db'],
  ])('%s is the SQLite file %s', (url, filename) => {
    expect(parseAccountStoreUrl(url)).toEqual({ kind: 'sqlite', filename });
  });

  it.each(['postgres://app:s3cret@db.internal:5432/prod', 'postgresql://app@db.internal/prod?sslmode=require'])(
    '%s is passed to pg as is',
    (url) => {
      expect(parseAccountStoreUrl(url)).toEqual({ kind: 'postgres', connectionString: url });
    },
  );

  it('takes the schema query parameter out of a postgres URL', () => {
    expect(parseAccountStoreUrl('postgres://app@db.internal:5432/prod?sslmode=require&schema=service_accounts')).toEqual({
      kind: 'postgres',
      connectionString: 'postgres://app@db.internal:5432/prod?sslmode=require',
      schema: 'service_accounts',
    });
  });

  it("refuses a schema of PostgreSQL's own (information_schema, pg_*), whose tables are not the store's to write", () => {
    for (const schema of ['information_schema', 'pg_catalog', 'pg_temp']) {
      expect(() => parseAccountStoreUrl(`postgres://app@db/prod?schema=${schema}`)).toThrow(`Store URL schema parameter "${schema}" is one of PostgreSQL's own schemas`);
      expect(() => createPostgresAccountStore({ connectionString: 'postgres://app@db/prod', schema })).toThrow(/is one of PostgreSQL's own schemas/);
    }
    expect(parseAccountStoreUrl('postgres://app@db/prod?schema=pgx_accounts')).toMatchObject({ schema: 'pgx_accounts' });
  });

  it('takes the schema out of a URL whose host is a socket folder given as ?host=, leaving the rest as written', () => {
    expect(parseAccountStoreUrl('postgres://app:s%20cret@/prod?host=/var/run/postgresql&schema=sa&options=-c%20statement_timeout%3D5000')).toEqual({
      kind: 'postgres',
      connectionString: 'postgres://app:s%20cret@/prod?host=/var/run/postgresql&options=-c%20statement_timeout%3D5000',
      schema: 'sa',
    });
  });

  it.each(['mysql://root:hunter2@db/app', 'accounts.db', '', 'sqlite:', 'postgres://db/app?schema=', 'postgres://root:hunter2@db:99999/app', 'postgres://root:hunter2@[db/app'])(
    'rejects %j with a TypeError that never echoes credentials',
    (url) => {
      expect(() => parseAccountStoreUrl(url)).toThrow(TypeError);
      try {
        parseAccountStoreUrl(url);
      } catch (error) {
        expect(String(error)).not.toContain('hunter2');
      }
    },
  );
});

describe('openAccountStore', () => {
  const root = mkdtempSync(join(tmpdir(), 'esa-open-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('opens a working SQLite store from a sqlite: URL', async () => {
    const store = openAccountStore(`sqlite:${join(root, 'deep', 'accounts.db')}`);
    try {
      expect(store).toBeInstanceOf(KyselyAccountStore);
      const account = await store.createAccount(newAccount());
      expect(await store.findAccount(account.clientId)).toEqual(account);
    } finally {
      await store.close();
    }
  });

  it('creates a PostgreSQL store without connecting', async () => {
    const store = openAccountStore('postgres://nobody@127.0.0.1:1/nothing?schema=sa');
    expect(store).toBeInstanceOf(KyselyAccountStore);
    await store.close();
  });

  it('throws a TypeError for an unsupported URL', () => {
    expect(() => openAccountStore('redis://localhost:6379')).toThrow(/Unsupported store URL scheme "redis:"/);
  });
});

describe('notificationChannel', () => {
  it('is <schema>_account_changes, hashed when longer than 63 bytes', () => {
    expect(notificationChannel('public')).toBe('public_account_changes');
    const long = notificationChannel('s'.repeat(63));
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(63);
    expect(long).not.toBe(notificationChannel('t'.repeat(63)));
  });
});
