/**
 * docs/admin-api.md, "Errors": a 500 `server-error` tells the caller nothing more, and its cause goes
 * to the host's `onError(error, req)` for its logs; a throwing hook changes nothing.
 */
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createAdminApi, createAdminRouter, MemoryAccountStore } from '../../src/index.js';

describe('admin router: the cause of a 500 goes to onError', () => {
  it('answers 500 server-error without the cause, and hands the cause and the request to onError', async () => {
    const seen: Array<{ error: unknown; path: string }> = [];
    const app = express();
    const failure = new Error('the session store is down');
    app.use(
      '/admin',
      createAdminRouter({
        admin: createAdminApi({ store: new MemoryAccountStore() }),
        authorize: () => {
          throw failure;
        },
        onError: (error, req) => seen.push({ error, path: req.originalUrl }),
      }),
    );
    const res = await request(app).get('/admin/service-accounts').expect(500);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.text).not.toContain('session store');
    expect(seen).toEqual([{ error: failure, path: '/admin/service-accounts' }]);
  });

  it('answers the same 500 when onError itself throws, and never calls it for a 4xx', async () => {
    let calls = 0;
    const app = express();
    app.use(
      '/admin',
      createAdminRouter({
        admin: createAdminApi({ store: new MemoryAccountStore() }),
        authorize: (req) => (req.headers.authorization === 'Bearer ok' ? { actor: { id: 'u1', name: 'Ada' }, clientAccountId: 'acme' } : Promise.reject(new Error('boom'))),
        onError: () => {
          calls++;
          throw new Error('the logger failed too');
        },
      }),
    );
    await request(app).get('/admin/service-accounts').expect(500);
    await request(app).get('/admin/service-accounts/esa_unknown0000000000000000').set('authorization', 'Bearer ok').expect(404);
    expect(calls).toBe(1);
  });
});
