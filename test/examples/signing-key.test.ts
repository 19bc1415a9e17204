/**
 * The example server's generated signing key ("when absent with a SQLite store, one is generated once
 * and kept, readable by its owner only, in the folder of the SQLite file"): under the common umask 022,
 * the key file is 0600 and a folder created for it 0700, like the SQLite store's own files.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveSigningKey, signingKeyFile } from '../../examples/server/signing-key.js';

const root = mkdtempSync(join(tmpdir(), 'esa-example-key-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const modeOf = (path: string): string => (statSync(path).mode & 0o777).toString(8);

describe.skipIf(process.platform === 'win32')('example server signing key file (umask 022)', () => {
  let previousUmask: number;
  beforeEach(() => {
    previousUmask = process.umask(0o022);
  });
  afterEach(() => {
    process.umask(previousUmask);
  });

  it('generates the key 0600 in a folder it creates 0700, and reads the same key back', () => {
    const filename = join(root, randomUUID(), 'service-accounts.db');
    const first = resolveSigningKey(undefined, { kind: 'sqlite', filename });
    expect(first.origin).toMatch(/^generated into/);
    expect(modeOf(signingKeyFile(filename))).toBe('600');
    expect(modeOf(dirname(filename))).toBe('700');
    const again = resolveSigningKey(undefined, { kind: 'sqlite', filename });
    expect(again.origin).toMatch(/^read from/);
    expect(again.key).toEqual(first.key);
  });

  // The folder holds the bcrypt hashes and the signing key: the server keeps it out of git itself.
  it('puts a .gitignore that ignores everything in a data folder it creates, and none in a folder it did not create', () => {
    const filename = join(root, randomUUID(), 'data', 'service-accounts.db');
    resolveSigningKey(undefined, { kind: 'sqlite', filename });
    expect(readFileSync(join(dirname(filename), '.gitignore'), 'utf8')).toMatch(/^\*$/m);
    const existing = mkdtempSync(join(root, 'existing-'));
    resolveSigningKey(undefined, { kind: 'sqlite', filename: join(existing, 'service-accounts.db') });
    expect(existsSync(join(existing, '.gitignore'))).toBe(false);
  });
});
