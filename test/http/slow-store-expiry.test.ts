/**
 * A token that expires while its account is being read from a slow store: the answer comes after
 * the token's expiry (beyond the clock tolerance), so the token must be refused as expired, exactly
 * as it would be a moment later from a quick read. The slow store is a GatedStore whose reads answer
 * when the test says so; the clock is the test's own; nothing sleeps.
 */
import request from 'supertest';
import { beforeEach, expect, it } from 'vitest';
import type { CreatedAccount } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';
import { GatedStore } from '../helpers/gated-store.js';
import { basicHeader, claimsFor, signHs256 } from '../helpers/tokens.js';

type App = ReturnType<typeof createTestApp>;

let store: GatedStore;
let t: App;
let account: CreatedAccount;
let token: string;

beforeEach(async () => {
  store = new GatedStore();
  // Every request reads the account from the store: no status is cached.
  t = createTestApp({ store, statusCacheTtl: 0 });
  account = await t.sa.admin.createAccount({ name: 'nightly-export' });
  const nowSeconds = Math.floor(t.clock.now().getTime() / 1000);
  // Expires 1 s from now; the store read below answers 30 s later, past the 5 s clock tolerance.
  token = signHs256(claimsFor(account.clientId, account.secret.id, nowSeconds, { exp: nowSeconds + 1 }), t.sa.config.signingKey.kid);
});

// CONTRACT §3: "token expired | 401 | Bearer realm="...", error="invalid_token", error_description="The access token expired"".
// RFC 7519 §4.1.4: the token must not be accepted for processing on or after its expiration time.
it('requireBearer refuses a token that expired while its account was being read', async () => {
  store.holding = true;
  const whoami = request(t.app).get('/api/whoami').set('Authorization', `Bearer ${token}`).then((res) => res);
  const [read] = await store.heldReads(1);
  t.clock.advance(30);
  read!.release();
  const res = await whoami;
  expectOAuthError(res, 401, 'invalid_token', { challenge: /error_description="The access token expired"/ });
});

// RFC 7662 §2.2: "active ... whether or not the presented token is currently active"; an expired token is not.
it('introspection answers {"active": false} for a token that expired while its account was being read', async () => {
  const introspector = await t.sa.admin.createAccount({ name: 'billing-api', scopes: ['token:introspect'] });
  store.holding = true;
  const introspect = request(t.app)
    .post('/oauth/introspect')
    .set('Authorization', basicHeader(introspector.clientId, introspector.secret.value))
    .type('form')
    .send({ token })
    .then((res) => res);
  // The introspector's own account is read first, then the token's.
  const [own] = await store.heldReads(1);
  own!.release();
  const [, tokenAccount] = await store.heldReads(2);
  t.clock.advance(30);
  tokenAccount!.release();
  const res = await introspect;
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ active: false });
});
