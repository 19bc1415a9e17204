/**
 * The example server's generated signing key ("when absent with a SQLite store, one is generated once
 * and kept, readable by its owner only, in the folder of the SQLite file"): under the common umask 022,
 * the key file is 0600 and a folder created for it 0700, like the SQLite store's own files.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StartupError } from '../../examples/server/settings.js';
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

describe.skipIf(process.platform === 'win32')('example server signing key file that cannot be used', () => {
  // A folder (or anything but a file) where the key should be: one clear line naming it, and its mode left alone.
  it('refuses something other than a file at the key path, naming it, without changing its mode', () => {
    const filename = join(mkdtempSync(join(root, 'not-a-file-')), 'service-accounts.db');
    mkdirSync(signingKeyFile(filename), { mode: 0o755 });
    chmodSync(signingKeyFile(filename), 0o755);
    expect(() => resolveSigningKey(undefined, { kind: 'sqlite', filename })).toThrow(
      new StartupError(`${signingKeyFile(filename)} is not a file; delete it to generate a new signing key`),
    );
    expect(modeOf(signingKeyFile(filename))).toBe('755');
  });

  it('refuses an empty key file, naming it', () => {
    const filename = join(mkdtempSync(join(root, 'empty-')), 'service-accounts.db');
    writeFileSync(signingKeyFile(filename), '\n', { mode: 0o600 });
    expect(() => resolveSigningKey(undefined, { kind: 'sqlite', filename })).toThrow(StartupError);
    expect(() => resolveSigningKey(undefined, { kind: 'sqlite', filename })).toThrow(`${signingKeyFile(filename)} does not hold a signing key`);
  });
});
