/**
 * CONTRACT §2: unknown client ID, wrong secret, revoked secret and disabled account are
 * "indistinguishable in body, status and timing". Timing is measured by scripts/enumeration-timing.ts
 * (wall-clock ratios do not belong in `npm test`); this test checks the cause of equal timing
 * deterministically: each cause costs exactly one bcrypt compare against a hash of the configured cost,
 * and all give the same status, headers and body. Also: secret-shaped text is redacted from logs.
 */
import bcrypt from 'bcrypt';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { generateSecret } from '../../src/credentials/generate-credentials.js';
import { redactSecrets } from '../../src/credentials/redact-secrets.js';
import { createTestApp } from '../helpers/create-app.js';
import { withLastCharChanged } from '../helpers/tokens.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the four invalid_client causes cost the same', () => {
  it('each runs exactly one bcrypt compare at the configured cost and gives the same answer', async () => {
    const { app, sa } = createTestApp({ failureLimit: false, secretHashRounds: 5 });
    const live = await sa.admin.createAccount({ name: 'live' });
    const revoked = await sa.admin.createAccount({ name: 'revoked' });
    await sa.admin.addSecret(revoked.clientId);
    await sa.admin.revokeSecret(revoked.clientId, revoked.secret.id);
    const disabled = await sa.admin.createAccount({ name: 'disabled' });
    await sa.admin.disableAccount(disabled.clientId);
    await sa.ready();

    const cases = {
      unknownClient: { client_id: 'esa_' + 'Z'.repeat(24), client_secret: generateSecret().value },
      wrongSecret: { client_id: live.clientId, client_secret: generateSecret().value },
      revokedSecret: { client_id: revoked.clientId, client_secret: revoked.secret.value },
      disabledAccount: { client_id: disabled.clientId, client_secret: disabled.secret.value },
    };
    const compare = vi.spyOn(bcrypt, 'compare');
    const answers = new Set<string>();
    for (const [name, fields] of Object.entries(cases)) {
      // Twice each: a second attempt must not be cheaper (failures never fill the pay-once cache).
      for (let i = 0; i < 2; i++) {
        compare.mockClear();
        const res = await request(app).post('/oauth/token').type('form').send({ grant_type: 'client_credentials', ...fields });
        expect(compare, name).toHaveBeenCalledTimes(1);
        const hash = compare.mock.calls[0]![1] as unknown as string;
        expect(hash, name).toMatch(/^\$2[aby]\$05\$/);
        const { date: _date, etag: _etag, ...headers } = res.headers as Record<string, string>;
        answers.add(JSON.stringify({ status: res.status, headers, body: res.text }));
      }
    }
    expect(answers.size).toBe(1);
    expect(JSON.parse([...answers][0]!)).toMatchObject({ status: 401 });
    await sa.close();
  });

  it('refuses a malformed secret (bad shape or checksum) before any store or bcrypt work, with the same answer', async () => {
    const { app, sa } = createTestApp({ failureLimit: false });
    const live = await sa.admin.createAccount({ name: 'live' });
    await sa.ready();
    const compare = vi.spyOn(bcrypt, 'compare');
    const tampered = withLastCharChanged(live.secret.value);
    const res = await request(app).post('/oauth/token').type('form').send({ grant_type: 'client_credentials', client_id: live.clientId, client_secret: tampered });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed' });
    expect(compare).not.toHaveBeenCalled();
    await sa.close();
  });

  // A wrong secret typed or made up by hand fails the checksum: without this wait its answer would come
  // in a fraction of a compare's time, unlike the four causes above.
  it('answers a malformed secret only after the time of one compare, without running one', async () => {
    const { app, sa } = createTestApp({ failureLimit: false, secretHashRounds: 8 });
    const live = await sa.admin.createAccount({ name: 'live' });
    await sa.ready(); // makes the dummy hash, which times one compare
    // What one compare at this cost takes here, measured as the server measures it.
    const startedAt = performance.now();
    await bcrypt.hash('x', 8);
    const oneCompareMs = performance.now() - startedAt;
    const compare = vi.spyOn(bcrypt, 'compare');
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    const timer = vi.spyOn(globalThis, 'setTimeout');
    try {
      let answered = false;
      const pending = request(app)
        .post('/oauth/token')
        .type('form')
        .send({ grant_type: 'client_credentials', client_id: live.clientId, client_secret: 'wrong-secret' })
        .then((res) => ((answered = true), res));
      // The request reaches its wait (turns of the event loop, not time, pass here).
      for (let turn = 0; turn < 10_000 && vi.getTimerCount() === 0 && !answered; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect(answered).toBe(false);
      expect(vi.getTimerCount()).toBe(1);
      // The wait is one compare's time: not 0, not NaN, not a multiple of it (a paused machine can
      // lengthen either measurement, so the bounds are loose).
      const delay = timer.mock.calls.at(-1)![1]!;
      expect(delay).toBeGreaterThan(oneCompareMs / 10);
      expect(delay).toBeLessThan(oneCompareMs * 10 + 1000);
      await vi.advanceTimersByTimeAsync(delay - 1);
      expect(answered).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      const res = await pending;
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed' });
      expect(compare).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
      await sa.close();
    }
  });
});

describe('redactSecrets', () => {
  it('replaces every secret-shaped substring and leaves the rest', () => {
    const a = generateSecret().value;
    const b = generateSecret().value;
    expect(redactSecrets(`id ${a} and "${b}".`)).toBe('id esas_[REDACTED] and "esas_[REDACTED]".');
    expect(redactSecrets('esa_0123456789abcdefghijklmn')).toBe('esa_0123456789abcdefghijklmn');
  });
});
