/**
 * What the admin API (and so the CLI) accepts as text and how much of it (docs/configuration.md,
 * "Limits of admin input"): names and client account IDs hold no character that could rewrite a
 * terminal, a log line or a listing; scopes are RFC 6749 §3.3 scope tokens, bounded in number and in
 * length; a client ID argument is bounded before it reaches the store. The CLI's human-readable output
 * escapes what an older store may still hold.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AdminError, type AccountStore } from '../../src/index.js';
import { runCli } from '../../src/cli/main.js';
import { createSqliteAccountStore } from '../../src/sql/index.js';
import { generateClientId, generateSecret } from '../../src/credentials/generate-credentials.js';
import { createTestApp } from '../helpers/create-app.js';
import { ForwardingStore } from '../helpers/forwarding-store.js';
import { MemoryAccountStore } from '../../src/index.js';

async function refusal(call: Promise<unknown>): Promise<AdminError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AdminError);
  expect((err as AdminError).code).toBe('invalid_input');
  return err as AdminError;
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('names and client account IDs are safe to print', () => {
  // C0/C1 controls (U+009B starts a terminal escape sequence, like ESC [), bidirectional overrides and
  // isolates (U+202E shows the rest reversed: Unicode TR9), the line and paragraph separators, and a
  // lone surrogate (not text: UTF-8 cannot encode it).
  const UNSAFE = ['\u0000', '\u0007', '\u001b', '\n', '\u007f', '\u0085', '\u009b', '\u061c', '\u200e', '\u200f', '\u202a', '\u202e', '\u2066', '\u2069', '\u2028', '\u2029', '\ud800', '\udfff'];

  it.each(UNSAFE.map((c) => [`U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`, c]))(
    'refuses %s in a name and in a client account ID, naming the character and not the value',
    async (codePoint, c) => {
      const { sa } = createTestApp();
      for (const input of [{ name: `billing${c}report` }, { name: 'ok', clientAccountId: `acme${c}corp` }]) {
        const err = await refusal(sa.admin.createAccount(input));
        expect(err.message).toMatch(/^(name|clientAccountId) must be 1 to 200 printable characters/);
        expect(err.message).toContain(`(found ${codePoint})`);
        expect(err.message).not.toContain('billing');
        expect(err.message).not.toContain('acme');
      }
      expect(await sa.admin.listAccounts()).toEqual([]);
      await sa.close();
    },
  );

  it('accepts any printable script, emoji sequences included', async () => {
    const { sa } = createTestApp();
    for (const name of ['facturación', 'خدمة الفواتير', 'שירות חיובים', '請求サービス', 'deploy 🚀', 'family 👩‍👩‍👧', 'tab-free  spaces']) {
      expect((await sa.admin.createAccount({ name, clientAccountId: name })).name).toBe(name);
    }
    await sa.close();
  });

  it('`service-accounts list` escapes what an older store still holds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sa-printable-'));
    dirs.push(dir);
    const filename = join(dir, 'old.db');
    const store = createSqliteAccountStore({ filename });
    await store.init?.();
    const secret = generateSecret();
    await store.createAccount({
      clientId: generateClientId(),
      name: 'evil\u009b31m\u001b[2Jname\u202Etxt.exe\u2028\\u{41}',
      clientAccountId: 'acct\r\nforged line',
      scopes: ['jobs:read'],
      createdAt: new Date(),
      secret: { id: secret.id, hash: 'x', createdAt: new Date() },
    });
    await store.close?.();
    let out = '';
    const code = await runCli(['list', '--store', `sqlite:${filename}`], { stdout: (t) => void (out += t), stderr: (t) => void (out += t) });
    expect(code).toBe(0);
    // eslint-disable-next-line no-control-regex
    expect(out.replace(/\n/g, '')).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e\u2028]/);
    expect(out).toContain('"evil\\u{009B}31m\\u{001B}[2Jname\\u{202E}txt.exe\\u{2028}\\\\u{41}"');
    expect(out).toContain('client account:  acct\\u{000D}\\u{000A}forged line');
    // --json prints the stored value as JSON escapes it (a program reads it, not a terminal).
    let json = '';
    await runCli(['list', '--json', '--store', `sqlite:${filename}`], { stdout: (t) => void (json += t), stderr: () => undefined });
    expect((JSON.parse(json) as Array<{ name: string }>)[0]!.name).toBe('evil\u009b31m\u001b[2Jname\u202Etxt.exe\u2028\\u{41}');
  });
});

describe('admin input is bounded', () => {
  // Every token carries its account's scopes in its `scope` claim (RFC 9068 §2.2.3), and a token must
  // fit an Authorization header.
  it('takes 100 scopes of 2,000 characters in all, and refuses 101 scopes or 2,001 characters', async () => {
    const { sa } = createTestApp();
    const hundred = Array.from({ length: 100 }, (_, i) => `scope:${String(i).padStart(3, '0')}`);
    expect((await sa.admin.createAccount({ name: 'a', scopes: hundred })).scopes).toHaveLength(100);
    const long = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, '0')}${'-s'.repeat(48)}:`); // 20 × 99 + 19 spaces = 1,999
    expect((await sa.admin.createAccount({ name: 'b', scopes: [...long.slice(0, 19), `${long[19]}x`] })).scopes.join(' ')).toHaveLength(2000);
    for (const scopes of [[...hundred, 'one-more'], [...long.slice(0, 19), `${long[19]}xy`], Array.from({ length: 101 }, (_, i) => `x${i}`).join(' '), Array.from({ length: 10_000 }, (_, i) => `s${i}`)]) {
      const err = await refusal(sa.admin.createAccount({ name: 'c', scopes }));
      expect(err.message).toBe('scopes must be at most 100 scopes of at most 2000 characters in all (separated by spaces): every token carries them');
    }
    // Repeated scopes count once.
    expect((await sa.admin.createAccount({ name: 'd', scopes: [...hundred, ...hundred] })).scopes).toHaveLength(100);
    await sa.close();
  });

  it('refuses a scope that is no RFC 6749 §3.3 scope token by its position, never repeating it', async () => {
    const { sa } = createTestApp();
    const err = await refusal(sa.admin.createAccount({ name: 'a', scopes: ['jobs:read', 'jobs "write"'] }));
    expect(err.message).toBe('scope 2 is not a scope: use printable ASCII without spaces, quotes or backslashes (RFC 6749 §3.3)');
    await sa.close();
  });

  // CONTRACT §3: an account provisioned without scopes is unrestricted, so scopes that are given but
  // empty (a blank form field, an unset shell variable) must not silently mean "without scopes".
  it('refuses scopes given but empty, so a blank value never makes an account unrestricted', async () => {
    const { sa } = createTestApp();
    for (const scopes of ['', ' ', '   ', [''], ['jobs:read', '']]) {
      const err = await refusal(sa.admin.createAccount({ name: 'blank', scopes }));
      expect(err.code).toBe('invalid_input');
    }
    expect((await sa.admin.listAccounts()).filter((a) => a.name === 'blank')).toEqual([]);
    expect((await sa.admin.createAccount({ name: 'open' })).scopes).toEqual([]); // left out: unrestricted
    await sa.close();
  });

  it('refuses a name or client account ID over 200 characters', async () => {
    const { sa } = createTestApp();
    expect((await sa.admin.createAccount({ name: 'n-'.repeat(100), clientAccountId: 'c.'.repeat(100) })).name).toHaveLength(200);
    await refusal(sa.admin.createAccount({ name: `${'n-'.repeat(100)}n` }));
    await refusal(sa.admin.createAccount({ name: 'ok', clientAccountId: `${'c.'.repeat(100)}c` }));
    await sa.close();
  });

  it('does not send a client ID argument over 256 characters to the store', async () => {
    const lookups: string[] = [];
    class CountingStore extends ForwardingStore {
      override findAccount(clientId: string) {
        lookups.push(clientId);
        return super.findAccount(clientId);
      }
    }
    const store: AccountStore = new CountingStore(new MemoryAccountStore());
    const { sa } = createTestApp({ store });
    await sa.ready();
    lookups.length = 0;
    const huge = 'x'.repeat(1_000_000);
    await expect(sa.admin.addSecret(huge)).rejects.toMatchObject({ code: 'account_not_found' });
    await expect(sa.admin.disableAccount(huge)).rejects.toMatchObject({ code: 'account_not_found' });
    expect(await sa.admin.getAccount(huge)).toBeUndefined();
    expect(lookups).toEqual([]);
    await sa.close();
  });
});

describe('admin.withActor(actor)', () => {
  // docs/admin-api.md: every change is attributed to the acting person; a change must never be made
  // without its audit event, so a malformed actor is refused before anything is changed.
  it('refuses an actor without a non-empty string id and name at once, before any change', async () => {
    const { sa, events } = createTestApp();
    const account = await sa.admin.createAccount({ name: 'kept-enabled' });
    for (const actor of [null, undefined, {}, { id: '', name: 'x' }, { id: 'u1' }, { id: 1, name: 'x' }]) {
      expect(() => sa.admin.withActor(actor as never)).toThrow(TypeError);
    }
    expect((await sa.admin.getAccount(account.clientId))?.enabled).toBe(true);
    await sa.admin.withActor({ id: 'u_1', name: 'Ada' }).disableAccount(account.clientId);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(events.find((e) => e.type === 'account.disabled')).toMatchObject({ actor: { id: 'u_1', name: 'Ada' } });
    await sa.close();
  });
});
