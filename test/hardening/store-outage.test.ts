/**
 * CONTRACT §2 "the store is unreachable → 503 temporarily_unavailable, nothing is issued" and §3
 * "the store is unreachable → 503, never lets the request through". A store that throws or hangs
 * (never settles) is answered within `storeTimeout`, and service resumes without a restart once the
 * store answers again.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryAccountStore, type AccountChangeListener, type AccountRecord, type AccountStore } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { json, listen, tokenRequest, UnreliableStore, type LiveServer, type RawResponse } from './helpers.js';

/**
 * Issue 6 point 5: the 503 comes "within a bounded, configurable time (default ≤ 2 s)", and
 * docs/configuration.md: `storeTimeout` is the "Milliseconds a store call may take before the request
 * is answered `503 temporarily_unavailable`". That deadline is the store call's timer, so the tests
 * move its clock instead of measuring wall time on a busy machine: only `setTimeout` and
 * `clearTimeout` are faked (sockets, bcrypt and the event loop are real). Once a request waits on a
 * hung store, it is still unanswered 1 ms before `storeTimeout` (so the deadline, not luck, answers
 * it) and answered 503 when `storeTimeout` has passed; a store that throws is answered with no time
 * passing at all.
 */
function fakeDeadlines(): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
}

/** One turn of the (real) event loop, so an answer already decided is seen as such. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Sends one request while `store` fails or hangs, and checks that it is answered 503 when the text above says. */
async function expect503AtDeadline(server: LiveServer, store: UnreliableStore, send: () => Promise<RawResponse>, storeTimeout: number): Promise<void> {
  const callsBefore = store.callsWhileDown;
  const answer = send();
  await store.calledWhileDown(callsBefore + 1); // the request reached the store: the call's deadline runs
  if (store.mode === 'hang') {
    await vi.advanceTimersByTimeAsync(storeTimeout - 1);
    await nextTurn();
    expect(server.unanswered()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
  }
  // Fake time stands still from here: an answer that needed more of it would not have been sent.
  await nextTurn();
  expect(server.unanswered()).toBe(0);
  expect503(await answer);
}

function expect503(res: RawResponse): void {
  expect(res.status).toBe(503);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(json(res)).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
  // The store's own error (host names, credentials) never reaches the client.
  expect(res.text).not.toMatch(/ECONNREFUSED|hunter2|10\.0\.0\.5|timed out|findAccount/);
  expect(JSON.stringify(res.headers)).not.toMatch(/hunter2|ECONNREFUSED/);
}

const servers: LiveServer[] = [];
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await Promise.all(closers.splice(0).map((c) => c()));
});

describe('the token endpoint when the account store fails or hangs', () => {
  for (const mode of ['fail', 'hang'] as const) {
    it(`answers 503 when the store ${mode === 'fail' ? 'throws' : 'never answers'}, issues nothing, and recovers without a restart`, async () => {
      const store = new UnreliableStore();
      const { app, sa, events } = createTestApp({ store, storeTimeout: 200 });
      closers.push(() => sa.close());
      const account = await sa.admin.createAccount({ name: 'outage' });
      const server = await listen(app);
      servers.push(server);
      const right = { grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value };

      fakeDeadlines();
      store.mode = mode;
      // The responses arrive while the store is still down: the deadline answered them.
      await expect503AtDeadline(server, store, () => tokenRequest(server, right), 200);
      await expect503AtDeadline(server, store, () => tokenRequest(server, { ...right, client_id: 'esa_unknownunknownunknown1' }), 200);
      expect(events.some((e) => e.type === 'token.issued')).toBe(false);

      store.mode = 'ok';
      const res = await tokenRequest(server, right);
      expect(res.status).toBe(200);
      expect(json(res)).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    });
  }

  it('does not count a 503 as a failed authentication', async () => {
    const store = new UnreliableStore();
    const { app, sa } = createTestApp({ store, storeTimeout: 200, failureLimit: { max: 1 } });
    closers.push(() => sa.close());
    const account = await sa.admin.createAccount({ name: 'outage-limit' });
    const server = await listen(app);
    servers.push(server);
    const right = { grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value };
    store.mode = 'fail';
    for (let i = 0; i < 3; i++) expect503(await tokenRequest(server, right));
    store.mode = 'ok';
    expect((await tokenRequest(server, right)).status).toBe(200);
  });
});

describe('requireBearer when the account store fails or hangs', () => {
  it('answers 503 and never lets the request through, then admits again once the store answers', async () => {
    const shared = new MemoryAccountStore();
    // Instance A issues the token; instance B (same keyring, same data, a store that can fail) checks it.
    const a = createTestApp({ store: shared });
    closers.push(() => a.sa.close());
    const account = await a.sa.admin.createAccount({ name: 'bearer-outage' });
    const serverA = await listen(a.app);
    servers.push(serverA);
    const issued = await tokenRequest(serverA, { grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });
    const token = (json(issued) as { access_token: string }).access_token;

    const unreliable = new UnreliableStore(shared);
    const b = createTestApp({ store: unreliable, storeTimeout: 200 });
    closers.push(() => b.sa.close());
    let reached = 0;
    b.app.get('/api/counted', b.sa.requireBearer(), (_req, res) => {
      reached++;
      res.json({ ok: true });
    });
    const serverB = await listen(b.app);
    servers.push(serverB);
    const call = () => serverB.request({ path: '/api/counted', headers: { authorization: `Bearer ${token}` } });

    fakeDeadlines();
    unreliable.mode = 'fail';
    await expect503AtDeadline(serverB, unreliable, call, 200);
    unreliable.mode = 'hang';
    await expect503AtDeadline(serverB, unreliable, call, 200);
    await expect503AtDeadline(serverB, unreliable, () => serverB.request({ path: '/api/whoami', headers: { authorization: `Bearer ${token}` } }), 200);
    expect(reached).toBe(0);

    unreliable.mode = 'ok';
    const res = await call();
    expect(res.status).toBe(200);
    expect(reached).toBe(1);
  });
});

// Issue 6 point 5: "a store that throws or hangs gives 503 temporarily_unavailable within a bounded,
// configurable time (default ≤ 2 s)". The same, with the storeTimeout a host gets when it sets none.
describe('outages with the default storeTimeout', () => {
  it('defaults storeTimeout to 2000 ms and answers a hung store 503 within it (token endpoint and requireBearer)', async () => {
    const store = new UnreliableStore();
    const { app, sa } = createTestApp({ store });
    closers.push(() => sa.close());
    expect(sa.config.storeTimeout).toBe(2000);
    const storeTimeout = sa.config.storeTimeout;
    const account = await sa.admin.createAccount({ name: 'default-timeout' });
    const server = await listen(app);
    servers.push(server);
    const right = { grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value };
    const token = (json(await tokenRequest(server, right)) as { access_token: string }).access_token;
    // A change made through this instance drops its cached entry at once, so the bearer check below
    // must ask the store (rather than answer from the cache the token request just filled).
    await sa.admin.disableAccount(account.clientId);
    await sa.admin.enableAccount(account.clientId);

    fakeDeadlines();
    store.mode = 'hang';
    await expect503AtDeadline(server, store, () => tokenRequest(server, right), storeTimeout);
    await expect503AtDeadline(server, store, () => server.request({ path: '/api/whoami', headers: { authorization: `Bearer ${token}` } }), storeTimeout);

    store.mode = 'ok';
    expect((await tokenRequest(server, right)).status).toBe(200);
  });
});

/**
 * A store whose queries can fail or hang while its change feed (`watch`) stays alive, as a SQL store
 * whose query pool is stuck while PostgreSQL's LISTEN connection still delivers, or another instance
 * still writes through a healthy connection. `announce()` plays the feed's "everything may have
 * changed" ('*'), which the SQL feed sends when it cannot be read.
 */
class StoreWithLiveFeed extends UnreliableStore implements AccountStore {
  readonly #listeners = new Set<AccountChangeListener>();
  /** findAccount calls made while the store was not 'ok'. */
  lookupsWhileDown = 0;

  constructor(readonly memory: MemoryAccountStore = new MemoryAccountStore()) {
    super(memory);
  }

  override findAccount(clientId: string): Promise<AccountRecord | undefined> {
    if (this.mode !== 'ok') this.lookupsWhileDown++;
    return super.findAccount(clientId);
  }

  async watch(listener: AccountChangeListener): Promise<() => Promise<void>> {
    this.#listeners.add(listener);
    const stop = await this.memory.watch(listener);
    return async () => {
      this.#listeners.delete(listener);
      await stop();
    };
  }

  announce(clientId: string): void {
    for (const listener of this.#listeners) listener(clientId);
  }
}

// CONTRACT §3: "the store is unreachable → 503, never lets the request through" and "A secret
// revocation or an account disable takes effect on every server sharing the store within 1 second".
// What the instance does while the store hangs but the account's status is cached and fresh (its
// change feed alive): it answers from the cache, as it would with a healthy store, because a fresh
// entry is exactly as trustworthy (every change is announced and drops it). The moment the status is
// no longer known (an announcement dropped the entry, or the feed said '*'), the request needs the
// store, and a hung store means 503, never a pass. docs/security.md "Outages fail closed" and
// docs/stores.md "Revocation across instances" describe this.
describe('when the store hangs but the account is cached and fresh (change feed alive)', () => {
  const storeTimeout = 300;

  async function setup() {
    const store = new StoreWithLiveFeed();
    const { app, sa, events } = createTestApp({ store, storeTimeout });
    closers.push(() => sa.close());
    const kept = await sa.admin.createAccount({ name: 'cached-kept' });
    const revoked = await sa.admin.createAccount({ name: 'cached-revoked' });
    const server = await listen(app);
    servers.push(server);
    const form = (a: typeof kept) => ({ grant_type: 'client_credentials', client_id: a.clientId, client_secret: a.secret.value });
    const issue = async (a: typeof kept) => {
      const res = await tokenRequest(server, form(a));
      expect(res.status).toBe(200);
      return (json(res) as { access_token: string }).access_token;
    };
    const whoami = (token: string) => server.request({ path: '/api/whoami', headers: { authorization: `Bearer ${token}` } });
    // Issuing and one protected call leave both accounts cached (statusCacheTtl, default 30 s, since the store announces changes).
    const tokens = { kept: await issue(kept), revoked: await issue(revoked) };
    expect((await whoami(tokens.kept)).status).toBe(200);
    expect((await whoami(tokens.revoked)).status).toBe(200);
    return { store, sa, events, server, kept, revoked, tokens, form, whoami };
  }

  it('keeps admitting the cached account (without asking the store) and answers 503 as soon as an announced change drops it', async () => {
    const { store, server, kept, revoked, tokens, form, whoami } = await setup();
    fakeDeadlines();
    store.mode = 'hang';

    // Fresh cache: answered at once from memory, as with a healthy store; the store is not asked.
    // (A 200 while the store hangs, and no lookup counted below, show the store was not asked.)
    const admitted = await whoami(tokens.kept);
    expect(admitted.status).toBe(200);
    expect(json(admitted)).toMatchObject({ clientId: kept.clientId, name: 'cached-kept' });
    // The token endpoint reads the same cache: the right secret (checked against the cached hash) still gets a token.
    expect((await tokenRequest(server, form(kept))).status).toBe(200);
    expect(store.lookupsWhileDown).toBe(0);

    // Another instance, whose connection works, revokes a secret: the feed announces it, this instance
    // drops the entry, and with its store hung it can no longer tell: 503, never a 200.
    await store.memory.revokeSecret(revoked.clientId, revoked.secret.id, new Date());
    await expect503AtDeadline(server, store, () => whoami(tokens.revoked), storeTimeout);
    await expect503AtDeadline(server, store, () => tokenRequest(server, form(revoked)), storeTimeout);
    expect(store.lookupsWhileDown).toBeGreaterThan(0);
    // The other account's entry was not touched by that announcement.
    expect((await whoami(tokens.kept)).status).toBe(200);

    // The store answers again: the revocation is seen, the other account still passes. No restart.
    store.mode = 'ok';
    const refused = await whoami(tokens.revoked);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toMatch(/error="invalid_token", error_description="[^"]*revoked/);
    expect((await whoami(tokens.kept)).status).toBe(200);
  });

  it("answers 503 for every account once the feed announces '*' (it may have missed changes)", async () => {
    const { store, server, kept, tokens, form, whoami } = await setup();
    fakeDeadlines();
    store.mode = 'fail';
    expect((await whoami(tokens.kept)).status).toBe(200);
    store.announce('*');
    await expect503AtDeadline(server, store, () => whoami(tokens.kept), storeTimeout);
    await expect503AtDeadline(server, store, () => whoami(tokens.revoked), storeTimeout);
    await expect503AtDeadline(server, store, () => tokenRequest(server, form(kept)), storeTimeout);
    store.mode = 'ok';
    expect((await whoami(tokens.kept)).status).toBe(200);
  });
});
