/**
 * The admin API hashes new secrets one at a time per instance, whoever asks (docs/security.md,
 * "Bounded bcrypt work"): bcrypt runs on libuv's thread pool, where the token endpoint keeps at most
 * two compares at once, so a burst of creates through the admin router (one client account's
 * administrator, say) holds at most one more thread and never takes the ones a client's token
 * request needs. Counted on the `bcrypt` package itself, so every hash the library makes is seen.
 * Waiting hashes take turns by client account, so one client account's burst does not hold back
 * another's creation (the order itself: test/unit/secret-hasher.test.ts).
 */
import { describe, expect, it, vi } from 'vitest';
import { createAdminRouterApp } from '../helpers/admin-router-app.js';
import { call } from '../helpers/admin-call.js';

const hashes = { running: 0, most: 0, total: 0 };

vi.mock('bcrypt', async (importOriginal) => {
  const bcrypt = await importOriginal<typeof import('bcrypt') & { default: typeof import('bcrypt') }>();
  const hash = async (data: string, rounds: number): Promise<string> => {
    hashes.running++;
    hashes.most = Math.max(hashes.most, hashes.running);
    hashes.total++;
    try {
      return await bcrypt.default.hash(data, rounds);
    } finally {
      hashes.running--;
    }
  };
  const mocked = { ...bcrypt.default, hash };
  return { ...mocked, default: mocked };
});

describe('admin hashing', () => {
  const { app, admin } = createAdminRouterApp();

  it('a burst of creates and secret adds from two client accounts hashes one secret at a time', async () => {
    const first = await call(app, 'POST', '/admin/service-accounts', 'acme', { name: 'acme-first', scopes: ['x'] });
    expect(first.status).toBe(201);
    hashes.most = 0;
    hashes.total = 0;
    const answers = await Promise.all([
      ...Array.from({ length: 12 }, (_, i) => call(app, 'POST', '/admin/service-accounts', i % 2 === 0 ? 'acme' : 'globex', { name: `burst-${i}`, scopes: ['x'] })),
      ...Array.from({ length: 4 }, () => call(app, 'POST', `/admin/service-accounts/${first.body.clientId}/secrets`, 'acme', {})),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual(Array(16).fill(201));
    expect(hashes.total).toBe(16);
    expect(hashes.most).toBe(1);
  });

  it("another client account's creation waits for one hash of a burst, not the whole burst", async () => {
    const finished: string[] = [];
    const create = (clientAccountId: string, i: number) =>
      admin.createAccount({ name: `turns-${clientAccountId}-${i}`, clientAccountId, scopes: ['x'] }).then(() => void finished.push(clientAccountId));
    await Promise.all([...Array.from({ length: 8 }, (_, i) => create('acme', i)), create('globex', 0)]);
    expect(finished).toHaveLength(9);
    expect(finished.indexOf('globex')).toBeLessThanOrEqual(2);
  });
});
