/**
 * The `service-accounts` command line and account token policies (docs/account-policy.md), run as a
 * child process: `create --token-lifetime 15m --require-dpop`, `list` showing the policy,
 * `token-lifetime set CLIENT_ID DURATION|--default`, `dpop require|allow CLIENT_ID`; exit code 2 for a
 * lifetime above the maximum (invalid input), a malformed duration and a usage error.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliJson } from '../helpers/run-cli.js';

interface PolicyJson {
  clientId: string;
  accessTokenLifetime: number | null;
  dpopBoundAccessTokens: boolean;
}

let dir: string;
let store: string;
/** The servers' lifetimes, as the example server reads them. */
const env = { TOKEN_TTL_SECONDS: '3600', MAX_TOKEN_TTL_SECONDS: '7200' };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sa-cli-policy-'));
  store = `sqlite:${join(dir, 'cli.db')}`;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('service-accounts CLI: token policy', { timeout: 60_000 }, () => {
  it('create --token-lifetime 15m --require-dpop stores the policy; list shows it in JSON and text', async () => {
    const created = await runCliJson<PolicyJson>(['create', '--name', 'payouts', '--token-lifetime', '15m', '--require-dpop', '--store', store], { env });
    expect(created).toMatchObject({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
    const listed = await runCliJson<PolicyJson[]>(['list', '--store', store], { env });
    expect(listed.find((a) => a.clientId === created.clientId)).toMatchObject({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
    const text = await runCli(['list', '--store', store], { env });
    expect(text.stdout).toMatch(/token lifetime:\s+900 s/);
    expect(text.stdout).toMatch(/DPoP:\s+required/);
  });

  it('create without policy options gives the server lifetime (null) and no DPoP requirement, and no policy lines', async () => {
    const created = await runCliJson<PolicyJson>(['create', '--name', 'plain', '--store', store], { env });
    expect(created).toMatchObject({ accessTokenLifetime: null, dpopBoundAccessTokens: false });
    const text = await runCli(['create', '--name', 'plain-text', '--store', store], { env });
    expect(text.stdout).not.toMatch(/token lifetime|DPoP/);
  });

  it('token-lifetime set takes a duration or --default', async () => {
    const created = await runCliJson<PolicyJson>(['create', '--name', 'worker', '--store', store], { env });
    expect(await runCliJson(['token-lifetime', 'set', created.clientId, '2h', '--store', store], { env })).toEqual({
      clientId: created.clientId,
      accessTokenLifetime: 7200,
      dpopBoundAccessTokens: false,
    });
    expect(await runCliJson(['token-lifetime', 'set', created.clientId, '90', '--store', store], { env })).toMatchObject({ accessTokenLifetime: 90 });
    const text = await runCli(['token-lifetime', 'set', created.clientId, '--default', '--store', store], { env });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/the server's token lifetime/);
    const listed = await runCliJson<PolicyJson[]>(['list', '--store', store], { env });
    expect(listed.find((a) => a.clientId === created.clientId)?.accessTokenLifetime).toBeNull();
  });

  it('dpop require and dpop allow switch the flag', async () => {
    const created = await runCliJson<PolicyJson>(['create', '--name', 'bound', '--store', store], { env });
    expect(await runCliJson(['dpop', 'require', created.clientId, '--store', store], { env })).toEqual({
      clientId: created.clientId,
      accessTokenLifetime: null,
      dpopBoundAccessTokens: true,
    });
    const allowed = await runCli(['dpop', 'allow', created.clientId, '--store', store], { env });
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toMatch(/DPoP proofs optional/);
    const listed = await runCliJson<PolicyJson[]>(['list', '--store', store], { env });
    expect(listed.find((a) => a.clientId === created.clientId)?.dpopBoundAccessTokens).toBe(false);
  });

  // Above the servers' maxAccessTokenLifetime (MAX_TOKEN_TTL_SECONDS): refused, exit 2, nothing created.
  it('refuses a lifetime above the maximum: exit 2, one line on stderr naming the maximum', async () => {
    const run = await runCli(['create', '--name', 'too-long', '--token-lifetime', '3h', '--store', store], { env });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/from 1 to 7200/);
    // In the CLI's terms: where the maximum comes from, and no `null` or option name of the admin API.
    expect(run.stderr).toMatch(/MAX_TOKEN_TTL_SECONDS/);
    expect(run.stderr).not.toMatch(/null|tokenLifetime/);
    const set = await runCli(['token-lifetime', 'set', (await runCliJson<{ clientId: string }>(['create', '--name', 'short', '--store', store], { env })).clientId, '3h', '--store', store], { env });
    expect([set.code, set.stdout]).toEqual([2, '']);
    expect(set.stderr).toMatch(/from 1 to 7200.*MAX_TOKEN_TTL_SECONDS/);
    expect(set.stderr).not.toMatch(/null|tokenLifetime/);
    const listed = await runCliJson<{ name: string }[]>(['list', '--store', store], { env });
    expect(listed.some((a) => a.name === 'too-long')).toBe(false);
  });

  // docs/cli.md: the CLI reads MAX_TOKEN_TTL_SECONDS (and TOKEN_TTL_SECONDS) "as the example server
  // does", which refuses to start unless each is a whole number of seconds from 1 to 86400.
  it('a malformed TOKEN_TTL_SECONDS or MAX_TOKEN_TTL_SECONDS is a usage error that names it, not silently dropped', async () => {
    for (const [name, value] of [
      ['MAX_TOKEN_TTL_SECONDS', '2h'],
      ['MAX_TOKEN_TTL_SECONDS', '0'],
      ['MAX_TOKEN_TTL_SECONDS', '90000'],
      ['TOKEN_TTL_SECONDS', '15m'],
      ['TOKEN_TTL_SECONDS', '-1'],
    ] as const) {
      const run = await runCli(['create', '--name', `ttl-${name}-${value}`, '--token-lifetime', '90m', '--store', store], { env: { ...env, [name]: value } });
      expect([run.code, run.stdout], `${name}=${value}`).toEqual([2, '']);
      expect(run.stderr, `${name}=${value}`).toMatch(new RegExp(`^service-accounts: ${name}\\b.*1 to 86400`));
    }
    // Below the servers' token lifetime: the example server refuses that pair too.
    const below = await runCli(['list', '--store', store], { env: { TOKEN_TTL_SECONDS: '3600', MAX_TOKEN_TTL_SECONDS: '600' } });
    expect([below.code, below.stdout]).toEqual([2, '']);
    expect(below.stderr).toMatch(/^service-accounts: MAX_TOKEN_TTL_SECONDS/);
    const listed = await runCliJson<{ name: string }[]>(['list', '--store', store], { env });
    expect(listed.some((a) => a.name.startsWith('ttl-'))).toBe(false);
  });

  it('usage errors exit 2: a malformed duration, both a duration and --default, neither, dpop without a verb', async () => {
    const created = await runCliJson<PolicyJson>(['create', '--name', 'usage', '--store', store], { env });
    for (const args of [
      ['create', '--name', 'bad', '--token-lifetime', '15 minutes'],
      ['token-lifetime', 'set', created.clientId, '15m', '--default'],
      ['token-lifetime', 'set', created.clientId],
      ['token-lifetime', 'set', created.clientId, '1w'],
      ['dpop', created.clientId],
    ]) {
      const run = await runCli([...args, '--store', store], { env });
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout).toBe('');
    }
  });
});
