/**
 * CONTRACT §2: "credentials in both Basic and body | 400 | `invalid_request` | RFC 6749 2.3" and
 * "malformed body (..., a repeated parameter, ...) | 400 | `invalid_request`". RFC 6749 §2.3: "The
 * client MUST NOT use more than one authentication method in each request"; RFC 9110 §11.6.2:
 * `Authorization` is a singleton field. A request with two `Authorization` headers (two Basic
 * credentials) is malformed at the token, revocation and introspection endpoints, as it already is at
 * `requireBearer()` ("The request must carry exactly one Authorization header"): it must not be
 * answered with the first header's credentials while a proxy may have checked the other one.
 */
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import type { CreatedAccount } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { expectNoStore, expectOAuthError } from '../helpers/expect-oauth-error.js';
import { basicHeader, issueToken } from '../helpers/tokens.js';

describe.each([5, 4] as const)('two Authorization headers at the token router, Express %i', (version) => {
  let t: ReturnType<typeof createTestApp>;
  let account: CreatedAccount;
  let introspector: CreatedAccount;

  beforeEach(async () => {
    t = createTestApp({ express: version });
    account = await t.sa.admin.createAccount({ name: 'procurement-portal' });
    introspector = await t.sa.admin.createAccount({ name: 'gateway', scopes: ['token:introspect'] });
  });

  const twoHeaders = (first: string, second: string) => [first, second];

  it('POST /oauth/token: 400 invalid_request, whichever header holds the right secret, and no token', async () => {
    const right = basicHeader(account.clientId, account.secret.value);
    const wrong = basicHeader(account.clientId, 'esas_wrong');
    for (const headers of [twoHeaders(right, wrong), twoHeaders(wrong, right), twoHeaders(right, right)]) {
      const res = await request(t.app)
        .post('/oauth/token')
        .set('Authorization', headers as unknown as string)
        .type('form')
        .send({ grant_type: 'client_credentials' });
      expect(res.body).not.toHaveProperty('access_token');
      expectOAuthError(res, 400, 'invalid_request');
      expectNoStore(res);
    }
  });

  it('POST /oauth/revoke and /oauth/introspect: 400 invalid_request', async () => {
    const token = await issueToken(t.app, account.clientId, account.secret.value);
    const right = basicHeader(introspector.clientId, introspector.secret.value);
    for (const path of ['/oauth/revoke', '/oauth/introspect']) {
      const res = await request(t.app)
        .post(path)
        .set('Authorization', twoHeaders(right, right) as unknown as string)
        .type('form')
        .send({ token });
      expectOAuthError(res, 400, 'invalid_request');
      expectNoStore(res);
    }
  });
});
