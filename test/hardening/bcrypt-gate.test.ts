/**
 * bcrypt work is bounded (issue 6): a flood of wrong secrets can neither exhaust libuv's thread pool
 * nor delay the bearer check of other requests. At most 2 compares run at once and a bounded queue
 * waits; past it the token endpoint answers 503 temporarily_unavailable with Retry-After at once.
 * The bearer check never uses bcrypt. The queue is shared fairly (a freed slot goes to the address
 * with the fewest compares running, a share per address and per client ID): a flood from one address does not starve others' first
 * requests. The gate's own order is unit-tested in test/unit/bcrypt-gate.test.ts.
 */
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { BcryptGate, DEFAULT_BCRYPT_CONCURRENCY, DEFAULT_BCRYPT_QUEUE } from '../../src/secrets/bcrypt-gate.js';
import { generateSecret } from '../../src/credentials/generate-credentials.js';
import type { AuditEvent } from '../../src/index.js';
import { SecretChecksBusyError, toOAuthError } from '../../src/errors.js';
import { createTestApp } from '../helpers/create-app.js';
import { json, listen, tokenRequest, type LiveServer, type RawResponse } from './helpers.js';

/** The flood tests wait for dozens of real compares: on a loaded machine that is slow, never wrong. */
const FLOOD_TEST_TIMEOUT_MS = 60_000;

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('BcryptGate', () => {
  it('runs at most `concurrency` tasks, queues `queue` more in order, and refuses the rest at once with 503 + Retry-After', async () => {
    const gate = new BcryptGate({ concurrency: 2, queue: 2 });
    const started: number[] = [];
    const releases = Array.from({ length: 4 }, deferred);
    const runs = releases.map((d, i) =>
      gate.run(async () => {
        started.push(i);
        await d.promise;
        return i;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect(gate.running).toBe(2);
    expect(gate.queued).toBe(2);
    const refused = gate.run(async () => 99);
    await expect(refused).rejects.toBeInstanceOf(SecretChecksBusyError);
    const err = toOAuthError(await refused.catch((e: unknown) => e));
    expect(err.status).toBe(503);
    expect(err.headers['Retry-After']).toBe('1');

    releases[1]!.resolve();
    await runs[1];
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2]); // FIFO: the first queued task got the freed slot
    releases[0]!.resolve();
    releases[2]!.resolve();
    releases[3]!.resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3]);
    expect(gate.running).toBe(0);
    expect(gate.queued).toBe(0);
  });

  it('frees the slot when a task throws', async () => {
    const gate = new BcryptGate({ concurrency: 1, queue: 0 });
    await expect(gate.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await gate.run(async () => 'ok')).toBe('ok');
  });

  it('defaults to 2 in flight and a queue of 256', () => {
    expect(DEFAULT_BCRYPT_CONCURRENCY).toBe(2);
    expect(DEFAULT_BCRYPT_QUEUE).toBe(256);
  });
});

describe('a flood of wrong secrets at the token endpoint', () => {
  let server: LiveServer | undefined;
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await server?.close();
    await close?.();
  });

  it('fills the bcrypt queue, is refused 503 past it, and requireBearer keeps answering while bcrypt work is pending', async () => {
    // Cost 10 (~50 ms a compare on an idle core): 34 admitted compares at 2 at a time keep bcrypt busy
    // for most of a second, far longer than the bearer checks below take.
    const queue = 32;
    const { app, sa } = createTestApp({ secretHashRounds: 10, failureLimit: false, maxQueuedSecretChecks: queue });
    // Each flooding request from its own address (X-Forwarded-For): no address's share is the limit, the queue is.
    app.set('trust proxy', true);
    close = () => sa.close();
    const account = await sa.admin.createAccount({ name: 'flooded' });
    server = await listen(app);
    const live = server;
    const ok = await tokenRequest(live, { grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });
    expect(ok.status).toBe(200);
    const token = (json(ok) as { access_token: string }).access_token;

    // A well-formed secret that is not the account's: each costs one (dummy) bcrypt compare.
    const wrong = generateSecret().value;
    const flood = DEFAULT_BCRYPT_CONCURRENCY + queue + 8;
    let answered401 = 0;
    const refusals: RawResponse[] = [];
    let notifyRefusals: () => void = () => {};
    const allRefused = new Promise<void>((resolve) => (notifyRefusals = resolve));
    const floodDone = Promise.all(
      Array.from({ length: flood }, (_, i) =>
        tokenRequest(live, { grant_type: 'client_credentials', client_id: `esa_flood${i}`, client_secret: wrong }, { 'x-forwarded-for': `203.0.113.${i + 1}` }).then((res) => {
          if (res.status === 401) answered401++;
          if (res.status === 503) {
            refusals.push(res);
            notifyRefusals();
          }
          return res;
        }),
      ),
    );

    // Requests past the queue are refused at once, while the admitted ones wait for bcrypt.
    await allRefused;
    expect(answered401).toBeLessThan(DEFAULT_BCRYPT_CONCURRENCY + queue);
    for (const res of refusals) {
      expect(json(res)).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
      expect(res.headers['retry-after']).toBe('1');
    }

    // Protected routes answer while the flood's bcrypt work is still pending.
    const bearer = await Promise.all(
      Array.from({ length: 20 }, () => live.request({ path: '/api/whoami', headers: { authorization: `Bearer ${token}` } })),
    );
    expect(bearer.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(answered401).toBeLessThan(DEFAULT_BCRYPT_CONCURRENCY + queue);

    // A client whose secret was verified before skips bcrypt (pay-bcrypt-once) and still gets a token.
    const again = await tokenRequest(live, { grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });
    expect(again.status).toBe(200);
    expect(answered401).toBeLessThan(DEFAULT_BCRYPT_CONCURRENCY + queue);

    const results = await floodDone;
    // Every request was answered 401 (one compare each) or refused 503; none passed, none got a 500.
    const refused = results.filter((r) => r.status === 503).length;
    expect(refused).toBeGreaterThan(0);
    expect(results.filter((r) => r.status === 401)).toHaveLength(flood - refused);
  }, FLOOD_TEST_TIMEOUT_MS);

  // A flood from one address holds at most its share of the queue, and the first request of a client
  // from another address takes the next turn instead of waiting behind the flood's backlog (or being
  // refused because the flood filled the queue).
  it("serves another address's first request among the next few compares, ahead of the flood's backlog", async () => {
    // Cost 10 (~50 ms a compare): far slower than a request's way to the gate, so the order is the gate's.
    const queue = 32;
    const { app, sa, events } = createTestApp({ secretHashRounds: 10, failureLimit: false, maxQueuedSecretChecks: queue });
    app.set('trust proxy', true);
    close = () => sa.close();
    const legit = await sa.admin.createAccount({ name: 'legit' });
    const isFailure = (e: AuditEvent): boolean => e.type === 'client.authentication_failed';
    // Failures audited when the legitimate request reached the server: its place in line counts from
    // there, not from when the client sent it (the client shares this process's event loop with the
    // flood's 40-odd connections, so its request can reach the server a compare or two later).
    let failedBefore: number | undefined;
    const front = express();
    front.use((req, _res, next) => {
      if (req.headers['x-forwarded-for'] === '198.51.100.7') failedBefore ??= events.filter(isFailure).length;
      next();
    });
    front.use(app);
    server = await listen(front);
    const live = server;

    // From one address, rotating client IDs (so no client ID's share applies): each costs one dummy compare.
    const wrong = generateSecret().value;
    const flood = DEFAULT_BCRYPT_CONCURRENCY + queue + 8;
    let notifyRefused: () => void = () => {};
    const refused = new Promise<void>((resolve) => (notifyRefused = resolve));
    const floodDone = Promise.all(
      Array.from({ length: flood }, (_, i) =>
        tokenRequest(live, { grant_type: 'client_credentials', client_id: `esa_flood${i}`, client_secret: wrong }, { 'x-forwarded-for': '203.0.113.1' }).then((res) => {
          if (res.status === 503) notifyRefused();
          return res;
        }),
      ),
    );
    await refused; // the flooding address cannot queue any more

    const res = await tokenRequest(
      live,
      { grant_type: 'client_credentials', client_id: legit.clientId, client_secret: legit.secret.value },
      { 'x-forwarded-for': '198.51.100.7' },
    );
    expect(res.status).toBe(200);
    const issued = events.findIndex((e) => e.type === 'token.issued');
    // Its place in line: its compare starts when the first of the flood's two running compares ends (the
    // flood has one still running, it none); the other, and one flood compare started after it, may
    // finish before its token is issued.
    expect(failedBefore).toBeDefined();
    expect(events.slice(0, issued).filter(isFailure).length - failedBefore!).toBeLessThanOrEqual(4);

    const results = await floodDone;
    // The flood's backlog was still waiting: most of its admitted compares finished after the token was issued.
    expect(events.slice(issued).filter(isFailure).length).toBeGreaterThanOrEqual(8);
    const statuses = new Set(results.map((r) => r.status));
    expect([...statuses].sort()).toEqual([401, 503]);
  }, FLOOD_TEST_TIMEOUT_MS);
});
