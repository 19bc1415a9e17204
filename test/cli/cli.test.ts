/**
 * The `service-accounts` command line, run as a child process (CONTRACT §4): exit codes, the one JSON
 * document of every command, `--store`/`--json` before and after the command words, the
 * SERVICE_ACCOUNTS_STORE variable, usage errors and help. A PostgreSQL round runs when POSTGRES_URL is set.
 */
import { mkdtempSync, readdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRET_PATTERN } from '../../src/index.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { runCli, runCliJson, type CliRun } from '../helpers/run-cli.js';
import { withPostgres } from '../helpers/with-postgres.js';

interface CreatedJson {
  clientId: string;
  name: string;
  clientAccountId: string | null;
  scopes: string[];
  secret: { id: string; value: string; expiresAt: string | null };
}
interface ListedJson {
  clientId: string;
  name: string;
  clientAccountId: string | null;
  enabled: boolean;
  scopes: string[];
  secrets: { id: string; createdAt: string; lastUsedAt: string | null; revokedAt: string | null }[];
  keys: { id: string; thumbprint: string; createdAt: string; lastUsedAt: string | null; revokedAt: string | null }[];
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const STACK_LINE = /^\s+at /m;

/** CONTRACT §4: "1 on a failure (message on stderr, no stack trace)". */
function expectFailure(run: CliRun, message: RegExp): void {
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(message);
  expect(run.stderr).not.toMatch(STACK_LINE);
}

/** "2 on a usage error". */
function expectUsageError(run: CliRun): void {
  expect(run.code).toBe(2);
  expect(run.stdout).toBe('');
  expect(run.stderr).not.toBe('');
  expect(run.stderr).not.toMatch(STACK_LINE);
}

let dir: string;
let store: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sa-cli-'));
  store = `sqlite:${join(dir, 'cli.db')}`;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('service-accounts CLI on SQLite', { timeout: 60_000 }, () => {
  let first: CreatedJson;

  // CONTRACT §4: create --json → {"clientId", "name", "clientAccountId", "scopes": [...], "secret": {"id", "value"}}
  it('create prints the account and its secret as one JSON document (schema created on first use)', async () => {
    const run = await runCli(['create', '--name', 'procurement-portal', '--client-account', 'acct-42', '--scope', 'jobs:read jobs:write', '--store', store, '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    first = JSON.parse(run.stdout) as CreatedJson;
    expect(first).toEqual({
      clientId: expect.stringMatching(/^esa_/),
      name: 'procurement-portal',
      clientAccountId: 'acct-42',
      scopes: ['jobs:read', 'jobs:write'],
      resources: [],
      accessTokenLifetime: null,
      dpopBoundAccessTokens: false,
      secret: { id: expect.any(String), value: expect.stringMatching(SECRET_PATTERN), expiresAt: null },
      client_secret_expires_at: 0,
    });
    expect(Object.keys(first)).toEqual(['clientId', 'name', 'clientAccountId', 'scopes', 'resources', 'accessTokenLifetime', 'dpopBoundAccessTokens', 'secret', 'client_secret_expires_at']);
  });

  it('create without --client-account and --scope gives null and [] (an unrestricted account)', async () => {
    const created = await runCliJson<CreatedJson>(['--store', store, 'create', '--name', 'compliance-engine']);
    expect(created.clientAccountId).toBeNull();
    expect(created.scopes).toEqual([]);
  });

  // "list shows no secret value and no hash"
  it('list prints every account with its secrets: IDs and ISO dates only, no value, no hash', async () => {
    const run = await runCli(['--json', 'list', '--store', store]);
    expect(run.code).toBe(0);
    const accounts = JSON.parse(run.stdout) as ListedJson[];
    const listed = accounts.find((a) => a.clientId === first.clientId);
    expect(listed).toEqual({
      clientId: first.clientId,
      name: 'procurement-portal',
      clientAccountId: 'acct-42',
      enabled: true,
      scopes: ['jobs:read', 'jobs:write'],
      resources: [],
      accessTokenLifetime: null,
      dpopBoundAccessTokens: false,
      secrets: [{ id: first.secret.id, createdAt: expect.stringMatching(ISO), lastUsedAt: null, revokedAt: null, expiresAt: null }],
      keys: [],
      federated: [],
    });
    expect(accounts.map((a) => a.name).sort()).toEqual(['compliance-engine', 'procurement-portal']);
    expect(run.stdout).not.toContain(first.secret.value);
    expect(run.stdout).not.toMatch(SECRET_PATTERN);
    expect(run.stdout).not.toMatch(/\$2[aby]\$/); // bcrypt hash prefix
    expect(run.stdout).not.toMatch(/hash/i);
  });

  // secret add CLIENT_ID → {"id", "value"}
  it('secret add prints the new secret once; list then shows both secrets', async () => {
    const added = await runCliJson<{ id: string; value: string }>(['secret', 'add', first.clientId, '--store', store]);
    expect(added).toEqual({ id: expect.any(String), value: expect.stringMatching(SECRET_PATTERN), expiresAt: null });
    expect(added.id).not.toBe(first.secret.id);
    const accounts = await runCliJson<ListedJson[]>(['list', '--store', store]);
    expect(accounts.find((a) => a.clientId === first.clientId)?.secrets.map((s) => s.id).sort()).toEqual(
      [first.secret.id, added.id].sort(),
    );
  });

  // secret revoke CLIENT_ID SECRET_ID → {"clientId", "secretId", "revokedAt"}
  it('secret revoke prints the revocation; list shows revokedAt', async () => {
    const revoked = await runCliJson<Record<string, unknown>>(['--store', store, 'secret', 'revoke', first.clientId, first.secret.id]);
    expect(revoked).toEqual({ clientId: first.clientId, secretId: first.secret.id, revokedAt: expect.stringMatching(ISO) });
    const accounts = await runCliJson<ListedJson[]>(['list', '--store', store]);
    const secret = accounts.find((a) => a.clientId === first.clientId)?.secrets.find((s) => s.id === first.secret.id);
    expect(secret?.revokedAt).toBe(revoked.revokedAt);
  });

  // token revoke TOKEN_ID → {"tokenId", "revokedAt"}; revoking again keeps the first revokedAt.
  it('token revoke prints the revocation, and again the first one', async () => {
    const tokenId = '0f6a1c2e-58b4-4f59-9a57-2c1d6a1c9e3b';
    const revoked = await runCliJson<Record<string, unknown>>(['--store', store, 'token', 'revoke', tokenId]);
    expect(revoked).toEqual({ tokenId, revokedAt: expect.stringMatching(ISO) });
    expect(await runCliJson(['token', 'revoke', tokenId, '--store', store])).toEqual(revoked);
    const text = await runCli(['token', 'revoke', tokenId, '--store', store]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`Revoked token ${tokenId}`);
  });

  // docs/cli.md, token revoke: the entry stays "until no token of your servers can be admitted any more:
  // TOKEN_TTL_SECONDS plus 300 seconds of clock tolerance. Without it, for a day plus 300 seconds".
  it('token revoke keeps the entry for TOKEN_TTL_SECONDS plus 300 s, or a day plus 300 s', async () => {
    const keptFor = (tokenId: string): number => {
      const db = new Database(store.slice('sqlite:'.length), { readonly: true });
      try {
        const row = db.prepare('select revoked_at, expires_at from revoked_tokens where token_id = ?').get(tokenId) as { revoked_at: number; expires_at: number };
        return (row.expires_at - row.revoked_at) / 1000;
      } finally {
        db.close();
      }
    };
    await runCliJson(['--store', store, 'token', 'revoke', 'short-lived-token'], { env: { TOKEN_TTL_SECONDS: '900' } });
    expect(keptFor('short-lived-token')).toBe(1200);
    await runCliJson(['--store', store, 'token', 'revoke', 'unknown-lifetime-token'], { env: { TOKEN_TTL_SECONDS: undefined } });
    expect(keptFor('unknown-lifetime-token')).toBe(86_400 + 300);
  });

  it('token revoke without an ID, or with a blank one, is a usage error', async () => {
    expectUsageError(await runCli(['token', 'revoke', '--store', store]));
    const blank = await runCli(['token', 'revoke', ' ', '--store', store]);
    expectUsageError(blank);
    expect(blank.stderr).toMatch(/token ID/);
  });

  // disable CLIENT_ID / enable CLIENT_ID → {"clientId", "enabled"}
  it('disable and enable print the account status; list follows', async () => {
    expect(await runCliJson(['disable', first.clientId, '--store', store])).toEqual({ clientId: first.clientId, enabled: false });
    let accounts = await runCliJson<ListedJson[]>(['list', '--store', store]);
    expect(accounts.find((a) => a.clientId === first.clientId)?.enabled).toBe(false);
    expect(await runCliJson(['--store', store, 'enable', first.clientId])).toEqual({ clientId: first.clientId, enabled: true });
    accounts = await runCliJson<ListedJson[]>(['list', '--store', store]);
    expect(accounts.find((a) => a.clientId === first.clientId)?.enabled).toBe(true);
  });

  it('accepts --store and --json before, between and after the command words', async () => {
    const placements = [
      ['--store', store, '--json', 'secret', 'add', first.clientId],
      ['secret', '--store', store, 'add', '--json', first.clientId],
      ['secret', 'add', first.clientId, '--json', '--store', store],
      ['--json', 'secret', 'add', first.clientId, `--store=${store}`],
    ];
    for (const args of placements) {
      const run = await runCli(args);
      expect(run.code, args.join(' ')).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({ id: expect.any(String), value: expect.stringMatching(SECRET_PATTERN), expiresAt: null });
    }
    // The account now has 5 live secrets, the default maxSecretsPerAccount: one more is a failure (exit 1).
    expectFailure(await runCli(['secret', 'add', first.clientId, '--store', store, '--json']), /live secrets/);
  });

  it('reads the store from SERVICE_ACCOUNTS_STORE; --store wins over it', async () => {
    const fromEnv = await runCliJson<ListedJson[]>(['list'], { env: { SERVICE_ACCOUNTS_STORE: store } });
    expect(fromEnv.some((a) => a.clientId === first.clientId)).toBe(true);
    const other = `sqlite:${join(dir, 'other.db')}`;
    expect(await runCliJson(['list', '--store', other], { env: { SERVICE_ACCOUNTS_STORE: store } })).toEqual([]);
  });

  it('reads SERVICE_ACCOUNTS_STORE as the example server does: spaces and line breaks around it are ignored', async () => {
    for (const padded of [`  ${store}`, `${store} \n`]) {
      const listed = await runCliJson<ListedJson[]>(['list'], { env: { SERVICE_ACCOUNTS_STORE: padded } });
      expect(listed.some((a) => a.clientId === first.clientId)).toBe(true);
    }
    // No stray file named with the padding next to the store.
    expect(readdirSync(dir).filter((name) => name.startsWith('cli.db') && name.trim() !== name)).toEqual([]);
  });

  it('an unsupported store URL is a usage error that names where it came from: --store or SERVICE_ACCOUNTS_STORE', async () => {
    const fromEnv = await runCli(['list'], { env: { SERVICE_ACCOUNTS_STORE: 'mysql://db/x' } });
    expectUsageError(fromEnv);
    expect(fromEnv.stderr).toMatch(/^service-accounts: SERVICE_ACCOUNTS_STORE: /);
    const fromFlag = await runCli(['list', '--store', 'mysql://db/x'], { env: { SERVICE_ACCOUNTS_STORE: store } });
    expectUsageError(fromFlag);
    expect(fromFlag.stderr).toMatch(/^service-accounts: --store: /);
  });

  it('a postgres:// URL that is not a valid URL is a usage error, with or without ?schema=, and the password is not echoed', async () => {
    for (const url of [
      'postgres://admin:hunter2-secret@127.0.0.1:99999/nowhere',
      'postgres://admin:hunter2-secret@[db/nowhere',
      'postgres://admin:hunter2-secret@127.0.0.1:99999/nowhere?schema=sa',
    ]) {
      const run = await runCli(['list', '--json', '--store', url]);
      expectUsageError(run);
      expect(run.stderr).toMatch(/^service-accounts: --store: .*not a valid postgres:\/\/ URL/);
      expect(run.stderr).not.toContain('hunter2-secret');
    }
  });

  it('a postgres:// URL naming a socket folder with ?host= takes ?schema= like any other', async () => {
    const url = 'postgres://admin:hunter2-secret@/nowhere?host=/nonexistent-socket-folder';
    expectFailure(await runCli(['list', '--json', '--store', url]), /store is unavailable/i);
    expectFailure(await runCli(['list', '--json', '--store', `${url}&schema=sa`]), /store is unavailable/i);
  });

  it('defaults to sqlite:./.data/service-accounts.db in the working directory', async () => {
    const cwd = mkdtempSync(join(dir, 'cwd-'));
    // An empty SERVICE_ACCOUNTS_STORE is "not set" (CONTRACT §5: the example server shares the CLI's default).
    const created = await runCliJson<CreatedJson>(['create', '--name', 'default-store'], { cwd, env: { SERVICE_ACCOUNTS_STORE: '' } });
    expect(existsSync(join(cwd, '.data', 'service-accounts.db'))).toBe(true);
    const accounts = await runCliJson<ListedJson[]>(['list'], { cwd });
    expect(accounts.map((a) => a.clientId)).toEqual([created.clientId]);
  });

  it('prints human-readable text without --json, saying a secret is shown once', async () => {
    const created = await runCli(['create', '--name', 'workflow', '--store', store]);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(SECRET_PATTERN);
    expect(created.stdout).toMatch(/shown once/i);
    expect(() => JSON.parse(created.stdout)).toThrow();
    const listed = await runCli(['list', '--store', store]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('workflow');
    expect(listed.stdout).toContain(first.clientId);
    expect(listed.stdout).not.toMatch(SECRET_PATTERN);
  });

  it('revoking an unknown secret fails with exit 1, a one-line message and no stack', async () => {
    expectFailure(await runCli(['secret', 'revoke', first.clientId, 'AAAAAAAAAAAAAAAA', '--store', store, '--json']), /no secret/i);
    expectFailure(await runCli(['secret', 'revoke', first.clientId, 'not-an-id', '--store', store]), /no secret/i);
  });

  it('an unknown client ID fails with exit 1 for every command that takes one', async () => {
    for (const args of [['secret', 'add', 'esa_unknown'], ['secret', 'revoke', 'esa_unknown', first.secret.id], ['disable', 'esa_unknown'], ['enable', 'esa_unknown']]) {
      expectFailure(await runCli([...args, '--store', store, '--json']), /no service account/i);
    }
  });

  it('an unreachable store fails with exit 1 and one line that does not echo the password', async () => {
    const run = await runCli(['list', '--json', '--store', 'postgres://admin:hunter2-secret@127.0.0.1:1/nowhere']);
    expectFailure(run, /store is unavailable/i);
    expect(run.stderr).not.toContain('hunter2-secret');
  });

  it('exits 2 on usage errors', async () => {
    const cases = [
      [], // no command
      ['bogus'],
      ['list', '--bogus'],
      ['list', 'extra-argument'],
      ['create'], // --name missing
      ['create', '--name'], // --name without its value
      ['secret'],
      ['secret', 'add'],
      ['secret', 'revoke', first.clientId],
      ['secret', 'bogus', first.clientId],
      ['disable'],
      ['enable'],
      ['--store'],
      ['list', '--store', 'mysql://localhost/db'],
    ];
    const runs = await Promise.all(cases.map((args) => runCli([...args, ...(args.includes('--store') ? [] : ['--store', store])])));
    runs.forEach((run, i) => {
      expect(run.code, `service-accounts ${cases[i]!.join(' ')}`).toBe(2);
      expectUsageError(run);
    });
  });

  // An invalid value is a usage error (exit 2). A secret pasted as --name would be shown by `list` and in
  // every audit event; a name that is a client ID would pass for another account.
  it('create refuses a --name or --client-account holding a secret or a client ID: exit 2, the value not echoed', async () => {
    const secret = first.secret.value;
    const cases = [
      ['create', '--name', secret],
      ['create', '--name', `ci-runner ${secret}`],
      ['create', '--name', first.clientId],
      ['create', '--name', 'ok', '--client-account', secret],
      ['create', '--name', 'ok', '--client-account', first.clientId],
    ];
    const runs = await Promise.all(cases.map((args) => runCli([...args, '--store', store, '--json'])));
    runs.forEach((run, i) => {
      expectUsageError(run);
      expect(run.stderr, cases[i]!.join(' ')).toMatch(/^service-accounts: (--name|--client-account) must not (contain a client secret|be a client ID)/);
      expect(run.stderr).not.toContain(secret.slice(5, 21));
      expect(run.stderr).not.toContain(first.clientId);
    });
    const listed = await runCliJson<ListedJson[]>(['list', '--store', store, '--json']);
    expect(JSON.stringify(listed)).not.toContain(secret.slice(5, 21) + '_');
    expect(listed.filter((a) => a.name === first.clientId || a.clientAccountId === first.clientId)).toEqual([]);
  });

  it('--help works on the program and on every command', async () => {
    const commands = [[], ['create'], ['list'], ['secret'], ['secret', 'add'], ['secret', 'revoke'], ['disable'], ['enable']];
    const runs = await Promise.all(commands.map((words) => runCli([...words, '--help'])));
    runs.forEach((run, i) => {
      const words = commands[i]!;
      expect(run.code, words.join(' ')).toBe(0);
      expect(run.stdout).toContain(`Usage: service-accounts${words.length ? ` ${words.join(' ')}` : ''}`);
      expect(run.stdout).toContain('--store');
    });
  });
});

withPostgres('service-accounts CLI on PostgreSQL', (postgresUrl) => {
  describe('service-accounts CLI on PostgreSQL (POSTGRES_URL)', { timeout: 60_000 }, () => {
    const schemas = usePostgresSchemas(postgresUrl);
    const schema = schemas.name('sa_cli_');
    const pgStore = (): string => schemas.url(schema);

    it('creates the schema on first use, then create and list round-trip', async () => {
      const created = await runCliJson<CreatedJson>(['create', '--name', 'pg-portal', '--scope', 'jobs:write', '--store', pgStore()]);
      expect(created).toEqual({
        clientId: expect.stringMatching(/^esa_/),
        name: 'pg-portal',
        clientAccountId: null,
        scopes: ['jobs:write'],
        resources: [],
        accessTokenLifetime: null,
        dpopBoundAccessTokens: false,
        secret: { id: expect.any(String), value: expect.stringMatching(SECRET_PATTERN), expiresAt: null },
        client_secret_expires_at: 0,
      });
      const run = await runCli(['list', '--json'], { env: { SERVICE_ACCOUNTS_STORE: pgStore() } });
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual([
        {
          clientId: created.clientId,
          name: 'pg-portal',
          clientAccountId: null,
          enabled: true,
          scopes: ['jobs:write'],
          resources: [],
          accessTokenLifetime: null,
          dpopBoundAccessTokens: false,
          secrets: [{ id: created.secret.id, createdAt: expect.stringMatching(ISO), lastUsedAt: null, revokedAt: null, expiresAt: null }],
          keys: [],
          federated: [],
        },
      ]);
      expect(run.stdout).not.toContain(created.secret.value);
    });
  });
});
