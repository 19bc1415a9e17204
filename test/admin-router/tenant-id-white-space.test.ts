/**
 * docs/admin-api.md: an `authorize` answer whose `clientAccountId` has white space around it is refused
 * with a 500 like any malformed principal. The admin API stores a client account ID trimmed, so an
 * administrator of " acme" would otherwise create service accounts in "acme" (and receive their
 * secrets) while the tenant scope kept filtering for " acme".
 */
import { describe, expect, it } from 'vitest';
import { createAdminRouterApp } from '../helpers/admin-router-app.js';
import { call } from '../helpers/admin-call.js';

describe('tenant ID with surrounding white space', () => {
  const { app, admin } = createAdminRouterApp({
    tokens: {
      victim: { actor: { id: 'v', name: 'Victim' }, clientAccountId: 'acme' },
      attacker: { actor: { id: 'a', name: 'Attacker' }, clientAccountId: ' acme' },
      trailing: { actor: { id: 't', name: 'Trailing' }, clientAccountId: 'acme\t' },
    },
  });

  it.each(['attacker', 'trailing'])('refuses the principal of %s with 500 server-error, and creates nothing', async (token) => {
    const created = await call(app, 'POST', '/admin/service-accounts', token, { name: 'planted', scopes: ['jobs:write'] });
    expect(created.status).toBe(500);
    expect(created.body).toMatchObject({ status: 500, type: expect.stringMatching(/server-error$/) });
    expect((await call(app, 'GET', '/admin/service-accounts', token)).status).toBe(500);
    expect(await admin.listAccounts()).toEqual([]);
    // And the victim's list holds nothing the victim did not create.
    const listed = await call(app, 'GET', '/admin/service-accounts', 'victim');
    expect(listed.body).toEqual([]);
  });
});
