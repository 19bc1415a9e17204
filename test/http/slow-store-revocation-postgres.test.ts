/**
 * Revocation while the store is slow, on real PostgreSQL (needs POSTGRES_URL): two instances share
 * one schema; instance 1's account read runs on the database at once but its answer is held (a slow
 * network path), the secret is revoked through instance 2, and a request reaching instance 1 after it
 * heard of the revocation (LISTEN/NOTIFY or the feed poll) must be refused.
 *
 * Why not make the read slow with `LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE`: under READ COMMITTED,
 * a statement that waited for that lock takes its snapshot after getting it, so the delayed read
 * returns the revoked secret anyway and the race cannot happen; and the admin API's revoke itself
 * reads `accounts` first, so it would wait for the lock too.
 */
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CreatedAccount } from '../../src/index.js';
import { createPostgresAccountStore, type SqlAccountStore } from '../../src/sql/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';
import { GatedStore } from '../helpers/gated-store.js';
import { raceChange } from '../helpers/race-change.js';
import { claimsFor, signHs256 } from '../helpers/tokens.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';

withPostgres('revocation while PostgreSQL is slow', (connectionString) => {
  describe('revocation while PostgreSQL is slow', () => {
    const schemas = usePostgresSchemas(connectionString);
    let schema: string;
    let stores: SqlAccountStore[];
    let gated: GatedStore;
    let one: ReturnType<typeof createTestApp>;
    let two: ReturnType<typeof createTestApp>;
    let account: CreatedAccount;

    beforeEach(async () => {
      schema = schemas.name('esa_race_');
      stores = [createPostgresAccountStore({ connectionString, schema }), createPostgresAccountStore({ connectionString, schema })];
      gated = new GatedStore(stores[0]);
      one = createTestApp({ store: gated });
      two = createTestApp({ store: stores[1] });
      account = await two.sa.admin.createAccount({ name: 'procurement-portal' });
    });
    afterEach(async () => {
      await Promise.all([one.sa.close(), two.sa.close()]);
      await schemas.drop(schema);
    });

    // Docs (security.md, "Revocation while the store is slow") and CONTRACT §3: "A secret revocation or
    // an account disable takes effect on every server sharing the store within 1 second".
    it('a token presented on instance 1 after it heard of a revocation made on instance 2 gets 401 invalid_token', async () => {
      const nowSeconds = Math.floor(one.clock.now().getTime() / 1000);
      const token = signHs256(claimsFor(account.clientId, account.secret.id, nowSeconds), one.sa.config.signingKey.kid);
      const whoami = () => request(one.app).get('/api/whoami').set('Authorization', `Bearer ${token}`).then((res) => res);
      const { first, second } = await raceChange({
        store: gated,
        first: whoami,
        change: () => two.sa.admin.revokeSecret(account.clientId, account.secret.id),
        changeSeen: () => vi.waitFor(() => expect(gated.announced).toContain(account.clientId), { timeout: 5000 }),
        second: whoami,
      });
      expectOAuthError(second, 401, 'invalid_token', { challenge: /The access token was revoked/ });
      expect(first.status).toBe(200); // it arrived before the revocation: see the module comment of account-cache.ts
    });
  });
});
