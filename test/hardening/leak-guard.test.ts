/**
 * The secret-leak guard itself (test/helpers/leak-guard.ts, installed in every test file by
 * test/setup/leak-guard.ts). Issue 6 point 6: "a test scans every log line, audit event and response
 * produced by a full test run for secret values and hashes and finds none". A scan that cannot fail
 * proves nothing, so this file plants leaks on each channel and checks the guard reports each one,
 * names the channel and the line, and keeps the secret itself out of its report; then it clears
 * them, so the file's own final check passes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { createTestApp, TEST_HS256_KEY } from '../helpers/create-app.js';
import { leakGuard } from '../helpers/leak-guard.js';
import { runCli, runCliJson } from '../helpers/run-cli.js';

const guard = leakGuard();
const dir = mkdtempSync(join(tmpdir(), 'esa-leak-guard-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the secret-leak guard', () => {
  it('knows every secret value, pre-hash and bcrypt hash a test app creates, and the signing key', async () => {
    const { sa, store } = createTestApp();
    const created = await sa.admin.createAccount({ name: 'guarded' });
    const added = await sa.admin.addSecret(created.clientId);
    const hashes = (await store.findAccount(created.clientId))!.secrets.map((s) => s.hash);
    expect(hashes).toHaveLength(2);
    for (const value of [created.secret.value, added.value]) {
      expect(guard.knows(value)).toBe(true);
      expect(guard.knows(value.slice(22))).toBe(true);
      expect(guard.knows(createHash('sha256').update(value).digest('base64'))).toBe(true);
    }
    // Hashes are learnt from bcrypt itself, whichever API made them.
    for (const hash of hashes) expect(guard.knows(hash)).toBe(true);
    expect(guard.knows(TEST_HS256_KEY)).toBe(true);
    await sa.close();
  });

  // Issue 6 point 6: every response, log line and audit event is scanned.
  it('reports a secret, its random part, a pre-hash or a hash in a response, a console line or a stdout write, with the line but not the secret', async () => {
    const { app, sa, store, events } = createTestApp();
    const account = await sa.admin.createAccount({ name: 'leaky' });
    const value = account.secret.value;
    const hash = (await store.findAccount(account.clientId))!.secrets[0]!.hash;
    app.get('/leak/body', (_req, res) => res.json({ oops: value.slice(22) }));
    app.get('/leak/header', (_req, res) => res.set('x-debug', hash).json({}));
    guard.takeFindings(); // start clean

    await request(app).get('/leak/body').expect(200);
    await request(app).get('/leak/header').expect(200);
    console.info(`debug: pre-hash ${createHash('sha256').update(value).digest('base64')}`);
    process.stdout.write(`debug: secret ${value}\n`);
    // An admin error message is scanned too (operators paste secrets where IDs belong).
    await sa.admin.disableAccount(value).catch(() => undefined);
    // The audit events of a test app are captured (the library redacts what it echoes, so no finding).
    await request(app).post('/oauth/token').type('form').send({ grant_type: 'client_credentials', client_id: value, client_secret: value }).expect(401);
    await new Promise((resolve) => setImmediate(resolve));
    expect(events.length).toBeGreaterThan(0);
    expect(guard.captured['audit']).toBeGreaterThan(0);

    const findings = guard.takeFindings();
    const by = (channel: RegExp, what: RegExp) => findings.filter((f) => channel.test(f.channel) && what.test(f.what));
    expect(by(/^response/, /random part of a secret/)).not.toHaveLength(0);
    expect(by(/^response/, /bcrypt hash/)).not.toHaveLength(0);
    expect(by(/^console\.info$/, /pre-hash/)).not.toHaveLength(0);
    expect(by(/^process\.stdout$/, /secret value/)).not.toHaveLength(0);
    expect(by(/audit|admin/, /./)).toEqual([]);
    for (const f of findings) {
      expect(f.line).not.toContain(value.slice(22));
      expect(f.line).not.toContain(hash);
    }
    expect(findings.find((f) => f.channel === 'process.stdout' && /secret value/.test(f.what))?.line).toMatch(/^debug: secret \[secret value \(admin createAccount\)\]$/);
    await sa.close();
  });

  it('reports a secret-shaped value or a bcrypt hash it was never told about', () => {
    const stranger = `esas_${'A'.repeat(16)}_${'b'.repeat(50)}`;
    guard.capture('console.log', `token request for ${stranger}`);
    guard.capture('response', `{"hash":"$2b$10$${'x'.repeat(53)}"}`);
    const findings = guard.takeFindings();
    expect(findings.map((f) => f.what)).toEqual(['something shaped like a secret', 'something shaped like a bcrypt hash']);
  });

  it('catches a secret printed just before it was recorded (an event emitted while it was being created)', () => {
    const late = `esas_${'C'.repeat(16)}_${'d'.repeat(50)}`;
    guard.capture('audit event', `{"random":"${late.slice(22)}"}`);
    expect(guard.takeFindings()).toEqual([]);
    guard.recordSecret(late, 'test');
    expect(guard.takeFindings()).toEqual([expect.objectContaining({ channel: 'audit event', what: 'random part of a secret (test)' })]);
  });

  // CONTRACT §4: "A secret's value is shown once, at creation, and never again (not by list, not in logs)".
  it('lets the CLI print a secret once, at creation, and reports it anywhere after', async () => {
    const store = `sqlite:${join(dir, 'cli.db')}`;
    const created = await runCliJson<{ clientId: string; secret: { value: string } }>(['create', '--name', 'cli-guarded', '--store', store]);
    expect(guard.takeFindings()).toEqual([]);
    expect(guard.knows(created.secret.value)).toBe(true);
    const list = await runCli(['list', '--json', '--store', store]);
    expect(list.code).toBe(0);
    expect(guard.takeFindings()).toEqual([]);

    // Simulated: a command that is not `create` printing it, or `create` printing it twice, or a hash.
    guard.checkChildOutput('service-accounts list', `secret ${created.secret.value}`, '', { createsSecrets: false });
    guard.checkChildOutput('service-accounts create', `{"value":"${created.secret.value}"}`, '', { createsSecrets: true });
    const fresh = `esas_${'E'.repeat(16)}_${'f'.repeat(50)}`;
    guard.checkChildOutput('service-accounts create', `${fresh}\n${fresh}`, `hash $2b$10$${'y'.repeat(53)}`, { createsSecrets: true });
    const findings = guard.takeFindings();
    expect(findings.map((f) => f.channel)).toEqual([
      'service-accounts list (stdout)',
      'service-accounts create (stdout)',
      'service-accounts create (stdout)',
      'service-accounts create (stderr)',
    ]);
  });
});

describe('the secret-leak guard on a long-running child (the example server)', () => {
  // CONTRACT §5: "provisions a demo account and prints its client ID and secret once".
  it('allows the demo secret in its provisioning banner only', () => {
    const demo = `esas_${'G'.repeat(16)}_${'h'.repeat(50)}`;
    const banner = [
      'Provisioned a demo service account "demo" (scopes: jobs:write).',
      `  client secret: ${demo}`,
      'The secret is shown this once and never again: copy it now.',
      'Get a token:',
      `  curl -s -u 'esa_x:${demo}' -d grant_type=client_credentials http://localhost:3000/oauth/token`,
    ].join('\n');
    guard.checkChildOutput('example server', `${banner}\nListening on http://localhost:3000\n`, '', { createsSecrets: true, creationBlockLines: 4 });
    expect(guard.takeFindings()).toEqual([]);
    const again = `esas_${'J'.repeat(16)}_${'k'.repeat(50)}`;
    guard.checkChildOutput('example server', `${banner.split(demo).join(again)}\nListening\naudit token.issued {"secret":"${again}"}\n`, '', { createsSecrets: true, creationBlockLines: 4 });
    expect(guard.takeFindings()).toEqual([expect.objectContaining({ channel: 'example server (stdout)', line: expect.stringMatching(/^audit token\.issued/) })]);
  });
});
