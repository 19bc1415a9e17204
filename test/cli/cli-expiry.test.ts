/**
 * The `service-accounts` command line and credentials that expire (docs/cli.md, docs/rotation.md), run
 * as a child process: "CLI `secret add CLIENT_ID --expires-in DURATION` (`90d`, `12h`, `30m`, `4s`)
 * prints with `--json` the secret and its `expiresAt`; `create` takes `--expires-in` for its first
 * secret" (with `client_secret_expires_at`, RFC 7591 §3.2.1); `list` shows expiries; `credentials
 * stale` lists what expires soon or is unused; a malformed duration is a usage error (exit 2).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliJson } from '../helpers/run-cli.js';

interface CreatedJson {
  clientId: string;
  secret: { id: string; value: string; expiresAt: string | null };
  client_secret_expires_at: number;
}

let dir: string;
let store: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sa-cli-expiry-'));
  store = `sqlite:${join(dir, 'cli.db')}`;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('service-accounts CLI: expiring credentials', { timeout: 60_000 }, () => {
  it('secret add --expires-in 4s --json prints the secret and its expiresAt, 4 s after it was made', async () => {
    const created = await runCliJson<CreatedJson>(['create', '--name', 'rotating', '--store', store]);
    expect(created.client_secret_expires_at).toBe(0); // RFC 7591 §3.2.1: 0 when the secret does not expire
    const before = Date.now();
    const added = await runCliJson<CreatedJson['secret']>(['secret', 'add', created.clientId, '--expires-in', '4s', '--json', '--store', store]);
    const after = Date.now();
    expect(Object.keys(added)).toEqual(['id', 'value', 'expiresAt']);
    expect(added.expiresAt).toMatch(ISO);
    const expiresAt = Date.parse(added.expiresAt!);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 4000);
    expect(expiresAt).toBeLessThanOrEqual(after + 4000);
    const listed = await runCliJson<{ clientId: string; secrets: { id: string; expiresAt: string | null }[] }[]>(['list', '--store', store]);
    expect(listed.find((a) => a.clientId === created.clientId)?.secrets).toEqual([
      expect.objectContaining({ id: created.secret.id, expiresAt: null }),
      expect.objectContaining({ id: added.id, expiresAt: added.expiresAt }),
    ]);
  });

  it('create --expires-in 90d gives the first secret an expiry, and client_secret_expires_at in seconds', async () => {
    const created = await runCliJson<CreatedJson>(['create', '--name', 'quarterly', '--expires-in', '90d', '--store', store]);
    expect(created.secret.expiresAt).toMatch(ISO);
    expect(created.client_secret_expires_at).toBe(Math.floor(Date.parse(created.secret.expiresAt!) / 1000));
    const text = await runCli(['list', '--store', store]);
    expect(text.stdout).toMatch(new RegExp(`secret ${created.secret.id}  live until ${created.secret.expiresAt!.replace(/\./g, '\\.')}`));
  });

  it('credentials stale --expiring-within lists the secret that expires within the period', async () => {
    const created = await runCliJson<CreatedJson>(['create', '--name', 'soon', '--expires-in', '3d', '--store', store]);
    const stale = await runCliJson<{ clientId: string; kind: string; id: string; reasons: string[] }[]>([
      'credentials', 'stale', '--expiring-within', '14d', '--store', store,
    ]);
    expect(stale).toContainEqual(expect.objectContaining({ clientId: created.clientId, kind: 'secret', id: created.secret.id, reasons: ['expiring'] }));
    expect(stale.every((entry) => entry.reasons.length > 0)).toBe(true);
  });

  // docs/cli.md: "unless the server's `maxCredentialLifetime` requires an expiry (then the command fails
  // with exit code `2`), which the CLI reads from `MAX_CREDENTIAL_LIFETIME`".
  it('with MAX_CREDENTIAL_LIFETIME, a secret without an expiry or beyond it is refused (exit 2); one within it is added', async () => {
    const created = await runCliJson<CreatedJson>(['create', '--name', 'policy-bound', '--expires-in', '7d', '--store', store], { env: { MAX_CREDENTIAL_LIFETIME: '30d' } });
    expect(created.secret.expiresAt).not.toBeNull();
    const env = { MAX_CREDENTIAL_LIFETIME: '30d' };
    const without = await runCli(['secret', 'add', created.clientId, '--store', store], { env });
    expect([without.code, without.stdout]).toEqual([2, '']);
    expect(without.stderr).toMatch(/30d/);
    const beyond = await runCli(['secret', 'add', created.clientId, '--expires-in', '90d', '--store', store], { env });
    expect([beyond.code, beyond.stdout]).toEqual([2, '']);
    const within = await runCliJson<CreatedJson['secret']>(['secret', 'add', created.clientId, '--expires-in', '30d', '--store', store], { env });
    expect(within.expiresAt).not.toBeNull();
    const malformed = await runCli(['list', '--store', store], { env: { MAX_CREDENTIAL_LIFETIME: 'a month' } });
    expect(malformed.code).not.toBe(0);
    expect(malformed.stderr).toMatch(/MAX_CREDENTIAL_LIFETIME/);
  });

  it('a malformed or out-of-range MAX_CREDENTIAL_LIFETIME is a usage error that names it, and no option', async () => {
    for (const value of ['a month', '99999d']) {
      const run = await runCli(['list', '--store', store], { env: { MAX_CREDENTIAL_LIFETIME: value } });
      expect([run.code, run.stdout], value).toEqual([2, '']);
      expect(run.stderr, value).toMatch(/^service-accounts: MAX_CREDENTIAL_LIFETIME/);
      expect(run.stderr, value).not.toMatch(/--allowed-issuers/);
    }
  });

  it('refuses a malformed duration with exit 2 and one line on stderr; credentials stale without a criterion is a usage error', async () => {
    const created = await runCliJson<CreatedJson>(['create', '--name', 'bad-duration', '--store', store]);
    const run = await runCli(['secret', 'add', created.clientId, '--expires-in', '2 weeks', '--store', store]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/90d, 12h, 30m or 4s/);
    const usage = await runCli(['credentials', 'stale', '--store', store]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--expiring-within/);
  });
});
