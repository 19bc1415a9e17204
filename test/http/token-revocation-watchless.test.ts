/**
 * A store with a token deny-list but no `watch` (a custom store that cannot announce changes): two
 * instances share it, and a token revoked at instance 2 is refused by instance 1 once its copy of the
 * deny-list is older than 500 ms (docs/revocation-and-introspection.md, "How fast a revocation takes
 * effect": "With a store that cannot announce changes at all, the copy is read again at most every
 * 500 ms while tokens are being checked").
 */
import request from 'supertest';
import { afterEach, expect, it, vi } from 'vitest';
import { MemoryAccountStore, type RevokedTokenRecord, type RevokeTokenOptions, type RevokeTokenResult } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { WatchlessStore } from '../helpers/watchless-store.js';
import { basicHeader, issueToken } from '../helpers/tokens.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** No `watch`, but the deny-list of the memory store underneath; counts its reads. */
class WatchlessDenyListStore extends WatchlessStore {
  reads = 0;
  revokeToken(record: RevokedTokenRecord, options?: RevokeTokenOptions): Promise<RevokeTokenResult> {
    return this.inner.revokeToken(record, options);
  }
  listRevokedTokens(now: Date): Promise<RevokedTokenRecord[]> {
    this.reads++;
    return this.inner.listRevokedTokens(now);
  }
}

it('a token revoked at another instance is refused within 1 s, reading the deny-list at most every 500 ms', async () => {
  // The instances' monotonic clock (`performance`, which their caches measure the copy's age on), held
  // still by a spy and moved by hand: however long a request takes, the copy ages only when told to.
  // A whole number of milliseconds, so that `now - listedAt` below is exact (performance.now() has a
  // fraction, and with it `(t + 500) - t` can come out as 499.99999999999994).
  let now = 1_000_000;
  vi.spyOn(performance, 'now').mockImplementation(() => now);
  const shared = new MemoryAccountStore();
  const oneStore = new WatchlessDenyListStore(shared);
  const one = createTestApp({ store: oneStore });
  const two = createTestApp({ store: new WatchlessDenyListStore(shared) });
  const account = await two.sa.admin.createAccount({ name: 'procurement-portal' });
  const token = await issueToken(one.app, account.clientId, account.secret.value); // instance 1 starts: its copy is read
  const listedAt = now;
  expect(oneStore.reads).toBe(1);
  const whoami = () => request(one.app).get('/api/whoami').set('Authorization', `Bearer ${token}`);
  expect((await whoami()).status).toBe(200);

  now = listedAt + 300;
  await request(two.app).post('/oauth/revoke').set('Authorization', basicHeader(account.clientId, account.secret.value)).type('form').send({ token }).expect(200);
  // Instance 1's copy is 499 ms old: trusted, not read again, however many tokens are checked.
  now = listedAt + 499;
  for (let i = 0; i < 3; i++) expect((await whoami()).status).toBe(200);
  expect(oneStore.reads).toBe(1);
  // 500 ms old (200 ms after the revocation): the next check reads the list once, and refuses the token.
  now = listedAt + 500;
  expect((await whoami()).status).toBe(401);
  expect(oneStore.reads).toBe(2);
  // Known as revoked from then on: no read per request.
  now = listedAt + 1200;
  for (let i = 0; i < 3; i++) expect((await whoami()).status).toBe(401);
  expect(oneStore.reads).toBe(2);
});
