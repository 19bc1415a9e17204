/**
 * The `service-accounts federated` commands, run as a child process (docs/cli.md): `federated add
 * CLIENT_ID --issuer URL --subject SUB [--audience AUD] [--jwks-uri URL]` prints with `--json`
 * `{"id", "issuer", "subject", "audience", "createdAt"}`; `federated revoke CLIENT_ID CREDENTIAL_ID`
 * prints `{"clientId", "credentialId", "revokedAt"}`; `list` shows `"federated": [{"id", "issuer",
 * "subject", "audience", "createdAt", "lastUsedAt", "revokedAt"}]`; exit codes 0, 1 (failure, one line
 * on stderr) and 2 (usage error), as for the other commands.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { runCli, runCliJson, type CliRun, type CliRunOptions } from '../helpers/run-cli.js';
import { withPostgres } from '../helpers/with-postgres.js';

interface ListedFederated {
  clientId: string;
  secrets: unknown[];
  keys: unknown[];
  federated: Record<string, string | null>[];
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const CREDENTIAL_ID = /^esaf_[0-9A-Za-z]{16}$/;
const STACK_LINE = /^\s+at /m;
const GITHUB = 'https://token.actions.githubusercontent.com';
const MAIN = 'repo:acme/billing:ref:refs/heads/main';
/** Neither TOKEN_ISSUER nor PORT from the environment the tests run in: the CLI's own default. */
const NO_ISSUER_ENV: CliRunOptions = { env: { TOKEN_ISSUER: undefined, PORT: undefined } };

function expectExit(run: CliRun, code: 1 | 2, message: RegExp): void {
  expect(run.code, run.stderr).toBe(code);
  expect(run.stdout).toBe('');
  expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(message);
  expect(run.stderr).not.toMatch(STACK_LINE);
}

let dir: string;
let store: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sa-cli-federated-'));
  store = `sqlite:${join(dir, 'cli.db')}`;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function newAccount(storeUrl: string): Promise<string> {
  return (await runCliJson<{ clientId: string }>(['create', '--name', 'billing-deployer', '--store', storeUrl])).clientId;
}

async function listed(storeUrl: string, clientId: string, options: CliRunOptions = NO_ISSUER_ENV): Promise<ListedFederated | undefined> {
  return (await runCliJson<ListedFederated[]>(['list', '--store', storeUrl], options)).find((a) => a.clientId === clientId);
}

describe('service-accounts federated (SQLite)', { timeout: 60_000 }, () => {
  // federated add CLIENT_ID --issuer URL --subject SUB → {"id", "issuer", "subject", "audience", "createdAt"};
  // without --audience, the audience is the server's issuer identifier, which the CLI knows only through TOKEN_ISSUER:
  // without it, null ("the server's issuer option"), never a guess.
  it('federated add prints exactly {id, issuer, subject, audience, createdAt}, the default audience being null without TOKEN_ISSUER', async () => {
    const clientId = await newAccount(store);
    const run = await runCli(['federated', 'add', clientId, '--issuer', GITHUB, '--subject', MAIN, '--store', store, '--json'], NO_ISSUER_ENV);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const added = JSON.parse(run.stdout) as Record<string, string>;
    expect(Object.keys(added)).toEqual(['id', 'issuer', 'subject', 'audience', 'createdAt', 'expiresAt']);
    expect(added).toEqual({ id: expect.stringMatching(CREDENTIAL_ID), issuer: GITHUB, subject: MAIN, audience: null, createdAt: expect.stringMatching(ISO), expiresAt: null });
  });

  // "[--audience AUD] [--jwks-uri URL]": printed as given; "jwksUri" only when given.
  it('federated add --audience --jwks-uri prints the audience given and jwksUri', async () => {
    const clientId = await newAccount(store);
    const issuer = 'https://oidc.prod-cluster.example.com';
    const jwksUri = `${issuer}/openid/v1/jwks`;
    const added = await runCliJson<Record<string, string>>(
      ['federated', 'add', clientId, '--issuer', issuer, '--subject', 'system:serviceaccount:payments:exporter', '--audience', 'api://payments', '--jwks-uri', jwksUri, '--store', store],
      NO_ISSUER_ENV,
    );
    expect(Object.keys(added)).toEqual(['id', 'issuer', 'subject', 'audience', 'jwksUri', 'createdAt', 'expiresAt']);
    expect(added).toMatchObject({ issuer, subject: 'system:serviceaccount:payments:exporter', audience: 'api://payments', jwksUri });
  });

  // The CLI's issuer identifier: TOKEN_ISSUER, as the example server's; PORT alone is no issuer (an app may have any).
  it('prints TOKEN_ISSUER as the default audience, and null without it whatever PORT says', async () => {
    const clientId = await newAccount(store);
    const add = (subject: string, env: Record<string, string | undefined>) =>
      runCliJson<{ audience: string }>(['federated', 'add', clientId, '--issuer', GITHUB, '--subject', subject, '--store', store], { env });
    expect((await add(`${MAIN}-a`, { TOKEN_ISSUER: 'https://api.example.com', PORT: '8080' })).audience).toBe('https://api.example.com');
    expect((await add(`${MAIN}-b`, { TOKEN_ISSUER: undefined, PORT: '8080' })).audience).toBeNull();
    // The store keeps "the issuer identifier", not the value printed: list shows the current one.
    const shown = await listed(store, clientId, { env: { TOKEN_ISSUER: 'https://api.example.org', PORT: undefined } });
    expect(shown?.federated.map((c) => c.audience)).toEqual(['https://api.example.org', 'https://api.example.org']);
  });

  // list → "federated": [{"id", "issuer", "subject", "audience", "createdAt", "lastUsedAt", "revokedAt"}] beside secrets and keys.
  it('list shows the account’s federated credentials beside its secrets and keys', async () => {
    const clientId = await newAccount(store);
    const added = await runCliJson<Record<string, string>>(['federated', 'add', clientId, '--issuer', GITHUB, '--subject', MAIN, '--store', store], NO_ISSUER_ENV);
    const account = await listed(store, clientId);
    expect(account?.secrets).toHaveLength(1);
    expect(account?.keys).toEqual([]);
    expect(account?.federated).toEqual([{ ...added, lastUsedAt: null, revokedAt: null, expiresAt: null }]);
    expect(Object.keys(account!.federated[0]!)).toEqual(['id', 'issuer', 'subject', 'audience', 'createdAt', 'lastUsedAt', 'revokedAt', 'expiresAt']);
  });

  // federated revoke CLIENT_ID CREDENTIAL_ID → {"clientId", "credentialId", "revokedAt"}
  it('federated revoke prints exactly {clientId, credentialId, revokedAt}; list shows revokedAt', async () => {
    const clientId = await newAccount(store);
    const added = await runCliJson<{ id: string }>(['federated', 'add', clientId, '--issuer', GITHUB, '--subject', MAIN, '--store', store]);
    const run = await runCli(['--store', store, 'federated', 'revoke', clientId, added.id, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const revoked = JSON.parse(run.stdout) as Record<string, string>;
    expect(Object.keys(revoked)).toEqual(['clientId', 'credentialId', 'revokedAt']);
    expect(revoked).toEqual({ clientId, credentialId: added.id, revokedAt: expect.stringMatching(ISO) });
    expect((await listed(store, clientId))?.federated[0]?.revokedAt).toBe(revoked.revokedAt);
    // Revoking again succeeds and keeps the first revokedAt.
    expect(await runCliJson(['federated', 'revoke', clientId, added.id, '--store', store])).toEqual(revoked);
  });

  it('prints human-readable text without --json', async () => {
    const clientId = await newAccount(store);
    const added = await runCli(['federated', 'add', clientId, '--issuer', GITHUB, '--subject', MAIN, '--store', store], NO_ISSUER_ENV);
    expect(added.code).toBe(0);
    expect(() => JSON.parse(added.stdout)).toThrow();
    const credentialId = /credential ID:\s+(esaf_\w+)/.exec(added.stdout)?.[1];
    expect(credentialId).toMatch(CREDENTIAL_ID);
    expect(added.stdout).toMatch(/audience:\s+your server's `issuer` option \(set TOKEN_ISSUER to show it here\)\n/);
    const list = await runCli(['list', '--store', store], NO_ISSUER_ENV);
    expect(list.stdout).toContain(`federated ${credentialId}  live  `);
    expect(list.stdout).toMatch(new RegExp(`federated ${credentialId} .*last used never  issuer ${GITHUB}  subject ${MAIN}  audience your server's \`issuer\` option`));
    const revoked = await runCli(['federated', 'revoke', clientId, credentialId!, '--store', store]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(new RegExp(`^Revoked federated credential ${credentialId} of ${clientId} at `));
  });

  // Subject patterns are not supported (exact subjects only); bad values are usage errors naming the option's field.
  it('exits 2 for a subject pattern, a bad issuer, audience or JWK Set URL, naming the field; nothing is stored', async () => {
    const clientId = await newAccount(store);
    const add = (...extra: string[]) => runCli(['federated', 'add', clientId, '--store', store, ...extra]);
    expectExit(await add('--issuer', GITHUB, '--subject', 'repo:acme/billing:*'), 2, /subject must be one exact subject: patterns \(\*\) are not supported/);
    expectExit(await add('--issuer', 'http://issuer.example.com', '--subject', MAIN), 2, /issuer must be an https URL/);
    expectExit(await add('--issuer', GITHUB, '--subject', MAIN, '--jwks-uri', 'jwks.json'), 2, /--jwks-uri must be an absolute URL/);
    expectExit(await add('--issuer', GITHUB, '--subject', ''), 2, /subject must be 1 to 1000 bytes \(UTF-8\) of printable characters/);
    expectExit(await add('--issuer', GITHUB, '--subject', MAIN, '--audience', 'api\u001b[31m'), 2, /audience .*U\+001B/);
    expect((await listed(store, clientId))?.federated).toEqual([]);
  });

  it('exits 2 on missing options and arguments', async () => {
    const clientId = await newAccount(store);
    const usage = [
      ['federated'],
      ['federated', 'add', clientId],
      ['federated', 'add', clientId, '--issuer', GITHUB],
      ['federated', 'add', clientId, '--subject', MAIN],
      ['federated', 'add', '--issuer', GITHUB, '--subject', MAIN],
      ['federated', 'revoke', clientId],
      ['federated', 'bogus'],
    ];
    for (const args of usage) {
      const run = await runCli([...args, '--store', store]);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout).toBe('');
    }
  });

  it('exits 1 for a duplicate live credential, a full account, an unknown credential or account', async () => {
    const clientId = await newAccount(store);
    const add = (subject: string, id = clientId) => runCli(['federated', 'add', id, '--issuer', GITHUB, '--subject', subject, '--store', store]);
    expect((await add(MAIN)).code).toBe(0);
    expectExit(await add(MAIN), 1, /already has a live federated credential \(esaf_\w+\) for this issuer, subject and audience/);
    // One secret and one federated credential so far; the default cap is 5 live credentials.
    for (let i = 0; i < 3; i++) expect((await add(`${MAIN}-${i}`)).code).toBe(0);
    expectExit(await add(`${MAIN}-x`), 1, /1 live secrets, 0 live keys and 4 live federated credentials/);
    expectExit(await runCli(['federated', 'revoke', clientId, 'esaf_0000000000000000', '--store', store]), 1, /no federated credential with ID "esaf_0000000000000000"/);
    expectExit(await add(MAIN, 'esa_unknown'), 1, /no service account/i);
    expectExit(await runCli(['federated', 'revoke', 'esa_unknown', 'esaf_0000000000000000', '--store', store]), 1, /no service account/i);
  });

  // docs/cli.md: "--allowed-issuers (or FEDERATION_ALLOWED_ISSUERS) refuses any issuer outside the
  // list, and --jwks-uri, as the server's federation.allowedIssuers does".
  // Refused input is a usage error (exit code 2), as for any other refused argument.
  it('federated add --allowed-issuers (or FEDERATION_ALLOWED_ISSUERS) refuses an issuer outside the list and --jwks-uri', async () => {
    const clientId = await newAccount(store);
    const add = (issuer: string, extra: string[] = [], env: Record<string, string | undefined> = {}) =>
      runCli(['federated', 'add', clientId, '--issuer', issuer, '--subject', `${MAIN}-allowed`, ...extra, '--store', store, '--json'], { env: { ...NO_ISSUER_ENV.env, ...env } });
    expectExit(await add('https://169.254.169.254', ['--allowed-issuers', GITHUB]), 2, /issuer https:\/\/169\.254\.169\.254 is not one this server accepts/);
    expectExit(await add('https://10.1.2.3', [], { FEDERATION_ALLOWED_ISSUERS: `${GITHUB}, https://k8s.example.com` }), 2, /is not one this server accepts/);
    expectExit(await add(GITHUB, ['--allowed-issuers', 'none']), 2, /is not one this server accepts/);
    expectExit(await add(GITHUB, ['--allowed-issuers', GITHUB, '--jwks-uri', 'https://10.1.2.3/jwks']), 2, /--jwks-uri is not accepted on this server/);
    expectExit(await add(GITHUB, ['--allowed-issuers', 'http://example.com']), 2, /--allowed-issuers: .*must be an https URL/);
    expectExit(await add(GITHUB, [], { FEDERATION_ALLOWED_ISSUERS: 'http://example.com' }), 2, /FEDERATION_ALLOWED_ISSUERS: .*must be an https URL/);
    expect((await listed(store, clientId))?.federated).toEqual([]);
    const accepted = await add(GITHUB, [], { FEDERATION_ALLOWED_ISSUERS: GITHUB });
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(JSON.parse(accepted.stdout)).toMatchObject({ issuer: GITHUB });
    expect((await add('https://issuer.example.test', ['--allowed-issuers', 'any'])).code).toBe(0);
  });

  it('--help works on federated, federated add and federated revoke, and explains the default audience', async () => {
    for (const words of [['federated'], ['federated', 'add'], ['federated', 'revoke']]) {
      const run = await runCli([...words, '--help']);
      expect(run.code, words.join(' ')).toBe(0);
      expect(run.stdout).toContain(`Usage: service-accounts ${words.join(' ')}`);
    }
    const help = await runCli(['federated', 'add', '--help']);
    expect(help.stdout).toMatch(/--jwks-uri <url>/);
    expect(help.stdout).toMatch(/prints TOKEN_ISSUER when\s+set, and otherwise null/);
  });
});

withPostgres('service-accounts federated on PostgreSQL', (postgresUrl) => {
  describe('service-accounts federated on PostgreSQL (POSTGRES_URL)', { timeout: 60_000 }, () => {
    const schemas = usePostgresSchemas(postgresUrl);
    const pgStore = (): string => schemas.url(schemas.name('sa_cli_federated_'));

    it('federated add, list and federated revoke round-trip', async () => {
      const url = pgStore();
      const clientId = await newAccount(url);
      const added = await runCliJson<Record<string, string>>(
        ['federated', 'add', clientId, '--issuer', GITHUB, '--subject', MAIN, '--audience', 'api://billing', '--store', url],
        NO_ISSUER_ENV,
      );
      const revoked = await runCliJson<{ revokedAt: string }>(['federated', 'revoke', clientId, added.id!, '--store', url]);
      const account = await listed(url, clientId);
      expect(account?.federated).toEqual([{ ...added, lastUsedAt: null, revokedAt: revoked.revokedAt }]);
      expect(account?.federated[0]?.audience).toBe('api://billing');
    });
  });
});
