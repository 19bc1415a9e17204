/**
 * Every instance caches outside issuers' keys per key source, in one cache of 1000 sources shared by
 * every client account. Whoever registers federated credentials (a client account's administrator,
 * through the admin router) chooses their JWK Set URLs, so one client account can use more sources
 * than the cache holds, with tokens its own issuer signs (successful requests, which no failure
 * limiter counts). Each client account keeps at most 100 sources in the cache, so another client
 * account's issuer stays cached: its next token request needs no fetch, and the "one refetch per
 * refresh interval per source" bound on fetches to that issuer holds.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JWT_BEARER_ASSERTION_TYPE } from '../../src/client-auth/presented-credentials.js';
import { createTestApp, TEST_ISSUER } from '../helpers/create-app.js';
import { startLocalIssuer, type LocalIssuer } from '../helpers/local-oidc-issuer.js';
import request from 'supertest';

const SOURCES = 1010;
const PER_ACCOUNT = 100;

describe('one client account cannot push another’s issuer keys out of the cache', () => {
  const t = createTestApp({ federation: { allowHttpLoopback: true, fetchTimeout: 2000 }, maxSecretsPerAccount: PER_ACCOUNT });
  let victimIdp: LocalIssuer;
  // The attacker's issuer: the same JWK Set at every path.
  const attackerServer = createServer();
  let attackerIssuer = '';
  let sign: (subject: string) => Promise<string>;

  beforeAll(async () => {
    victimIdp = await startLocalIssuer();
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] });
    attackerServer.on('request', (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(jwks));
    await new Promise<void>((done) => attackerServer.listen(0, '127.0.0.1', done));
    attackerIssuer = `http://127.0.0.1:${(attackerServer.address() as AddressInfo).port}`;
    let jti = 0;
    sign = (subject) =>
      new SignJWT({ jti: `j-${++jti}` })
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer(attackerIssuer)
        .setSubject(subject)
        .setAudience(TEST_ISSUER)
        .setIssuedAt(Math.floor(t.clock.now().getTime() / 1000))
        .setExpirationTime(Math.floor(t.clock.now().getTime() / 1000) + 300)
        .sign(privateKey);
  }, 60_000);
  afterAll(async () => {
    await victimIdp.close();
    await new Promise<void>((done) => attackerServer.close(() => done()));
  });

  const tokenRequest = async (assertion: string, clientId: string) => {
    const res = await request(t.app)
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: assertion, client_id: clientId });
    return res.status;
  };

  it('globex’s issuer is not fetched again after acme cycles through 1010 key sources', async () => {
    // The victim tenant: one workload, one issuer.
    const victim = await t.sa.admin.createAccount({ name: 'globex-worker', clientAccountId: 'globex' });
    await t.sa.admin.addFederatedCredential(victim.clientId, { issuer: victimIdp.issuer, subject: 'system:serviceaccount:globex:worker' });
    const victimToken = () => victimIdp.kubernetesToken({ audience: TEST_ISSUER, now: t.clock.now(), subject: 'system:serviceaccount:globex:worker' });
    expect(await tokenRequest(await victimToken(), victim.clientId)).toBe(200);
    expect(await tokenRequest(await victimToken(), victim.clientId)).toBe(200);
    const fetchesBefore = victimIdp.fetches('jwks');
    expect(fetchesBefore).toBe(1);

    // The attacking tenant: SOURCES credentials, each with its own JWK Set URL (registrable through the admin router).
    const targets: { clientId: string; subject: string }[] = [];
    for (let a = 0; a * (PER_ACCOUNT - 1) < SOURCES; a++) {
      const account = await t.sa.admin.createAccount({ name: `acme-${a}`, clientAccountId: 'acme' });
      for (let i = 0; i < PER_ACCOUNT - 1 && targets.length < SOURCES; i++) {
        const n = targets.length;
        await t.sa.admin.addFederatedCredential(account.clientId, { issuer: attackerIssuer, subject: `s-${n}`, jwksUri: `${attackerIssuer}/jwks/${n}` });
        targets.push({ clientId: account.clientId, subject: `s-${n}` });
      }
    }
    for (let i = 0; i < targets.length; i += 20) {
      const batch = targets.slice(i, i + 20);
      const statuses = await Promise.all(batch.map(async ({ clientId, subject }) => tokenRequest(await sign(subject), clientId)));
      expect(statuses.every((status) => status === 200)).toBe(true);
    }

    expect(await tokenRequest(await victimToken(), victim.clientId)).toBe(200);
    // The victim's keys should still be cached: no new fetch of its JWK Set.
    expect(victimIdp.fetches('jwks')).toBe(fetchesBefore);
  }, 180_000);
});
