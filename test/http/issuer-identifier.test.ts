/**
 * docs/configuration.md: `issuer` is "a non-empty string, usually the API's base URL". An issuer that
 * is not a URL (a host name without a scheme, a plain name) is such a string: the instance starts,
 * issues tokens carrying it and accepts them, instead of throwing `TypeError: Invalid URL` from inside
 * the library without naming the option.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/create-app.js';
import { basicHeader, decodeToken } from '../helpers/tokens.js';

describe.each(['api.example.com', 'billing api'])('issuer %j, not a URL', (issuer) => {
  it('starts, issues a token with that iss, and requireBearer() accepts the token', async () => {
    const t = createTestApp({ issuer });
    const account = await t.sa.admin.createAccount({ name: 'procurement-portal' });
    const issued = await request(t.app)
      .post('/oauth/token')
      .set('authorization', basicHeader(account.clientId, account.secret.value))
      .type('form')
      .send({ grant_type: 'client_credentials' });
    expect(issued.status, issued.text).toBe(200);
    expect(decodeToken(issued.body.access_token as string).payload.iss).toBe(issuer);
    const whoami = await request(t.app).get('/api/whoami').set('authorization', `Bearer ${issued.body.access_token as string}`);
    expect(whoami.status, whoami.text).toBe(200);
  });
});
