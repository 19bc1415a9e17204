/**
 * bcrypt work is bounded (issue 6): a flood of wrong secrets can neither exhaust libuv's thread pool
 * nor delay the bearer check of other requests. At most 2 compares run at once and a bounded queue
 * waits; past it the token endpoint answers 503 temporarily_unavailable with Retry-After at once.
 * The bearer check never uses bcrypt. The queue is shared fairly (a freed slot goes to the address
 * with the fewest compares running, a share per address and per client ID): a flood from one address does not starve others' first
 * requests. The gate's own order is unit-tested in test/unit/bcrypt-gate.test.ts.
 *
 * The flood's compares are held (test/helpers/held-bcrypt.ts) and let end one at a time, so what is
 * checked is the gate's state and order as the answers show them, never how fast bcrypt is.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BcryptGate, DEFAULT_BCRYPT_CONCURRENCY, DEFAULT_BCRYPT_QUEUE, DEFAULT_BCRYPT_QUEUE_PER_KEY } from '../../src/secrets/bcrypt-gate.js';
import { generateSecret } from '../../src/credentials/generate-credentials.js';
import { SecretChecksBusyError, toOAuthError } from '../../src/errors.js';
import type { ServiceAccounts } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { heldBcrypt } from '../helpers/held-bcrypt.js';
import { json, listen, tokenRequest, type LiveServer, type RawResponse } from './helpers.js';

// bcrypt compares counted, and held until released (test/helpers/held-bcrypt.ts): the flood's
// compares end when the test says so, so the order of events is the gate's, not the machine's.
vi.mock('bcrypt', async (importOriginal) => (await import('../helpers/held-bcrypt.js')).withHeldCompares(await importOriginal()));

/** The answers to a test's requests, in the order they arrived. */
class Answers {
  readonly log: Array<{ readonly label: string; readonly res: RawResponse }> = [];
  #waiting: { count: number; done: () => void } | undefined;

  /** Records the answer to `sent` under `label`; a request that fails fails the wait for it. */
  track(label: string, sent: Promise<RawResponse>): Promise<RawResponse> {
    return sent.then(
      (res) => {
        this.log.push({ label, res });
        if (this.#waiting && this.log.length >= this.#waiting.count) this.#waiting.done();
        return res;
      },
      (error: unknown) => {
        this.log.push({ label, res: { status: 0, headers: {}, text: String(error) } });
        this.#waiting?.done();
        throw error;
      },
    );
  }

  /** Resolves once `count` answers arrived. */
  count(count: number): Promise<void> {
    if (this.log.length >= count) return Promise.resolve();
    return new Promise((done) => (this.#waiting = { count, done }));
  }

  statuses(): number[] {
    return this.log.map(({ res }) => res.status);
  }
}

/**
 * Waits until each of `sent` requests holds a slot, waits in the gate or was answered (with every
 * compare held, none leaves the gate, so the split is final).
 */
async function everyRequestPlaced(sa: ServiceAccounts, answers: Answers, sent: number): Promise<void> {
  await vi.waitFor(
    async () => {
      const { running, queued } = (await sa.health()).secretChecks;
      expect(running + queued + answers.log.length).toBe(sent);
    },
    { timeout: 10_000, interval: 5 },
  );
}

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
    heldBcrypt.release();
    await server?.close();
    await close?.();
    server = undefined;
    close = undefined;
  });

  it('fills the bcrypt queue, is refused 503 past it, and requireBearer keeps answering while bcrypt work is pending', async () => {
    const queue = 32;
    const { app, sa } = createTestApp({ failureLimit: false, maxQueuedSecretChecks: queue });
    // Each flooding request from its own address (X-Forwarded-For): no address's share is the limit, the queue is.
    app.set('trust proxy', true);
    close = () => sa.close();
    const account = await sa.admin.createAccount({ name: 'flooded' });
    server = await listen(app);
    const live = server;
    const ok = await tokenRequest(live, { grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });
    expect(ok.status).toBe(200);
    const token = (json(ok) as { access_token: string }).access_token;

    // A well-formed secret that is not the account's: each costs one (dummy) bcrypt compare, held until released.
    heldBcrypt.compares = 0;
    heldBcrypt.hold();
    const wrong = generateSecret().value;
    const admitted = DEFAULT_BCRYPT_CONCURRENCY + queue;
    const flood = admitted + 8;
    const answers = new Answers();
    const floodDone = Promise.all(
      Array.from({ length: flood }, (_, i) =>
        answers.track('flood', tokenRequest(live, { grant_type: 'client_credentials', client_id: `esa_flood${i}`, client_secret: wrong }, { 'x-forwarded-for': `203.0.113.${i + 1}` })),
      ),
    );

    // Requests past the queue are refused at once, while the admitted ones wait for bcrypt: 2 compares
    // run, `queue` wait, and nothing else was answered.
    await everyRequestPlaced(sa, answers, flood);
    expect(answers.statuses()).toEqual(Array(flood - admitted).fill(503));
    for (const { res } of answers.log) {
      expect(json(res)).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
      expect(res.headers['retry-after']).toBe('1');
    }
    expect(heldBcrypt.compares).toBe(DEFAULT_BCRYPT_CONCURRENCY);
    expect((await sa.health()).secretChecks).toEqual({ running: DEFAULT_BCRYPT_CONCURRENCY, queued: queue, queueLimit: queue });

    // Protected routes answer while every compare of the flood is still held: the bearer check never waits for bcrypt.
    const bearer = await Promise.all(
      Array.from({ length: 20 }, () => live.request({ path: '/api/whoami', headers: { authorization: `Bearer ${token}` } })),
    );
    expect(bearer.map((r) => r.status)).toEqual(Array(20).fill(200));

    // A client whose secret was verified before skips bcrypt (pay-bcrypt-once) and still gets a token.
    const again = await tokenRequest(live, { grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });
    expect(again.status).toBe(200);
    expect(heldBcrypt.compares).toBe(DEFAULT_BCRYPT_CONCURRENCY);
    expect(answers.log).toHaveLength(flood - admitted);

    // Each compare that ends frees one slot, and the next waiting compare takes it: never more than 2 at once.
    for (let done = 1; done <= admitted; done++) {
      heldBcrypt.releaseOldest();
      await answers.count(flood - admitted + done);
      expect(answers.log.at(-1)!.res.status).toBe(401);
      expect(heldBcrypt.compares).toBe(Math.min(DEFAULT_BCRYPT_CONCURRENCY + done, admitted));
      expect(heldBcrypt.held).toBe(Math.min(DEFAULT_BCRYPT_CONCURRENCY, admitted - done));
    }

    // Every request was answered 401 (one compare each) or refused 503; none passed, none got a 500.
    const results = await floodDone;
    expect(results.filter((r) => r.status === 401)).toHaveLength(admitted);
    expect(results.filter((r) => r.status === 503)).toHaveLength(flood - admitted);
  });

  // A flood from one address holds at most its share of the queue, and the first request of a client
  // from another address takes the next turn instead of waiting behind the flood's backlog (or being
  // refused because the flood filled the queue).
  it("serves another address's first request with the next free slot, ahead of the flood's backlog", async () => {
    const queue = 32;
    const { app, sa } = createTestApp({ failureLimit: false, maxQueuedSecretChecks: queue });
    app.set('trust proxy', true);
    close = () => sa.close();
    const legit = await sa.admin.createAccount({ name: 'legit' });
    server = await listen(app);
    const live = server;

    // From one address, rotating client IDs (so no client ID's share applies): each costs one dummy
    // compare, held until released. 2 run, 16 (the address's share) wait, the rest are refused at once.
    heldBcrypt.compares = 0;
    heldBcrypt.hold();
    const wrong = generateSecret().value;
    const flood = DEFAULT_BCRYPT_CONCURRENCY + queue + 8;
    const admitted = DEFAULT_BCRYPT_CONCURRENCY + DEFAULT_BCRYPT_QUEUE_PER_KEY;
    const answers = new Answers();
    const floodDone = Promise.all(
      Array.from({ length: flood }, (_, i) =>
        answers.track('flood', tokenRequest(live, { grant_type: 'client_credentials', client_id: `esa_flood${i}`, client_secret: wrong }, { 'x-forwarded-for': '203.0.113.1' })),
      ),
    );
    await everyRequestPlaced(sa, answers, flood); // the flooding address cannot queue any more
    expect(answers.statuses()).toEqual(Array(flood - admitted).fill(503));
    expect((await sa.health()).secretChecks).toEqual({ running: DEFAULT_BCRYPT_CONCURRENCY, queued: DEFAULT_BCRYPT_QUEUE_PER_KEY, queueLimit: queue });

    // A new client's first request (an existing account), and a client from a third address that
    // mistyped its client ID (an unknown one, like the flood's): both wait in the gate.
    const first = answers.track('legit', tokenRequest(live, { grant_type: 'client_credentials', client_id: legit.clientId, client_secret: legit.secret.value }, { 'x-forwarded-for': '198.51.100.7' }));
    const mistyped = answers.track('mistyped', tokenRequest(live, { grant_type: 'client_credentials', client_id: 'esa_mistyped', client_secret: wrong }, { 'x-forwarded-for': '198.51.100.8' }));
    await vi.waitFor(async () => expect((await sa.health()).secretChecks.queued).toBe(DEFAULT_BCRYPT_QUEUE_PER_KEY + 2), { timeout: 10_000, interval: 5 });
    expect(answers.log).toHaveLength(flood - admitted);

    // Let the compares end one at a time, each in the order it started: the answers come in the order
    // the gate gave out its slots.
    const backlog = answers.log.length;
    for (let done = 1; done <= admitted + 2; done++) {
      heldBcrypt.releaseOldest();
      await answers.count(backlog + done);
    }
    // The new client's compare starts when the first of the flood's two running compares ends (an
    // existing account goes before any unknown client ID), so its token comes third. The mistyped ID
    // waits for its address's turn, not for the flood's backlog: the next slot goes to the address
    // with the fewest compares running, round-robin among equals.
    expect(answers.log.slice(backlog).map(({ label, res }) => `${label} ${res.status}`)).toEqual([
      'flood 401',
      'flood 401',
      'legit 200',
      'flood 401',
      'mistyped 401',
      ...Array(admitted - 3).fill('flood 401'),
    ]);
    expect(heldBcrypt.compares).toBe(admitted + 2);

    const results = await floodDone;
    expect(results.filter((r) => r.status === 401)).toHaveLength(admitted);
    expect(results.filter((r) => r.status === 503)).toHaveLength(flood - admitted);
    expect((await first).status).toBe(200);
    expect((await mistyped).status).toBe(401);
  });
});
