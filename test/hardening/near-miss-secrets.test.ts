/**
 * A secret typed where an ID belongs, whole or not, is never written where logs are made of
 * (docs/security.md, "What is never logged"): a presented client ID is shown only when it has the
 * form of a client ID (`esa_` and 24 letters or digits), otherwise as malformed with a fingerprint;
 * a presented secret ID only in the form of a secret ID. Cut short, without its prefix, upper-cased,
 * it can still be completed into the real secret (the checksum can be recomputed, the prefix and the
 * case guessed). Each of the seven forms goes into every field a caller fills (the token endpoint's
 * parameters and Basic credentials, every admin call, the CLI's arguments and options), and every
 * audit event, operational event, response, error message and CLI output line is then scanned.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { AdminError, MemoryAccountStore, type OperationalEvent } from '../../src/index.js';
import { runCli as runCliInProcess } from '../../src/cli/main.js';
import { generateSecret } from '../../src/credentials/generate-credentials.js';
import { createTestApp } from '../helpers/create-app.js';
import { ForwardingStore } from '../helpers/forwarding-store.js';

const secret = generateSecret().value;
/** The seven forms of the outside review: each can be completed into `secret`. */
const NEAR_MISSES: Record<string, string> = {
  'checksum cut': secret.slice(0, -6),
  'one character cut': secret.slice(0, -1),
  'prefix dropped': secret.slice('esas_'.length),
  'only its random part': secret.slice('esas_'.length + 17),
  'upper-cased': secret.toUpperCase(),
  'whole secret': secret,
  'with whitespace': ` ${secret}\n`,
};
const FORMS = Object.entries(NEAR_MISSES);

/** A driver that quotes the value it was given in its error message, as some do. */
class QuotingStore extends ForwardingStore {
  failing = false;
  override findAccount(clientId: string) {
    return this.failing ? Promise.reject(new Error(`lookup of "${clientId}" failed: connection reset`)) : super.findAccount(clientId);
  }
}

/** Every 12-character piece of the secret's random part (its ID is public: `list` shows it), in lower case. */
const PIECES = Array.from({ length: 50 - 11 }, (_, i) => secret.slice(22 + i, 22 + i + 12).toLowerCase());

function expectNothingOfTheSecret(where: string, text: string): void {
  const lower = text.toLowerCase();
  const piece = PIECES.find((p) => lower.includes(p));
  expect(piece, `${where} holds part of the secret: ${text.slice(0, 300)}`).toBeUndefined();
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('near-miss secrets are never logged', () => {
  it('the token endpoint shows a presented client ID only in the form of a client ID, otherwise a fingerprint', async () => {
    const operational: OperationalEvent[] = [];
    const store = new QuotingStore(new MemoryAccountStore());
    const { app, sa, events } = createTestApp({ store, failureLimit: false, storeTimeout: 200, onEvent: (e) => void operational.push(e) });
    const live = await sa.admin.createAccount({ name: 'live' });
    const captured: string[] = [];
    const post = async (fields: Record<string, string>, basic?: [string, string]) => {
      const req = request(app).post('/oauth/token').type('form');
      if (basic) req.set('authorization', `Basic ${Buffer.from(`${encodeURIComponent(basic[0])}:${encodeURIComponent(basic[1])}`).toString('base64')}`);
      const res = await req.send(fields);
      captured.push(`${res.status} ${JSON.stringify(res.headers)} ${res.text}`);
      return res;
    };
    const grant = { grant_type: 'client_credentials' };
    // A driver's message quoting what it was asked for reaches the operational event and the health report.
    store.failing = true;
    // A client ID holding a control character (the newline of 'with whitespace') can name no account:
    // it is answered 401 without a store read, so it cannot reach the store's messages either.
    for (const [, form] of FORMS) expect((await post({ ...grant, client_id: form, client_secret: secret })).status).toBe(/[\u0000-\u001f]/.test(form) ? 401 : 503);
    captured.push(JSON.stringify(await sa.health()));
    store.failing = false;
    for (const [, form] of FORMS) {
      await post({ ...grant, client_id: form, client_secret: live.secret.value });
      await post({ ...grant, client_id: form, client_secret: form });
      await post({ ...grant, client_id: form });
      await post(grant, [form, live.secret.value]);
      await post({ ...grant, client_id: live.clientId, client_secret: form });
      await post({ ...grant, client_id: live.clientId, client_secret: live.secret.value, scope: form });
      await post({ grant_type: form, client_id: live.clientId, client_secret: live.secret.value });
    }
    await vi.waitFor(() => {
      expect(events.filter((e) => e.type === 'client.authentication_failed').length).toBeGreaterThanOrEqual(FORMS.length * 4);
      expect(operational.some((e) => e.type === 'store.unavailable')).toBe(true);
    }, { timeout: 5000 });

    for (const line of [...captured, ...events.map((e) => JSON.stringify(e)), ...operational.map((e) => JSON.stringify(e))]) {
      expectNothingOfTheSecret('a response or an event', line);
    }
    // Not vacuous: each malformed client ID was audited, with a fingerprint that tells the values apart.
    const malformed = events.flatMap((e) => (e.type === 'client.authentication_failed' && e.malformedClientId !== undefined ? [e.malformedClientId] : []));
    expect(malformed.length).toBeGreaterThanOrEqual(FORMS.length * 3);
    expect(new Set(malformed).size).toBe(FORMS.length);
    for (const fingerprint of malformed) expect(fingerprint).toMatch(/^[0-9a-f]{8}$/);
    // A well-formed client ID is still shown as it is.
    expect(events).toContainEqual(expect.objectContaining({ type: 'client.authentication_failed', clientId: live.clientId }));
    await sa.close();
  });

  it('admin errors quote an ID only in the form of an ID', async () => {
    const { sa, events } = createTestApp();
    const live = await sa.admin.createAccount({ name: 'live' });
    const messages: string[] = [];
    const refused = async (call: () => Promise<unknown>) => {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AdminError);
      messages.push(`${(err as AdminError).message} ${JSON.stringify(err)}`);
    };
    for (const [, form] of FORMS) {
      await refused(() => sa.admin.addSecret(form));
      await refused(() => sa.admin.disableAccount(form));
      await refused(() => sa.admin.enableAccount(form));
      await refused(() => sa.admin.revokeSecret(form, live.secret.id));
      await refused(() => sa.admin.revokeSecret(live.clientId, form));
      await refused(() => sa.admin.createAccount({ name: form }));
      await refused(() => sa.admin.createAccount({ name: 'ok', clientAccountId: form }));
      await refused(() => sa.admin.createAccount({ name: 'ok', scopes: form }));
      await refused(() => sa.admin.createAccount({ name: 'ok', scopes: ['jobs:read', form] }));
      expect(await sa.admin.getAccount(form)).toBeUndefined();
    }
    for (const message of messages) expectNothingOfTheSecret('an admin error', message);
    expect(messages.filter((m) => m.includes('a malformed value (fingerprint '))).toHaveLength(FORMS.length * 5);
    // A well-formed unknown client ID is still quoted, so an operator sees the typo.
    await expect(sa.admin.addSecret('esa_' + 'Z'.repeat(24))).rejects.toThrow(`No service account has client ID "esa_${'Z'.repeat(24)}"`);
    for (const event of events) expectNothingOfTheSecret('an audit event', JSON.stringify(event));
    expect((await sa.admin.listAccounts()).map((a) => a.name)).toEqual(['live']);
    await sa.close();
  });

  it('the CLI prints none of them, in its messages or commander’s', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sa-near-miss-'));
    dirs.push(dir);
    const store = `sqlite:${join(dir, 'cli.db')}`;
    const output: string[] = [];
    const cli = async (args: string[]) => {
      const io = { stdout: (text: string) => void output.push(text), stderr: (text: string) => void output.push(text) };
      return runCliInProcess([...args, '--store', store], io);
    };
    for (const [name, form] of FORMS) {
      for (const args of [
        ['secret', 'add', form],
        ['secret', 'revoke', 'esa_' + 'Z'.repeat(24), form],
        ['disable', form],
        ['enable', form],
        ['create', '--name', form],
        ['create', '--name', 'ok', '--client-account', form],
        ['create', '--name', 'ok', '--scope', form],
        ['list', `--${form.trim()}`],
        ['list', form],
      ]) {
        expect(await cli(args), `${name}: ${args[0]} ${args[1]}`).not.toBe(0);
      }
    }
    expect(await cli(['list'])).toBe(0);
    for (const text of output) expectNothingOfTheSecret('CLI output', text);
  });
});
