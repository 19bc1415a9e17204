/**
 * One client account's administrator may create many accounts; another client account's lists
 * (GET /service-accounts, GET /stale-credentials) then still read only that other client account's
 * accounts from the store (AccountStore.listAccounts({ clientAccountId })): no cross-tenant slowdown,
 * and no timing signal of how many accounts other tenants hold.
 */
import { describe, expect, it } from 'vitest';
import { MemoryAccountStore, type AccountListFilter, type AccountRecord } from '../../src/index.js';
import { createAdminRouterApp } from '../helpers/admin-router-app.js';
import { call } from '../helpers/admin-call.js';

/** Counts the account records the store hands out through listAccounts(). */
class CountingStore extends MemoryAccountStore {
  listed = 0;
  override async listAccounts(filter?: AccountListFilter): Promise<AccountRecord[]> {
    const listed = await super.listAccounts(filter);
    this.listed += listed.length;
    return listed;
  }
}

describe('a tenant’s lists read only its own accounts', () => {
  const store = new CountingStore();
  const { app } = createAdminRouterApp({ store });

  it('after acme creates 40 accounts, globex’s account list and stale-credential list each read its one account', async () => {
    expect((await call(app, 'POST', '/admin/service-accounts', 'globex', { name: 'globex-only', scopes: ['x'] })).status).toBe(201);
    for (let batch = 0; batch < 4; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => call(app, 'POST', '/admin/service-accounts', 'acme', { name: `filler-${batch}-${i}`, scopes: ['x'] })),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(201));
    }

    store.listed = 0;
    const listed = await call(app, 'GET', '/admin/service-accounts', 'globex');
    expect(listed.body).toHaveLength(1);
    expect(store.listed).toBe(1);

    store.listed = 0;
    const stale = await call(app, 'GET', '/admin/stale-credentials?unusedFor=1s', 'globex');
    expect(stale.status).toBe(200);
    expect(store.listed).toBe(1);
  });
});
