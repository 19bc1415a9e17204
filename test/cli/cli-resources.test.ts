/**
 * The `service-accounts` command line and resources (RFC 8707 resource indicators), run as a child
 * process: `create --resource` (repeatable), `list` showing them, `resources set` replacing them
 * (`--none` clearing them), and exit code 2 for a refused resource (invalid input) and a usage error.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliJson } from '../helpers/run-cli.js';

interface CreatedJson {
  clientId: string;
  resources: string[];
}
interface ListedJson {
  clientId: string;
  resources: string[];
}

let dir: string;
let store: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sa-cli-resources-'));
  store = `sqlite:${join(dir, 'cli.db')}`;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('service-accounts CLI: resources', { timeout: 60_000 }, () => {
  it('create --resource (repeatable) gives the account those resources; list shows them; resources set replaces them', async () => {
    const created = await runCliJson<CreatedJson>([
      'create', '--name', 'billing-exporter', '--resource', 'https://billing.example.com', '--resource', 'reports', '--store', store,
    ]);
    expect(created.resources).toEqual(['https://billing.example.com', 'reports']);
    const listed = await runCliJson<ListedJson[]>(['list', '--store', store]);
    expect(listed.find((a) => a.clientId === created.clientId)?.resources).toEqual(['https://billing.example.com', 'reports']);

    const set = await runCliJson(['resources', 'set', created.clientId, '--resource', 'reports', '--store', store]);
    expect(set).toEqual({ clientId: created.clientId, resources: ['reports'] });
    const text = await runCli(['resources', 'set', created.clientId, '--none', '--store', store]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/server's audience/);
    const after = await runCliJson<ListedJson[]>(['list', '--store', store]);
    expect(after.find((a) => a.clientId === created.clientId)?.resources).toEqual([]);
  });

  it('list shows resources in text too', async () => {
    await runCliJson(['create', '--name', 'reporting', '--resource', 'urn:example:reports', '--store', store]);
    const run = await runCli(['list', '--store', store]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/resources:\s+urn:example:reports/);
  });

  // RFC 8707 §2: a resource is an absolute URI that "MUST NOT include a fragment component".
  it('refuses a resource with a fragment: exit 2 (invalid input), one line on stderr naming the rule', async () => {
    const run = await runCli(['create', '--name', 'bad', '--resource', 'https://billing.example.com/#x', '--store', store]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/absolute URI without fragment/);
  });

  it('resources set needs --resource or --none, not both: exit 2', async () => {
    const created = await runCliJson<CreatedJson>(['create', '--name', 'usage', '--store', store]);
    for (const args of [[], ['--none', '--resource', 'a']]) {
      const run = await runCli(['resources', 'set', created.clientId, ...args, '--store', store]);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      // It names the command typed, not an option: "resources set: ...", never "--resource set: ...".
      expect(run.stderr).toBe('service-accounts: resources set: give --resource (one or more times) or --none, not both\n');
    }
  });
});
