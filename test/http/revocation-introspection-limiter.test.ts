/**
 * The failed-authentication limiter at the revocation and introspection endpoints
 * (docs/revocation-and-introspection.md): "The same failed-authentication limiter and the same errors
 * apply: `401 invalid_client` ..., `429 too_many_requests`." One limiter for the three endpoints: wrong
 * secrets sent to one count at the others, so a guesser gains nothing by moving between them.
 */
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import type { CreatedAccount } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';
import { basicHeader, issueToken } from '../helpers/tokens.js';

const MAX = 3;

describe.each([5, 4] as const)('the failure limiter at /revoke and /introspect on Express %i', (version) => {
  let t: ReturnType<typeof createTestApp>;
  let account: CreatedAccount;
  let token: string;

  beforeEach(async () => {
    t = createTestApp({ express: version, failureLimit: { max: MAX, windowSeconds: 60 } });
    account = await t.sa.admin.createAccount({ name: 'procurement-portal', scopes: ['token:introspect'] });
    token = await issueToken(t.app, account.clientId, account.secret.value);
  });

  const post = (path: string, secret: string) =>
    request(t.app).post(`/oauth/${path}`).set('Authorization', basicHeader(account.clientId, secret)).type('form').send({ token });

  it.each([
    ['revoke', 'introspect'],
    ['introspect', 'revoke'],
    ['revoke', 'token'],
  ] as const)('failures at /%s: the first max get 401, then the right secret gets 429 with Retry-After at /%s', async (failing, other) => {
    for (let i = 0; i < MAX; i++) expectOAuthError(await post(failing, 'esas_wrongwrongwrongw_' + 'x'.repeat(50)), 401, 'invalid_client');
    const locked = other === 'token'
      ? await request(t.app).post('/oauth/token').set('Authorization', basicHeader(account.clientId, account.secret.value)).type('form').send({ grant_type: 'client_credentials' })
      : await post(other, account.secret.value);
    expectOAuthError(locked, 429, 'too_many_requests');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    // Nothing the refused requests asked for was done: the token still works.
    expect((await request(t.app).get('/api/whoami').set('Authorization', `Bearer ${token}`)).status).toBe(200);
  });
});
