/**
 * Revocation while the store is slow: a request that arrives after a secret was revoked (or its
 * account disabled) through this instance must be refused, even when a store read for that account
 * began before the revocation and is still in flight. The slow store is a GatedStore whose reads
 * answer when the test says so; nothing sleeps.
 */
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import type { CreatedAccount } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';
import { GatedStore } from '../helpers/gated-store.js';
import { raceChange } from '../helpers/race-change.js';
import { claimsFor, signHs256 } from '../helpers/tokens.js';

const CHANGES = [
  { change: 'revokes the secret', apply: (t: App, a: CreatedAccount) => t.sa.admin.revokeSecret(a.clientId, a.secret.id), reason: /revoked/ },
  { change: 'disables the account', apply: (t: App, a: CreatedAccount) => t.sa.admin.disableAccount(a.clientId), reason: /disabled/ },
] as const;

type App = ReturnType<typeof createTestApp>;

let store: GatedStore;
let t: App;
let account: CreatedAccount;

beforeEach(async () => {
  store = new GatedStore();
  t = createTestApp({ store });
  account = await t.sa.admin.createAccount({ name: 'procurement-portal' });
});

describe.each(CHANGES)('a slow store read in flight when this instance $change', ({ apply, reason }) => {
  // Docs (security.md, "Revocation while the store is slow"): a request arriving after this instance
  // applied a revocation or disable is never answered from a store read that began before it.
  // CONTRACT §3: "token revoked (its secret revoked) or account disabled | 401 | error="invalid_token"".
  it('requireBearer refuses a token presented after the change with 401 invalid_token', async () => {
    const nowSeconds = Math.floor(t.clock.now().getTime() / 1000);
    const token = signHs256(claimsFor(account.clientId, account.secret.id, nowSeconds), t.sa.config.signingKey.kid);
    const whoami = () => request(t.app).get('/api/whoami').set('Authorization', `Bearer ${token}`).then((res) => res);
    const { first, second } = await raceChange({ store, first: whoami, change: () => apply(t, account), second: whoami });
    expectOAuthError(second, 401, 'invalid_token', { challenge: /error="invalid_token"/ });
    expect((second.body as { error_description: string }).error_description).toMatch(reason);
    // The first request arrived before the change: answering it from its read is the documented outcome.
    expect(first.status).toBe(200);
  });

  // CONTRACT §2: "unknown client ID, wrong secret, revoked secret, disabled account | 401 | invalid_client".
  it('the token endpoint refuses a token request sent after the change with 401 invalid_client', async () => {
    const tokenRequest = () =>
      request(t.app)
        .post('/oauth/token')
        .type('form')
        .send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value })
        .then((res) => res);
    const { first, second } = await raceChange({ store, first: tokenRequest, change: () => apply(t, account), second: tokenRequest });
    expectOAuthError(second, 401, 'invalid_client');
    expect(first.status).toBe(200);
  });
});
