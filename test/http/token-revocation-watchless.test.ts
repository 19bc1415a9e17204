/**
 * A store with a token deny-list but no `watch` (a custom store that cannot announce changes): two
 * instances share it, and a token revoked at instance 2 is refused by instance 1 once its copy of the
 * deny-list is older than 500 ms (docs/revocation-and-introspection.md, "How fast a revocation takes
 * effect": "With a store that cannot announce changes at all, the copy is read again at most every
 * 500 ms while tokens are being checked").
 */
import { performance } from 'node:perf_hooks';
import request from 'supertest';
import { expect, it, vi } from 'vitest';
import { MemoryAccountStore, type RevokedTokenRecord, type RevokeTokenOptions, type RevokeTokenResult } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { WatchlessStore } from '../helpers/watchless-store.js';
import { basicHeader, issueToken } from '../helpers/tokens.js';

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
  const shared = new MemoryAccountStore();
  const oneStore = new WatchlessDenyListStore(shared);
  const one = createTestApp({ store: oneStore });
  const two = createTestApp({ store: new WatchlessDenyListStore(shared) });
  const account = await two.sa.admin.createAccount({ name: 'procurement-portal' });
  const token = await issueToken(one.app, account.clientId, account.secret.value);
  const whoami = () => request(one.app).get('/api/whoami').set('Authorization', `Bearer ${token}`);
  expect((await whoami()).status).toBe(200);

  await request(two.app).post('/oauth/revoke').set('Authorization', basicHeader(account.clientId, account.secret.value)).type('form').send({ token }).expect(200);
  const revokedAt = performance.now();
  const readsBefore = oneStore.reads;
  let requests = 0;
  await vi.waitFor(
    async () => {
      requests++;
      expect((await whoami()).status).toBe(401);
    },
    { timeout: 1000, interval: 5 },
  );
  const took = performance.now() - revokedAt;
  // Far fewer reads of the list than requests: one per 500 ms at most (plus one in flight at the edge).
  expect(oneStore.reads - readsBefore).toBeLessThanOrEqual(Math.ceil(took / 500) + 1);
  expect(requests).toBeGreaterThan(oneStore.reads - readsBefore);
});
