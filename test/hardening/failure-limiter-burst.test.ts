/**
 * CONTRACT §2, 429 row: "with a limit of N failures a minute, the first N failures get 401 and every
 * attempt after them, right or wrong, gets 429 until the window passes" — under concurrency. Every
 * attempt that needs bcrypt is counted before its bcrypt work and given back if it succeeds, so a burst
 * sent at once cannot all pass the limit and run bcrypt. Decided (docs/security.md, "Concurrent
 * attempts"): an attempt still in flight counts as a failure until it is decided, so while N are
 * undecided every further attempt, right or wrong, gets 429; repeat clients (verified without bcrypt)
 * are never counted in advance. Run in memory and, with REDIS_URL, on Redis.
 */
import Redis from 'ioredis';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { FailureLimitOptions } from '../../src/index.js';
import { generateSecret } from '../../src/credentials/generate-credentials.js';
import { createTestApp } from '../helpers/create-app.js';
import { GatedStore } from '../helpers/gated-store.js';
import { json, listen, redisUrl, testKeyPrefix, tokenRequest, type LiveServer, type RawResponse } from './helpers.js';
import { heldBcrypt } from '../helpers/held-bcrypt.js';

// bcrypt compares counted, and held until released (test/helpers/held-bcrypt.ts).
vi.mock('bcrypt', async (importOriginal) => (await import('../helpers/held-bcrypt.js')).withHeldCompares(await importOriginal()));
const bcrypt = heldBcrypt;

const grant = { grant_type: 'client_credentials' };
const from = (address: string) => ({ 'x-forwarded-for': address });
const statusCounts = (results: RawResponse[]): Record<number, number> =>
  results.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});

function expect429(res: RawResponse): void {
  expect(res.status).toBe(429);
  expect(json(res)).toEqual({ error: 'too_many_requests', error_description: expect.any(String) });
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
}

function describeBurst(name: string, limit: (o: { max: number; windowSeconds: number }) => FailureLimitOptions) {
  describe(name, () => {
    let close: (() => Promise<void>) | undefined;
    afterEach(async () => {
      bcrypt.release();
      await close?.();
      close = undefined;
    });

    async function setup(max: number, accounts = 1, store?: GatedStore) {
      const failureLimit = limit({ max, windowSeconds: 60 });
      // A client still connecting is answered 503 (never a pass): wait until it is ready.
      if (failureLimit.redis) await (failureLimit.redis as Redis).ping();
      const { app, sa } = createTestApp({ failureLimit, ...(store ? { store } : {}) });
      app.set('trust proxy', true);
      const created = [];
      for (let i = 0; i < accounts; i++) created.push(await sa.admin.createAccount({ name: `burst-${i}` }));
      const server = await listen(app);
      close = async () => {
        await server.close();
        await sa.close();
      };
      return { sa, server, accounts: created };
    }

    const request = (server: LiveServer, clientId: string, secret: string, address: string) =>
      tokenRequest(server, { ...grant, client_id: clientId, client_secret: secret }, from(address));

    it('200 wrong secrets at once: the first 10 get 401, the rest and the right secret 429, bcrypt runs 10 times', async () => {
      const { sa, server, accounts } = await setup(10);
      const { clientId, secret: remembered } = accounts[0]!;
      // A repeat client: verified once with bcrypt, then without it.
      expect((await request(server, clientId, remembered.value, '10.30.9.1')).status).toBe(200);
      const firstTime = await sa.admin.addSecret(clientId);
      bcrypt.compares = 0;
      bcrypt.hold();
      let answered = 0;
      // Well-formed secrets (the checksum holds), so each one that is let through costs a bcrypt compare.
      const wrong = Array.from({ length: 200 }, (_, i) =>
        request(server, clientId, generateSecret().value, `10.31.${i >> 8}.${i & 255}`).then((r) => {
          answered++;
          return r;
        }),
      );
      // 190 are refused at once; 10 are in flight, their secret checks held undecided.
      await vi.waitFor(() => expect(answered).toBe(190), { timeout: 10_000, interval: 20 });
      // While they are undecided, the right secret is refused too (a new one, and a repeat client's).
      expect429(await request(server, clientId, firstTime.value, '10.32.0.1'));
      expect429(await request(server, clientId, remembered.value, '10.32.0.2'));
      expect(bcrypt.compares).toBeLessThanOrEqual(10);
      bcrypt.release();
      const results = await Promise.all(wrong);
      expect(statusCounts(results)).toEqual({ 401: 10, 429: 190 });
      for (const r of results) if (r.status === 429) expect429(r);
      expect(bcrypt.compares).toBe(10);
      // The window has not passed: still 429 for the right secret, without bcrypt.
      expect429(await request(server, clientId, firstTime.value, '10.32.0.3'));
      expect(bcrypt.compares).toBe(10);
    });

    it('gives a success its count back: successes in between never use up the budget', async () => {
      const { server, accounts } = await setup(3, 5);
      const [first] = accounts;
      const wrong = () => request(server, first!.clientId, generateSecret().value, '10.33.0.1');
      expect((await wrong()).status).toBe(401);
      expect((await wrong()).status).toBe(401);
      // Five first-time successes (bcrypt each) from the same address, one after another.
      for (const a of accounts) expect((await request(server, a.clientId, a.secret.value, '10.33.0.1')).status).toBe(200);
      expect((await wrong()).status).toBe(401);
      expect429(await wrong());
    });

    it('more than N first-time clients at once from one address: the excess gets 429 while the first N are checked', async () => {
      const { server, accounts } = await setup(2, 3);
      bcrypt.hold();
      const first = accounts.slice(0, 2).map((a) => request(server, a.clientId, a.secret.value, '10.34.0.1'));
      await vi.waitFor(() => expect(bcrypt.compares).toBeGreaterThanOrEqual(2), { timeout: 10_000, interval: 20 });
      expect429(await request(server, accounts[2]!.clientId, accounts[2]!.secret.value, '10.34.0.1'));
      bcrypt.release();
      expect((await Promise.all(first)).map((r) => r.status)).toEqual([200, 200]);
      // Both successes gave their count back: the third client gets in now.
      expect((await request(server, accounts[2]!.clientId, accounts[2]!.secret.value, '10.34.0.1')).status).toBe(200);
    });

    it('never refuses a burst of repeat clients: they are verified without bcrypt and not counted in advance', async () => {
      const { server, accounts } = await setup(2, 1);
      const { clientId, secret } = accounts[0]!;
      expect((await request(server, clientId, secret.value, '10.35.0.1')).status).toBe(200);
      bcrypt.compares = 0;
      const results = await Promise.all(Array.from({ length: 30 }, () => request(server, clientId, secret.value, '10.35.0.1')));
      expect(statusCounts(results)).toEqual({ 200: 30 });
      expect(bcrypt.compares).toBe(0);
    });

    // docs/security.md, "Concurrent attempts": repeat clients are never counted in advance, also while
    // their account is read again (here: a rotation through this instance dropped the cached entry).
    it('never refuses a burst of repeat clients while their account is read again from a slow store', async () => {
      const store = new GatedStore();
      const { sa, server, accounts } = await setup(2, 1, store);
      const { clientId, secret } = accounts[0]!;
      expect((await request(server, clientId, secret.value, '10.36.0.1')).status).toBe(200);
      await sa.admin.addSecret(clientId); // the rotation's new secret: the cached account is dropped
      bcrypt.compares = 0;
      const readsBefore = store.findCalls;
      store.holding = true;
      let answered = 0;
      const burst = Array.from({ length: 12 }, () =>
        request(server, clientId, secret.value, '10.36.0.1').then((r) => {
          answered++;
          return r;
        }),
      );
      const [read] = await store.heldReads(1);
      // Counted in advance, all but 2 would now be answered 429 while the read is held; give them the
      // chance: every body has been read, then many turns of the event loop.
      await vi.waitFor(() => expect(server.bodiesRead()).toBe(1 + 12), { timeout: 10_000, interval: 5 });
      for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect(answered).toBe(0);
      read!.release();
      expect(statusCounts(await Promise.all(burst))).toEqual({ 200: 12 });
      expect(store.findCalls - readsBefore).toBe(1); // one read, shared by the whole burst
      expect(bcrypt.compares).toBe(0);
    });

    it('counts a once-verified secret that was revoked since as any other attempt: 401 twice, then 429', async () => {
      const { sa, server, accounts } = await setup(2, 1);
      const { clientId, secret } = accounts[0]!;
      expect((await request(server, clientId, secret.value, '10.37.0.1')).status).toBe(200);
      await sa.admin.revokeSecret(clientId, secret.id);
      bcrypt.compares = 0;
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await request(server, clientId, secret.value, '10.37.0.1')).status);
      expect(statuses).toEqual([401, 401, 429]);
      expect(bcrypt.compares).toBe(2);
    });
  });
}

describeBurst('concurrent attempts, failure limiter in memory', (o) => o);

const url = redisUrl('the failure limiter under concurrency');
if (!url) {
  describe.skip('concurrent attempts, failure limiter on Redis (REDIS_URL not set)', () => {
    it('needs Redis', () => {});
  });
} else {
  const prefix = testKeyPrefix();
  const clients: Redis[] = [];
  afterAll(async () => {
    const admin = new Redis(url, { maxRetriesPerRequest: 1 });
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await admin.quit();
    await Promise.all(clients.map((c) => c.quit()));
  });
  describeBurst('concurrent attempts, failure limiter on Redis (ioredis)', (o) => {
    const redis = new Redis(url, { keyPrefix: prefix, maxRetriesPerRequest: 1 });
    redis.on('error', () => {});
    clients.push(redis);
    return { ...o, redis };
  });
}
