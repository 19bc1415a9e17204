/**
 * A made-up bearer token whose header says `"typ": "JWT"` and whose payload is not JSON.
 * jsonwebtoken's decode (jws.decode) runs JSON.parse on such a payload without catching, so
 * verifyAccessToken throws a SyntaxError instead of InvalidTokenError('invalid'). CONTRACT §3: a
 * garbage token is 401 invalid_token; RFC 7662 §2.2: introspecting one is {"active": false}; RFC 7009
 * §2.2: revoking one is 200. Nothing here needs a credential at the protected route.
 */
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CreatedAccount } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { basicHeader } from '../helpers/tokens.js';

const b64 = (text: string) => Buffer.from(text).toString('base64url');
/** The header is a valid JSON object; the payload "notjson" is not JSON. */
const GARBAGE = `${b64(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: 'k' }))}.${b64('notjson')}.${b64('sig')}`;

describe('a token with typ JWT and a non-JSON payload', () => {
  const t = createTestApp();
  let gateway: CreatedAccount;
  beforeAll(async () => {
    gateway = await t.sa.admin.createAccount({ name: 'api-gateway', scopes: ['token:introspect'] });
  });

  const form = (path: string) =>
    request(t.app).post(path).set('authorization', basicHeader(gateway.clientId, gateway.secret.value)).type('form').send(`token=${GARBAGE}`);

  it('is 401 invalid_token at a protected route (CONTRACT §3: garbage)', async () => {
    const res = await request(t.app).get('/api/whoami').set('authorization', `Bearer ${GARBAGE}`);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/error="invalid_token"/);
  });

  it('is {"active": false} at /introspect (RFC 7662 §2.2)', async () => {
    const res = await form('/oauth/introspect');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ active: false });
  });

  it('is 200 at /revoke (RFC 7009 §2.2)', async () => {
    const res = await form('/oauth/revoke');
    expect(res.status).toBe(200);
  });
});
