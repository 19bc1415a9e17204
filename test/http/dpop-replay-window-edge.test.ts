/**
 * RFC 9449 §11.1: a proof is single use for as long as it can be accepted. Its `iat` is accepted up to
 * `proofMaxAge` seconds old, that last second included ("not more than proofMaxAge seconds old",
 * docs/dpop.md), so the replay record must outlive it: at exactly `proofMaxAge` (plus `clockTolerance`)
 * after its first use, a proof is still accepted by its `iat` and must still be refused as a replay.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { MemoryAccountStore } from '../../src/index.js';
import { createTestApp, TEST_ISSUER } from '../helpers/create-app.js';
import { DpopKey } from '../helpers/dpop-proofs.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';

describe.each([0, 5])('DPoP replay at the edge of the iat window (clockTolerance %i)', (clockTolerance) => {
  const setup = async (store = new MemoryAccountStore()) => {
    const t = createTestApp({ store, clockTolerance, dpop: { origins: [TEST_ISSUER] } });
    const account = await t.sa.admin.createAccount({ name: 'billing-sync', scopes: ['jobs:read'] });
    const key = await DpopKey.create();
    const now = () => Math.floor(t.clock.now().getTime() / 1000);
    return { t, account, key, now };
  };

  it('at a protected route: a proof from clockTolerance ahead is refused as a replay proofMaxAge + clockTolerance later', async () => {
    const { t, account, key, now } = await setup();
    const tokenRes = await request(t.app)
      .post('/oauth/token')
      .type('form')
      .set('DPoP', await key.proof({ htu: `${TEST_ISSUER}/oauth/token`, iat: now() }))
      .send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value, scope: 'jobs:read' });
    const token = tokenRes.body.access_token as string;
    const proof = await key.proof({ htm: 'GET', htu: `${TEST_ISSUER}/api/whoami`, iat: now() + clockTolerance, accessToken: token });
    const send = () => request(t.app).get('/api/whoami').set('Authorization', `DPoP ${token}`).set('DPoP', proof);
    expect((await send()).status).toBe(200);
    t.clock.advance(60 + clockTolerance);
    const replay = await send();
    expectOAuthError(replay, 401, 'invalid_dpop_proof');
    expect(replay.body.error_description).toMatch(/already used/);
  });

  it('at the token endpoint: a proof is refused as a replay proofMaxAge + clockTolerance after its use', async () => {
    const { t, account, key, now } = await setup();
    const proof = await key.proof({ htu: `${TEST_ISSUER}/oauth/token`, iat: now() + clockTolerance });
    const send = () =>
      request(t.app)
        .post('/oauth/token')
        .type('form')
        .set('DPoP', proof)
        .send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });
    expect((await send()).status).toBe(200);
    t.clock.advance(60 + clockTolerance);
    const replay = await send();
    expectOAuthError(replay, 400, 'invalid_dpop_proof');
    expect(replay.body.error_description).toMatch(/already used/);
  });
});
