/**
 * A token on the deny-list stays refused when an instance's wall clock steps back (an NTP correction
 * of a clock that ran ahead, a machine whose hardware clock was set to local time at boot). The
 * instance forgets a deny-list entry once its own clock says the token expired (or never reads it,
 * when its clock is already past that at start-up); once the clock is set right, the token verifies
 * again, so the entry must be read again rather than the token admitted. Two instances share one
 * PostgreSQL schema; instance 2's clock is moved by hand.
 */
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CreatedAccount } from '../../src/index.js';
import { createPostgresAccountStore } from '../../src/sql/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { basicHeader, issueToken } from '../helpers/tokens.js';
import { withPostgres } from '../helpers/with-postgres.js';

const TWO_HOURS = 2 * 3600;

withPostgres('deny-list and a wall clock that steps back', (connectionString) => {
  describe('a token revoked at one instance, on an instance whose clock steps back', () => {
    const schemas = usePostgresSchemas(connectionString);
    let schema: string;
    let one: ReturnType<typeof createTestApp>;
    let two: ReturnType<typeof createTestApp>;
    let client: CreatedAccount;

    beforeEach(async () => {
      schema = schemas.name('esa_clockstep_');
      one = createTestApp({ store: createPostgresAccountStore({ connectionString, schema }) });
      two = createTestApp({ store: createPostgresAccountStore({ connectionString, schema }) });
      await one.sa.ready();
      client = await one.sa.admin.createAccount({ name: 'procurement-portal' });
    });
    afterEach(async () => {
      await Promise.all([one.sa.close(), two.sa.close()]);
      await schemas.drop(schema);
    });

    const whoami = (app: typeof one.app, token: string) => request(app).get('/api/whoami').set('Authorization', `Bearer ${token}`);
    const revoke = (token: string) =>
      request(one.app).post('/oauth/revoke').set('Authorization', basicHeader(client.clientId, client.secret.value)).type('form').send({ token }).expect(200);

    it('refuses it after the clock is set back, when the instance started with its clock hours ahead', async () => {
      const token = await issueToken(one.app, client.clientId, client.secret.value);
      await revoke(token);
      expect((await whoami(one.app, token)).status).toBe(401);
      // Instance 2 starts with its clock two hours ahead: to it, the token has long expired.
      two.clock.advance(TWO_HOURS);
      await two.sa.ready();
      expect((await whoami(two.app, token)).status).toBe(401);
      // NTP sets the clock right: the token verifies again, and it is still revoked.
      two.clock.advance(-TWO_HOURS);
      const res = await whoami(two.app, token);
      expect(res.status, res.text).toBe(401);
      expect(res.headers['www-authenticate']).toContain('invalid_token');
    });

    it('refuses it after the clock jumps ahead past its expiry, drops entries, and is set back', async () => {
      await two.sa.ready();
      const token = await issueToken(one.app, client.clientId, client.secret.value);
      const other = await issueToken(one.app, client.clientId, client.secret.value);
      await revoke(token);
      await expect.poll(async () => (await whoami(two.app, token)).status, { timeout: 1000, interval: 20 }).toBe(401);
      // Instance 2's clock jumps two hours ahead; the next revocation it hears of makes it drop what expired.
      two.clock.advance(TWO_HOURS);
      await revoke(other);
      await new Promise((resolve) => setTimeout(resolve, 300)); // heard by LISTEN (or the 200 ms poll)
      two.clock.advance(-TWO_HOURS);
      const res = await whoami(two.app, token);
      expect(res.status, res.text).toBe(401);
      expect((await whoami(two.app, other)).status).toBe(401);
    });
  });
});
