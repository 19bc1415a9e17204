/**
 * A host's own store that breaks its contract (an account record of the wrong shape) must not hang a
 * protected request or end the process: requireBearer() answers 503 as for an outage (the record cannot be trusted), in JSON, without a stack trace.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { MemoryAccountStore, type AccountRecord } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { issueToken } from '../helpers/tokens.js';

/** A memory store whose account reads return `scopes: null` once `broken` is set. */
class BrokenRecordStore extends MemoryAccountStore {
  broken = false;
  override async findAccount(clientId: string): Promise<AccountRecord | undefined> {
    const account = await super.findAccount(clientId);
    return this.broken && account ? ({ ...account, scopes: null } as unknown as AccountRecord) : account;
  }
}

describe('requireBearer() over a store that returns a malformed account record', () => {
  it('answers the request (503 temporarily_unavailable, JSON, no stack), as for a store outage, when the account is read from the store', async () => {
    const store = new BrokenRecordStore();
    const { app, sa } = createTestApp({ store, statusCacheTtl: 0 });
    const created = await sa.admin.createAccount({ name: 'billing' });
    const token = await issueToken(app, created.clientId, created.secret.value);
    store.broken = true;
    const res = await request(app).get('/api/whoami').set('Authorization', `Bearer ${token}`).timeout(5000);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    expect(res.text).not.toMatch(/\bat .*\.(ts|js):\d+/);
    await sa.close();
  });

  it('answers the same on every request: a malformed record is never cached', async () => {
    const store = new BrokenRecordStore();
    const issuer = createTestApp({ store });
    const created = await issuer.sa.admin.createAccount({ name: 'billing' });
    const token = await issueToken(issuer.app, created.clientId, created.secret.value);
    store.broken = true;
    // Another instance on the same store, whose cache has never held the account.
    const { app, sa } = createTestApp({ store });
    for (let i = 0; i < 2; i++) {
      const res = await request(app).get('/api/whoami').set('Authorization', `Bearer ${token}`).timeout(5000);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    }
    await Promise.all([sa.close(), issuer.sa.close()]);
  });
});
