/**
 * @module sqlite-file-modes.test
 * The SQLite store keeps its files to their owner (docs/stores.md, "File permissions"): the database
 * holds bcrypt hashes of every secret. Under the common umask 022, folders it creates are 0700 and the
 * database file it creates is 0600; SQLite gives the `-wal` and `-shm` files the database file's mode.
 * Folders and files that already exist keep the mode their owner gave them.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteAccountStore, type SqlAccountStore } from '../../src/sql/index.js';
import { newAccount } from './helpers.js';

const root = mkdtempSync(join(tmpdir(), 'esa-sqlite-modes-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const modeOf = (path: string): string => (statSync(path).mode & 0o777).toString(8);

describe.skipIf(process.platform === 'win32')('SQLite store file permissions (umask 022)', () => {
  let previousUmask: number;
  const opened: SqlAccountStore[] = [];
  beforeEach(() => {
    // The usual default umask: without our modes, files would be 0644 and folders 0755.
    previousUmask = process.umask(0o022);
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
    process.umask(previousUmask);
  });

  /** Opens the store, writes to it (so the -wal and -shm files exist) and returns the database path. */
  async function openAndWrite(filename: string): Promise<string> {
    const store = createSqliteAccountStore({ filename });
    opened.push(store);
    await store.init();
    await store.createAccount(newAccount());
    return filename;
  }

  it('creates missing folders 0700 and the database, -wal and -shm files 0600', async () => {
    const top = join(root, randomUUID());
    const file = await openAndWrite(join(top, 'nested', 'service-accounts.db'));
    expect(modeOf(top)).toBe('700');
    expect(modeOf(dirname(file))).toBe('700');
    expect(modeOf(file)).toBe('600');
    expect(modeOf(`${file}-wal`)).toBe('600');
    expect(modeOf(`${file}-shm`)).toBe('600');
  });

  it('leaves a folder that already exists as it is, and still creates the database 0600', async () => {
    const folder = join(root, randomUUID());
    mkdirSync(folder, { mode: 0o755 });
    const file = await openAndWrite(join(folder, 'service-accounts.db'));
    expect(modeOf(folder)).toBe('755');
    expect([modeOf(file), modeOf(`${file}-wal`), modeOf(`${file}-shm`)]).toEqual(['600', '600', '600']);
  });

  it('leaves a database file that already exists as it is: -wal and -shm follow its mode', async () => {
    const file = join(root, `${randomUUID()}.db`);
    closeSync(openSync(file, 'wx', 0o640)); // an empty file is an empty SQLite database
    chmodSync(file, 0o640);
    await openAndWrite(file);
    expect([modeOf(file), modeOf(`${file}-wal`), modeOf(`${file}-shm`)]).toEqual(['640', '640', '640']);
  });
});
