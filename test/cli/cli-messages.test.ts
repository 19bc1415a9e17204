/**
 * What a new user of the `service-accounts` CLI reads when they get a command wrong: every message,
 * commander's own included, starts with `service-accounts:` (docs/cli.md: "one line on stderr"), and
 * `revoke` or `add` typed without `secret` points to the command they meant. Exit code 2 (usage).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/run-cli.js';

let dir: string;
let store: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sa-cli-messages-'));
  store = `sqlite:${join(dir, 'cli.db')}`;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('service-accounts CLI messages', { timeout: 60_000 }, () => {
  it('commander’s parse errors carry the service-accounts: prefix like every other message', async () => {
    const cases = [['bogus'], ['list', '--bogus'], ['list', 'extra-argument'], ['create'], ['secret', 'revoke', 'esa_x']];
    const runs = await Promise.all(cases.map((args) => runCli([...args, '--store', store])));
    runs.forEach((run, i) => {
      const what = `service-accounts ${cases[i]!.join(' ')}`;
      expect(run.code, what).toBe(2);
      expect(run.stderr, what).toMatch(/^service-accounts: /);
      expect(run.stderr, what).not.toMatch(/^error: /m);
    });
  });

  // "With `--json`, a command prints exactly one JSON document on stdout": `--version` too.
  it('--version prints the package version; with --json, before or after it, as one JSON document', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const plain = await runCli(['--version']);
    expect([plain.code, plain.stdout, plain.stderr]).toEqual([0, `${version}\n`, '']);
    for (const args of [['--version', '--json'], ['--json', '-V']]) {
      const run = await runCli(args);
      expect([run.code, run.stderr], args.join(' ')).toEqual([0, '']);
      expect(JSON.parse(run.stdout), args.join(' ')).toEqual({ version });
    }
  });

  it.each(['revoke', 'add'])('`service-accounts %s` suggests the `secret`, `key` and `federated` subcommands', async (word) => {
    const run = await runCli([word, 'esa_x', 'sec_x', '--store', store]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `service-accounts: unknown command '${word}' (did you mean 'service-accounts secret ${word}', 'service-accounts key ${word}' or 'service-accounts federated ${word}'?)\n`,
    );
  });

  // A command copied from the docs with its placeholder left in (docs/cli.md writes `esa_4fT0...`, the
  // guides `"$CLIENT_ID"`): the message shows what was typed and what a client ID looks like, instead
  // of "No service account has client ID a malformed value".
  it.each([
    ['CLIENT_ID', 'No service account has client ID "CLIENT_ID": it is not a client ID'],
    ['esa_4fT0...', 'No service account has client ID "esa_4fT0...": it is not a client ID'],
    ['', 'No service account has an empty client ID'],
  ])('`secret add %j` names the placeholder and the shape of a client ID', async (placeholder, start) => {
    const run = await runCli(['secret', 'add', placeholder, '--store', store]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`service-accounts: ${start} (client IDs look like esa_ and 24 letters or digits, as create printed them)\n`);
  });

  it('a value that could be part of a secret is still not shown back, only its fingerprint', async () => {
    const run = await runCli(['secret', 'add', 'esas_0123456789abcdef_0123456789', '--store', store]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^service-accounts: No service account has this client ID, which is not one: a malformed value \(fingerprint [0-9a-f]{8}\), not shown in case it is a secret \(client IDs look like esa_/);
    expect(run.stderr).not.toContain('0123456789');
  });

  // The same for the second ID of `secret revoke`, `key revoke` and `federated revoke`: a placeholder
  // left in (`SECRET_ID`, as the docs write it) is shown with the shape of the ID, not as "no secret
  // with ID a malformed value (fingerprint ...)".
  it.each([
    ['secret', 'SECRET_ID', 'secret', 'secret IDs are 16 letters or digits, as list shows them'],
    ['key', 'KEY_ID', 'key', 'key IDs look like esak_ and 16 letters or digits, as list shows them'],
    ['federated', 'CREDENTIAL_ID', 'federated credential', 'federated credential IDs look like esaf_ and 16 letters or digits, as list shows them'],
  ])('`%s revoke CLIENT_ID %s` names the placeholder and the shape of the ID', async (word, placeholder, what, shape) => {
    const created = await runCli(['create', '--name', `revoke-${word}`, '--json', '--store', store]);
    const { clientId } = JSON.parse(created.stdout) as { clientId: string };
    const run = await runCli([word, 'revoke', clientId, placeholder, '--store', store]);
    expect([run.code, run.stdout]).toEqual([1, '']);
    expect(run.stderr).toBe(`service-accounts: Service account ${clientId} has no ${what} with ID "${placeholder}": it is not a ${what} ID (${shape})\n`);
    const secretLike = await runCli([word, 'revoke', clientId, 'esas_0123456789abcdef_0123456789', '--store', store]);
    expect(secretLike.code).toBe(1);
    expect(secretLike.stderr).toMatch(
      new RegExp(`^service-accounts: Service account ${clientId} has no ${what} with this ID, which is not one: a malformed value \\(fingerprint [0-9a-f]{8}\\), not shown in case it is a secret \\(`),
    );
    expect(secretLike.stderr).not.toContain('0123456789');
  });

  // docs/cli.md: "The CLI never prints the store URL, not even in error messages."
  it('a store URL typed with a misspelt --store, or without it, is not echoed with its password', async () => {
    const url = 'postgres://admin:hunter2-secret@db.internal:5432/prod';
    for (const args of [['list', `--stor=${url}`], [url, 'list'], ['list', `--json=${url}`]]) {
      const run = await runCli(args);
      expect(run.code, args[1]).toBe(2);
      expect(run.stderr, args[1]).toMatch(/^service-accounts: .*postgres:\/\/admin:\[REDACTED\]@db\.internal:5432\/prod/);
      expect(run.stderr, args[1]).not.toContain('hunter2-secret');
    }
  });

  // pg reads a password with a quote or a space as typed (it encodes the space itself).
  it('redacts a store URL password when the password or the user name holds a quote or a space', async () => {
    for (const [user, password] of [['admin', "it's-hunter2"], ['admin', 'pass hunter2'], ["o'neil", 'hunter2'], ['o neil', 'hunter2']]) {
      const run = await runCli(['list', `--stor=postgres://${user}:${password}@db.internal:5432/prod`]);
      expect(run.code, password).toBe(2);
      expect(run.stderr, password).toMatch(/^service-accounts: .*postgres:\/\/.*:\[REDACTED\]@db\.internal:5432\/prod/);
      expect(run.stderr, password).not.toContain('hunter2');
    }
  });

  it('the suggestions are not listed in --help', async () => {
    const run = await runCli(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(/^\s+(revoke|add)\b/m);
    expect(run.stdout).toMatch(/^\s+secret\b/m);
  });

  // A refused value is named by the option that was typed, not by the admin API's field behind it.
  it('names a refused value by its option (--expires-in, --client-account, --jwks-uri), not by the field of the admin API', async () => {
    const created = await runCli(['create', '--name', 'messages-probe', '--json', '--store', store]);
    const { clientId } = JSON.parse(created.stdout) as { clientId: string };
    const cases: Array<[string[], RegExp]> = [
      [['secret', 'add', clientId, '--expires-in', '99999d'], /^service-accounts: --expires-in must lie within 3650 days\n$/],
      [['create', '--name', 'x', '--client-account', ' '], /^service-accounts: --client-account must be 1 to 200 printable characters/],
      [['federated', 'add', clientId, '--issuer', 'https://issuer.example.com', '--subject', 's', '--jwks-uri', 'jwks.json'], /^service-accounts: --jwks-uri must be an absolute URL/],
      // create's --expires-in is its first secret's expiresIn; --resource fills the resources list.
      [['create', '--name', 'x', '--expires-in', '0d'], /^service-accounts: --expires-in must be a whole number/],
      [['create', '--name', 'x', '--resource', 'https://billing.example.com', '--resource', '/relative'], /^service-accounts: --resource number 2 must be an absolute URI without fragment/],
      [['resources', 'set', clientId, '--resource', 'https://billing.example.com/#x'], /^service-accounts: --resource number 1 must be an absolute URI without fragment/],
    ];
    for (const [args, message] of cases) {
      const run = await runCli([...args, '--store', store]);
      expect([run.code, run.stderr], args.join(' ')).toEqual([2, expect.stringMatching(message)]);
    }
    // A server policy that requires an expiry: create without --expires-in is told to give it.
    const required = await runCli(['create', '--name', 'x', '--store', store], { env: { MAX_CREDENTIAL_LIFETIME: '30d' } });
    expect([required.code, required.stderr]).toEqual([2, expect.stringMatching(/^service-accounts: --expires-in is required/)]);
  });
});
