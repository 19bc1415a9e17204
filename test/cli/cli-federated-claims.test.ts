/**
 * `service-accounts federated add ... --claim NAME=VALUE` (repeatable), run as a child process
 * (docs/cli.md): the credential's claim conditions, printed with `--json` as `"claims": {NAME: VALUE}`
 * before `createdAt`, shown by `list`, and stored in SQLite and PostgreSQL; a malformed `--claim`, or a
 * condition the admin API refuses (a pattern), is a usage error (exit code 2) of one line on stderr.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { runCli, runCliJson, type CliRun } from '../helpers/run-cli.js';
import { withPostgres } from '../helpers/with-postgres.js';

const GITHUB = 'https://token.actions.githubusercontent.com';
const PRODUCTION = 'repo:acme/billing:environment:production';
const STACK_LINE = /^\s+at /m;

interface Created {
  id: string;
  claims?: Record<string, string>;
  [key: string]: unknown;
}

function expectExit(run: CliRun, code: 1 | 2, message: RegExp): void {
  expect(run.code, run.stderr).toBe(code);
  expect(run.stdout).toBe('');
  expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(message);
  expect(run.stderr).not.toMatch(STACK_LINE);
}

function describeClaims(label: string, storeUrl: () => string): void {
  describe(`service-accounts federated add --claim (${label})`, { timeout: 60_000 }, () => {
    const newAccount = async () => (await runCliJson<{ clientId: string }>(['create', '--name', 'deployer', '--store', storeUrl()])).clientId;

    it('prints the conditions as "claims" before createdAt, in the order given, and list shows them', async () => {
      const clientId = await newAccount();
      const add = ['federated', 'add', clientId, '--issuer', GITHUB, '--subject', PRODUCTION, '--store', storeUrl(), '--json'];
      const created = await runCliJson<Created>([...add, '--claim', 'repository_owner=acme', '--claim', '/kubernetes.io/namespace=a=b']);
      expect(Object.keys(created)).toEqual(['id', 'issuer', 'subject', 'audience', 'claims', 'createdAt', 'expiresAt']);
      expect(Object.entries(created.claims!)).toEqual([
        ['repository_owner', 'acme'],
        ['/kubernetes.io/namespace', 'a=b'],
      ]);
      const accounts = await runCliJson<{ clientId: string; federated: Created[] }[]>(['list', '--store', storeUrl()]);
      const [listed] = accounts.find((a) => a.clientId === clientId)!.federated;
      expect(listed?.claims).toEqual(created.claims);
      const text = await runCli(['list', '--store', storeUrl()]);
      expect(text.stdout).toContain('claims repository_owner=acme, /kubernetes.io/namespace=a=b');
    });

    it('without --claim, the JSON has no claims member', async () => {
      const clientId = await newAccount();
      const created = await runCliJson<Created>(['federated', 'add', clientId, '--issuer', GITHUB, '--subject', PRODUCTION, '--store', storeUrl(), '--json']);
      expect(Object.keys(created)).toEqual(['id', 'issuer', 'subject', 'audience', 'createdAt', 'expiresAt']);
    });

    it('a --claim without NAME=, or a name given twice, or a pattern, is a usage error (exit 2)', async () => {
      const clientId = await newAccount();
      const add = ['federated', 'add', clientId, '--issuer', GITHUB, '--subject', PRODUCTION, '--store', storeUrl()];
      expectExit(await runCli([...add, '--claim', 'repository_owner']), 2, /write NAME=VALUE/);
      expectExit(await runCli([...add, '--claim', '=acme']), 2, /write NAME=VALUE/);
      expectExit(await runCli([...add, '--claim', 'environment=a', '--claim', 'environment=b']), 2, /given twice/);
      expectExit(await runCli([...add, '--claim', 'environment=prod*']), 2, /patterns \(\*\) are not supported/);
      const accounts = await runCliJson<{ clientId: string; federated: unknown[] }[]>(['list', '--store', storeUrl()]);
      expect(accounts.find((a) => a.clientId === clientId)?.federated).toEqual([]);
    });
  });
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sa-cli-claims-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeClaims('SQLite', () => `sqlite:${join(dir, 'cli.db')}`);

withPostgres('service-accounts federated add --claim on PostgreSQL', (postgresUrl) => {
  const schemas = usePostgresSchemas(postgresUrl);
  let url = '';
  beforeAll(() => {
    url = schemas.url(schemas.name('sa_cli_claims_'));
  });
  describeClaims('PostgreSQL', () => url);
});
