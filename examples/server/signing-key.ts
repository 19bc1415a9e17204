/**
 * The example server's signing key (TOKEN_SIGNING_KEY in examples/README.md):
 * - a text of at least 32 characters: its UTF-8 bytes are an HS256 key;
 * - a PEM private key: ES256 for EC P-256 (RS256 for RSA);
 * - absent, SQLite store: a random key generated once and kept beside the database file, readable by
 *   its owner only, so tokens survive a restart and a second instance on the same file shares it;
 * - absent, PostgreSQL store: refuse to start. Instances on other hosts could not share a generated
 *   key, and each would refuse the others' tokens.
 */
import { createPrivateKey, randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { SigningKeyOptions } from 'express-service-accounts';
import type { AccountStoreLocation } from 'express-service-accounts/sql';
import { StartupError } from './settings.js';

/** The `.gitignore` of a data folder the server creates: the account hashes and the signing key are never committed. */
const GITIGNORE = '# Created by the example server: secret hashes and the signing key. Never commit them.\n*\n';

const MIN_TEXT_KEY = 32;

/** The key and where it came from (for the start-up banner). */
export interface ResolvedSigningKey {
  readonly key: SigningKeyOptions;
  readonly origin: string;
}

function fromEnvironment(value: string): ResolvedSigningKey {
  // Environments often hold a PEM on one line with literal "\n"s.
  const text = value.includes('-----BEGIN') ? value.replace(/\\n/g, '\n') : value;
  if (text.includes('-----BEGIN')) {
    let type: string | undefined;
    try {
      type = createPrivateKey(text).asymmetricKeyType;
    } catch {
      throw new StartupError('TOKEN_SIGNING_KEY looks like PEM but is not a readable private key');
    }
    if (type !== 'ec' && type !== 'rsa') throw new StartupError('TOKEN_SIGNING_KEY must be an EC P-256 (ES256) or RSA (RS256) private key');
    return { key: { alg: type === 'ec' ? 'ES256' : 'RS256', key: text }, origin: `TOKEN_SIGNING_KEY (${type === 'ec' ? 'ES256' : 'RS256'})` };
  }
  if (text.length < MIN_TEXT_KEY) {
    throw new StartupError(
      `TOKEN_SIGNING_KEY must be a text of at least ${MIN_TEXT_KEY} characters (HS256) or a PEM-encoded EC P-256 private key (ES256)`,
    );
  }
  return { key: { alg: 'HS256', key: text }, origin: 'TOKEN_SIGNING_KEY (HS256)' };
}

/** Where the generated key of a SQLite database lives: beside it, named after it. */
export function signingKeyFile(databaseFile: string): string {
  return `${resolve(databaseFile)}.signing-key`;
}

function readKeyFile(file: string): string {
  const stats = statSync(file);
  if (!stats.isFile()) throw new StartupError(`${file} is not a file; delete it to generate a new signing key`);
  const mode = stats.mode & 0o777;
  if ((mode & 0o077) !== 0) {
    console.warn(`warning: ${file} is readable by others (mode ${mode.toString(8)}); restricting it to its owner`);
    chmodSync(file, 0o600);
  }
  const key = readFileSync(file, 'utf8').trim();
  if (key.length < MIN_TEXT_KEY) throw new StartupError(`${file} does not hold a signing key; delete it to generate a new one`);
  return key;
}

/**
 * Reads the key file, or creates it once. Creation is atomic: the key is written to a private
 * temporary file which is then hard-linked to the final name, and linking fails if another instance
 * got there first, in which case its key is used. No instance ever reads a half-written key.
 */
function loadOrCreateKeyFile(file: string): { key: string; created: boolean } {
  try {
    return { key: readKeyFile(file), created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  // Like the SQLite store: the database goes here too. A folder made here holds secret hashes and the
  // key: keep it out of git, whatever the project's own .gitignore says.
  if (makeFolders(dirname(file)) !== undefined) {
    writeFileSync(join(dirname(file), '.gitignore'), GITIGNORE, { flag: 'wx' });
  }
  const key = randomBytes(32).toString('base64url'); // 256 random bits as 43 characters
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temporary, `${key}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temporary, file);
    return { key, created: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return { key: readKeyFile(file), created: false };
    throw error;
  } finally {
    unlinkSync(temporary);
  }
}

/**
 * `mkdir -p` with mode 0700, one folder at a time; returns the first folder it created, as
 * `mkdirSync(..., { recursive: true })` does. Not that call: under /proc (ENOENT for a folder that
 * cannot exist) Node's recursive mkdir retries forever; here a child's ENOENT once its parent exists is final.
 */
function makeFolders(folder: string): string | undefined {
  const missing: string[] = [];
  for (let current = folder; ; current = dirname(current)) {
    try {
      statSync(current);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(current) === current) throw error;
      missing.unshift(current);
    }
  }
  let first: string | undefined;
  for (const current of missing) {
    try {
      mkdirSync(current, { mode: 0o700 });
      first ??= current;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return first;
}

/** Resolves TOKEN_SIGNING_KEY for a store; throws {@link StartupError} when it cannot. */
export function resolveSigningKey(value: string | undefined, store: AccountStoreLocation): ResolvedSigningKey {
  if (value !== undefined) return fromEnvironment(value);
  if (store.kind === 'postgres') {
    throw new StartupError(
      'TOKEN_SIGNING_KEY is required with a PostgreSQL store, so that every instance signs and verifies with the same key: ' +
        'set it to a random text of at least 32 characters (openssl rand -base64 32) or a PEM EC P-256 private key',
    );
  }
  if (store.filename === ':memory:') {
    return { key: { alg: 'HS256', key: randomBytes(32) }, origin: 'generated for this process (in-memory store)' };
  }
  const file = signingKeyFile(store.filename);
  const { key, created } = loadOrCreateKeyFile(file);
  return { key: { alg: 'HS256', key }, origin: `${created ? 'generated into' : 'read from'} ${file} (HS256)` };
}
