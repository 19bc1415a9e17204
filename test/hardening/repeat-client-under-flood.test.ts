/**
 * docs/security.md, "Fair shares under a flood": a client whose secret was verified recently "gets its
 * token even while the gate is full". A remembered secret only spares bcrypt; whether it is still live
 * comes from the account record, which is read again when the cache dropped it. So neither a change to
 * the account (its cache entry dropped) nor the change feed reporting that anything may have changed
 * (every entry dropped) makes a repeat client wait for, or be refused by, the full bcrypt queue: with
 * and without the failure limiter. A revoked secret is refused at once all the same.
 *
 * The flood's compares are held (bcrypt never finishes until released), so the queue stays full for
 * the whole test and the order of events is the test's, not the machine's.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryAccountStore, type AccountChangeListener, type ChangeFeedState, type WatchOptions } from '../../src/index.js';
import { generateSecret } from '../../src/credentials/generate-credentials.js';
import { createTestApp } from '../helpers/create-app.js';
import { ForwardingStore } from '../helpers/forwarding-store.js';
import { json, listen, tokenRequest, type LiveServer, type RawResponse } from './helpers.js';
import { heldBcrypt } from '../helpers/held-bcrypt.js';

// bcrypt compares counted, and held until released (test/helpers/held-bcrypt.ts).
vi.mock('bcrypt', async (importOriginal) => (await import('../helpers/held-bcrypt.js')).withHeldCompares(await importOriginal()));
const bcrypt = heldBcrypt;

/** A memory store whose change feed the test can report as failing and back, as a flood's event-loop lag does. */
class ResettableFeedStore extends ForwardingStore {
  #states: Array<(state: ChangeFeedState) => void> = [];
  constructor(readonly memory = new MemoryAccountStore()) {
    super(memory);
  }
  async watch(listener: AccountChangeListener, options?: WatchOptions): Promise<() => Promise<void>> {
    if (options?.onStateChange) this.#states.push(options.onStateChange);
    return this.memory.watch(listener);
  }
  /** The feed fails (the cache drops every entry: anything may have changed) and recovers. */
  reset(): void {
    for (const report of this.#states) {
      report('failing');
      report('push');
    }
  }
}

const QUEUE = 4;
const grant = { grant_type: 'client_credentials' };

describe.each([
  ['without the failure limiter', false as const],
  ['with the failure limiter', { max: 10, windowSeconds: 60 }],
])('a repeat client while the bcrypt queue is full, %s', (_name, failureLimit) => {
  let server: LiveServer | undefined;
  let close: (() => Promise<void>) | undefined;
  let flooding: Array<Promise<RawResponse>> = [];
  afterEach(async () => {
    bcrypt.release();
    await Promise.all(flooding);
    flooding = [];
    await server?.close();
    await close?.();
  });

  async function setUp() {
    const store = new ResettableFeedStore();
    const { app, sa } = createTestApp({ store, failureLimit, maxQueuedSecretChecks: QUEUE });
    app.set('trust proxy', true);
    close = () => sa.close();
    const account = await sa.admin.createAccount({ name: 'repeat' });
    server = await listen(app);
    const live = server;
    const repeat = (): Promise<RawResponse> =>
      tokenRequest(live, { ...grant, client_id: account.clientId, client_secret: account.secret.value }, { 'x-forwarded-for': '198.51.100.7' });
    // Verified once by bcrypt: remembered from now on.
    expect((await repeat()).status).toBe(200);

    // The flood: unknown client IDs from many addresses, every compare held, until one is refused (the queue is full).
    bcrypt.hold();
    const wrong = generateSecret().value;
    let refusedOnce: () => void = () => {};
    const full = new Promise<void>((resolve) => (refusedOnce = resolve));
    const flood: Array<Promise<RawResponse>> = [];
    for (let i = 0; i < 2 + QUEUE + 4; i++) {
      const sent = tokenRequest(live, { ...grant, client_id: `esa_flood${i}`, client_secret: wrong }, { 'x-forwarded-for': `203.0.113.${i + 1}` });
      flood.push(sent.then((res) => (res.status === 503 && refusedOnce(), res)));
    }
    flooding = flood;
    await full;
    return { sa, store, account, repeat, flood };
  }

  it('gets every token after its account was changed (its cache entry dropped), without waiting for bcrypt', async () => {
    const { sa, account, repeat } = await setUp();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      await sa.admin.disableAccount(account.clientId).then(() => sa.admin.enableAccount(account.clientId)); // each drops the entry
      statuses.push((await repeat()).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
  });

  it('gets every token while the change feed fails and recovers during the flood', async () => {
    const { store, repeat } = await setUp();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      store.reset();
      statuses.push(...(await Promise.all([repeat(), repeat(), repeat()])).map((r) => r.status));
    }
    expect(statuses).toEqual(Array(15).fill(200));
  });

  it('is refused once its secret is revoked, though it was remembered', async () => {
    const { sa, account, repeat } = await setUp();
    await sa.admin.revokeSecret(account.clientId, account.secret.id);
    const refused = repeat();
    bcrypt.release(); // the revoked secret is checked as any other attempt: one compare, then 401
    const res = await refused;
    expect(res.status).toBe(401);
    expect(json(res)).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
  });
});
