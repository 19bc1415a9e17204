/**
 * A tenant administrator whose client account ID differs from another's only by white space
 * around it (" acme" vs "acme": the host's authorize returned it as is) creates service accounts IN THE
 * OTHER client account: createAccount trims clientAccountId (checkText), but the tenant scope forces the
 * untrimmed principal value and never checks what the store got. The attacker receives the secret of an
 * account that acts for "acme".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminRouterApp } from '../helpers/admin-router-app.js';
import { call, serve } from '../helpers/serve-app.js';

describe('tenant ID with surrounding white space', () => {
  const { app, admin } = createAdminRouterApp({
    tokens: {
      victim: { actor: { id: 'v', name: 'Victim' }, clientAccountId: 'acme' },
      attacker: { actor: { id: 'a', name: 'Attacker' }, clientAccountId: ' acme' },
    },
  });
  let server: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    server = await serve(app);
  });
  afterAll(async () => server.close());

  it('an administrator of " acme" cannot create an account that belongs to "acme"', async () => {
    const created = await call(server.url, 'POST', '/admin/service-accounts', 'attacker', { name: 'planted', scopes: ['jobs:write'] });
    // Either refused, or the account stays in the attacker's own client account.
    if (created.status === 201) {
      // (unfixed: 201, and the account is in "acme")
      const account = await admin.getAccount(created.body.clientId);
      expect(account?.clientAccountId).toBe(' acme');
    } else {
      expect(created.status).toBeGreaterThanOrEqual(400);
    }
    // And the victim's list holds nothing the victim did not create.
    const listed = await call(server.url, 'GET', '/admin/service-accounts', 'victim');
    expect(listed.body).toEqual([]);
  });
});
