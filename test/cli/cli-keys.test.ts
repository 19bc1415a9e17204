/**
 * The `service-accounts key` commands, run as a child process (docs/cli.md): `key add CLIENT_ID
 * --public-key FILE|-` prints with `--json` exactly `{"id", "thumbprint", "createdAt"}`, `key revoke
 * CLIENT_ID KEY_ID` prints `{"clientId", "keyId", "revokedAt"}`, `list` shows each account's keys as
 * `"keys": [{"id", "thumbprint", "createdAt", "lastUsedAt", "revokedAt"}]` beside its secrets; exit
 * codes 0, 1 (failure, one line on stderr) and 2 (usage error), as for the other commands.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { runCli, runCliJson, type CliRun } from '../helpers/run-cli.js';
import { withPostgres } from '../helpers/with-postgres.js';

interface ListedKeys {
  clientId: string;
  secrets: unknown[];
  keys: { id: string; thumbprint: string; createdAt: string; lastUsedAt: string | null; revokedAt: string | null }[];
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const KEY_ID = /^esak_[0-9A-Za-z]{16}$/;
const STACK_LINE = /^\s+at /m;

function expectExit(run: CliRun, code: 1 | 2, message: RegExp): void {
  expect(run.code, run.stderr).toBe(code);
  expect(run.stdout).toBe('');
  expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(message);
  expect(run.stderr).not.toMatch(STACK_LINE);
}

const newPair = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const thumbprintOf = async (pair: ReturnType<typeof newPair>) => calculateJwkThumbprint(await exportJWK(pair.publicKey), 'sha256');

let dir: string;
let store: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sa-cli-keys-'));
  store = `sqlite:${join(dir, 'cli.db')}`;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function newAccount(storeUrl: string): Promise<string> {
  return (await runCliJson<{ clientId: string }>(['create', '--name', 'ci-deployer', '--store', storeUrl])).clientId;
}

describe('service-accounts key (SQLite)', { timeout: 60_000 }, () => {
  // key add CLIENT_ID --public-key FILE → {"id", "thumbprint", "createdAt"}; list → "keys": [{...}]
  it('key add registers a PEM file and prints exactly {id, thumbprint, createdAt}; list shows the key beside the secret', async () => {
    const clientId = await newAccount(store);
    const pair = newPair();
    const file = writeFile('public.pem', pair.publicKey.export({ format: 'pem', type: 'spki' }).toString());
    const run = await runCli(['key', 'add', clientId, '--public-key', file, '--store', store, '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const added = JSON.parse(run.stdout) as Record<string, string>;
    expect(Object.keys(added)).toEqual(['id', 'thumbprint', 'createdAt', 'expiresAt']);
    expect(added).toEqual({ id: expect.stringMatching(KEY_ID), thumbprint: await thumbprintOf(pair), createdAt: expect.stringMatching(ISO), expiresAt: null });
    const listed = (await runCliJson<ListedKeys[]>(['list', '--store', store])).find((a) => a.clientId === clientId);
    expect(listed?.secrets).toHaveLength(1);
    expect(listed?.keys).toEqual([{ id: added.id, thumbprint: added.thumbprint, createdAt: added.createdAt, lastUsedAt: null, revokedAt: null, expiresAt: null }]);
    expect(Object.keys(listed!.keys[0]!)).toEqual(['id', 'thumbprint', 'createdAt', 'lastUsedAt', 'revokedAt', 'expiresAt']);
  });

  // "--public-key -" reads standard input.
  it('key add --public-key - reads the key (here a JWK) from standard input', async () => {
    const clientId = await newAccount(store);
    const pair = newPair();
    const run = await runCli(['key', 'add', clientId, '--public-key', '-', '--json', '--store', store], {
      input: JSON.stringify(await exportJWK(pair.publicKey)),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ id: expect.stringMatching(KEY_ID), thumbprint: await thumbprintOf(pair), createdAt: expect.stringMatching(ISO), expiresAt: null });
  });

  // key revoke CLIENT_ID KEY_ID → {"clientId", "keyId", "revokedAt"}
  it('key revoke prints exactly {clientId, keyId, revokedAt}; list shows revokedAt', async () => {
    const clientId = await newAccount(store);
    const pem = newPair().publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const added = await runCliJson<{ id: string }>(['key', 'add', clientId, '--public-key', '-', '--store', store], { input: pem });
    const run = await runCli(['--store', store, 'key', 'revoke', clientId, added.id, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const revoked = JSON.parse(run.stdout) as Record<string, string>;
    expect(Object.keys(revoked)).toEqual(['clientId', 'keyId', 'revokedAt']);
    expect(revoked).toEqual({ clientId, keyId: added.id, revokedAt: expect.stringMatching(ISO) });
    const listed = (await runCliJson<ListedKeys[]>(['list', '--store', store])).find((a) => a.clientId === clientId);
    expect(listed?.keys[0]?.revokedAt).toBe(revoked.revokedAt);
  });

  it('prints human-readable text without --json', async () => {
    const clientId = await newAccount(store);
    const pair = newPair();
    const file = writeFile('human.pem', pair.publicKey.export({ format: 'pem', type: 'spki' }).toString());
    const added = await runCli(['key', 'add', clientId, '--public-key', file, '--store', store]);
    expect(added.code).toBe(0);
    expect(() => JSON.parse(added.stdout)).toThrow();
    const keyId = /key ID:\s+(esak_\w+)/.exec(added.stdout)?.[1];
    expect(keyId).toMatch(KEY_ID);
    expect(added.stdout).toContain(await thumbprintOf(pair));
    const listed = await runCli(['list', '--store', store]);
    expect(listed.stdout).toMatch(new RegExp(`key ${keyId}  live  created \\S+  last used never  thumbprint ${await thumbprintOf(pair)}`));
    const revoked = await runCli(['key', 'revoke', clientId, keyId!, '--store', store]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(new RegExp(`^Revoked key ${keyId} of ${clientId} at `));
  });

  // A private key is refused (invalid input: exit 2), never stored, never printed.
  it('refuses a private key with exit 2 and a one-line message that repeats none of it; nothing is stored', async () => {
    const clientId = await newAccount(store);
    const privatePem = newPair().privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const file = writeFile('private.pem', privatePem);
    for (const run of [
      await runCli(['key', 'add', clientId, '--public-key', file, '--store', store, '--json']),
      await runCli(['key', 'add', clientId, '--public-key', '-', '--store', store], { input: privatePem }),
    ]) {
      expectExit(run, 2, /private key.*public half/);
      // It names the option typed, as every other refused value does, not the admin API's field.
      expect(run.stderr).toMatch(/^service-accounts: --public-key: that is a private key/);
      for (const line of privatePem.split('\n').filter((l) => l.length > 16)) expect(run.stderr).not.toContain(line.slice(0, 16));
    }
    const listed = (await runCliJson<ListedKeys[]>(['list', '--store', store])).find((a) => a.clientId === clientId);
    expect(listed?.keys).toEqual([]);
  });

  it('exits 2 on a missing or unreadable --public-key and on missing arguments', async () => {
    const clientId = await newAccount(store);
    expectExit(await runCli(['key', 'add', clientId, '--public-key', join(dir, 'absent.pem'), '--store', store]), 2, /--public-key: cannot read .*absent\.pem: no such file/);
    expectExit(await runCli(['key', 'add', clientId, '--public-key', dir, '--store', store]), 2, /--public-key: cannot read .*: it is a folder/);
    expectExit(await runCli(['key', 'add', clientId, '--public-key', writeFile('junk.txt', 'hello'), '--store', store]), 2, /^service-accounts: --public-key: expected a public key/);
    const usage = [['key'], ['key', 'add', clientId], ['key', 'add', '--public-key', 'x.pem'], ['key', 'revoke', clientId], ['key', 'bogus']];
    for (const args of usage) {
      const run = await runCli([...args, '--store', store]);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout).toBe('');
    }
  });

  it('exits 1 for a duplicate live key, a full account, an unknown key or account', async () => {
    const clientId = await newAccount(store);
    const pem = newPair().publicKey.export({ format: 'pem', type: 'spki' }).toString();
    await runCliJson(['key', 'add', clientId, '--public-key', '-', '--store', store], { input: pem });
    expectExit(await runCli(['key', 'add', clientId, '--public-key', '-', '--store', store], { input: pem }), 1, /already has this public key/);
    // One secret and one key so far; the default cap is 5 live credentials.
    for (let i = 0; i < 3; i++) {
      const other = newPair().publicKey.export({ format: 'pem', type: 'spki' }).toString();
      await runCliJson(['key', 'add', clientId, '--public-key', '-', '--store', store], { input: other });
    }
    const sixth = newPair().publicKey.export({ format: 'pem', type: 'spki' }).toString();
    expectExit(await runCli(['key', 'add', clientId, '--public-key', '-', '--store', store], { input: sixth }), 1, /1 live secrets and 4 live keys/);
    expectExit(await runCli(['key', 'revoke', clientId, 'esak_0000000000000000', '--store', store]), 1, /no key/);
    expectExit(await runCli(['key', 'add', 'esa_unknown', '--public-key', '-', '--store', store], { input: sixth }), 1, /no service account/i);
    expectExit(await runCli(['key', 'revoke', 'esa_unknown', 'esak_0000000000000000', '--store', store]), 1, /no service account/i);
  });

  it('--help works on key, key add and key revoke', async () => {
    for (const words of [['key'], ['key', 'add'], ['key', 'revoke']]) {
      const run = await runCli([...words, '--help']);
      expect(run.code, words.join(' ')).toBe(0);
      expect(run.stdout).toContain(`Usage: service-accounts ${words.join(' ')}`);
    }
  });
});

withPostgres('service-accounts key on PostgreSQL', (postgresUrl) => {
  describe('service-accounts key on PostgreSQL (POSTGRES_URL)', { timeout: 60_000 }, () => {
    const schemas = usePostgresSchemas(postgresUrl);
    const pgStore = (): string => schemas.url(schemas.name('sa_cli_keys_'));

    it('key add, list and key revoke round-trip', async () => {
      const url = pgStore();
      const clientId = await newAccount(url);
      const pair = newPair();
      const input = pair.publicKey.export({ format: 'pem', type: 'spki' }).toString();
      const added = await runCliJson<{ id: string; thumbprint: string }>(['key', 'add', clientId, '--public-key', '-', '--store', url], { input });
      expect(added.thumbprint).toBe(await thumbprintOf(pair));
      const revoked = await runCliJson<{ revokedAt: string }>(['key', 'revoke', clientId, added.id, '--store', url]);
      const [listed] = await runCliJson<ListedKeys[]>(['list', '--store', url]);
      expect(listed?.keys).toEqual([{ id: added.id, thumbprint: added.thumbprint, createdAt: expect.stringMatching(ISO), lastUsedAt: null, revokedAt: revoked.revokedAt, expiresAt: null }]);
    });
  });
});
