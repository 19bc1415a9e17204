/**
 * @module sqlite-open-errors.test
 * A SQLite database the process cannot open or write (a file another user created 0600, a read-only
 * folder or file system, a folder where the file should be) fails `init()` with a message that names
 * the file and what the process needs, not SQLite's bare "unable to open database file" or "attempt
 * to write a readonly database": the CLI and the example server print that message at start-up.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSqliteAccountStore, type SqlAccountStore } from '../../src/sql/index.js';
import { newAccount } from './helpers.js';

const root = mkdtempSync(join(tmpdir(), 'esa-sqlite-open-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('SQLite store on a file it cannot open', () => {
  const opened: SqlAccountStore[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });
  function open(filename: string): SqlAccountStore {
    const store = createSqliteAccountStore({ filename });
    opened.push(store);
    return store;
  }

  it("names the file and keeps SQLite's error as the cause when the path is a folder", async () => {
    const filename = join(root, 'a-folder.db');
    mkdirSync(filename);
    const error = await open(filename).init().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain(filename);
    expect((error as Error).message).toContain('unable to open database file');
    expect((error as Error).message).toContain('-wal and -shm');
    expect((error as Error & { code?: string }).code).toBe('SQLITE_CANTOPEN');
    expect((error as Error).cause).toMatchObject({ code: 'SQLITE_CANTOPEN' });
  });

  // Root writes anywhere: the folder's mode cannot stop it.
  it.skipIf(process.platform === 'win32' || process.getuid?.() === 0)(
    'says the folder must be writable when SQLite cannot create the -wal and -shm files beside the file',
    async () => {
      const folder = join(root, 'read-only-folder');
      mkdirSync(folder, { mode: 0o700 });
      const filename = join(folder, 'service-accounts.db');
      const first = createSqliteAccountStore({ filename });
      await first.createAccount(newAccount());
      await first.close(); // the last connection: SQLite removes the -wal and -shm files
      chmodSync(folder, 0o500);
      try {
        const error = await open(filename).init().then(
          () => undefined,
          (err: unknown) => err,
        );
        expect((error as Error).message).toContain(filename);
        expect((error as Error).message).toContain('-wal and -shm');
        expect((error as Error & { code?: string }).code).toMatch(/^SQLITE_READONLY/);
      } finally {
        chmodSync(folder, 0o700);
      }
    },
  );
});
