/**
 * The bounded key tries hold per token, not per credential (docs/federated-credentials.md, "Bounded
 * work per token": "A token costs at most 3 signature checks (6 when it causes a refetch)"; docs/security.md:
 * "at most 3 keys are tried on one token"). An account may hold several live credentials for one
 * issuer and subject (another audience each, up to `maxSecretsPerAccount`); a forged token without
 * `kid` must not be tried against the issuer's keys once per credential. Signature checks are counted
 * through a spy on jose's `jwtVerify`, as in test/federation/bounded-key-tries.test.ts. No network:
 * the issuer's keys are inline.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import * as jose from 'jose';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { MAX_CANDIDATE_KEYS } from '../../src/client-auth/key-tries.js';
import { JWT_BEARER_ASSERTION_TYPE } from '../../src/client-auth/presented-credentials.js';
import { createTestApp } from '../helpers/create-app.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';

vi.mock('jose', async (importOriginal) => {
  const actual = await importOriginal<typeof import('jose')>();
  return { ...actual, jwtVerify: vi.fn(actual.jwtVerify) };
});

const signatureChecks = (): number => vi.mocked(jose.jwtVerify).mock.calls.length;

const ISSUER = 'https://issuer.example';
const SUBJECT = 'system:serviceaccount:payments:exporter';

describe('outside tokens: signature checks per token, whatever the number of credentials', () => {
  it(`tries at most ${MAX_CANDIDATE_KEYS} keys on a forged token without kid when the account trusts the subject for several audiences`, async () => {
    const published: JWK[] = [];
    const issuerKeys = [];
    for (let i = 0; i < MAX_CANDIDATE_KEYS; i++) {
      const pair = await generateKeyPair('ES512');
      issuerKeys.push(pair);
      published.push({ ...(await exportJWK(pair.publicKey)), kid: `k-${i}`, alg: 'ES512', use: 'sig' });
    }
    const attacker = await generateKeyPair('ES512');
    const credentials = 4; // beside the secret the account is created with: the default maxSecretsPerAccount of 5
    const t = createTestApp({ federation: { issuers: { [ISSUER]: { jwks: { keys: published } } } } });
    const account = await t.sa.admin.createAccount({ name: 'payments-exporter' });
    for (let i = 0; i < credentials; i++) await t.sa.admin.addFederatedCredential(account.clientId, { issuer: ISSUER, subject: SUBJECT, audience: `https://aud-${i}.example` });

    const seconds = Math.floor(t.clock.now().getTime() / 1000);
    const forged = await new SignJWT({ iss: ISSUER, sub: SUBJECT, aud: 'https://aud-0.example', iat: seconds, exp: seconds + 600, jti: 'x' })
      .setProtectedHeader({ alg: 'ES512' })
      .sign(attacker.privateKey);
    vi.mocked(jose.jwtVerify).mockClear();
    const res = await request(t.app)
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: forged });
    expectOAuthError(res, 401, 'invalid_client');
    // Every credential names the same keys: a key that did not make the signature for one cannot make it for another.
    expect(signatureChecks()).toBeLessThanOrEqual(MAX_CANDIDATE_KEYS);

    // The issuer's own token, without kid, for the last credential's audience, is still accepted.
    const genuine = await new SignJWT({ iss: ISSUER, sub: SUBJECT, aud: `https://aud-${credentials - 1}.example`, iat: seconds, exp: seconds + 600, jti: 'y' })
      .setProtectedHeader({ alg: 'ES512' })
      .sign(issuerKeys[MAX_CANDIDATE_KEYS - 1]!.privateKey);
    await request(t.app)
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: genuine })
      .expect(200);
  });

  // docs/federated-credentials.md, "Bounded work per token": "A token costs at most 3 signature checks
  // (6 when it causes a refetch)". Credentials of one issuer and subject may each name their own JWK Set
  // URL (without federation.allowedIssuers); a forged token must not be tried on the keys of every one.
  it(`tries at most ${MAX_CANDIDATE_KEYS} keys on a forged token without kid when the credentials name different JWK Set URLs`, async () => {
    const sets: { keys: JWK[] }[] = [];
    let lastKey: Awaited<ReturnType<typeof generateKeyPair>> | undefined;
    for (let s = 0; s < 4; s++) {
      const keys: JWK[] = [];
      for (let i = 0; i < MAX_CANDIDATE_KEYS; i++) {
        lastKey = await generateKeyPair('ES512');
        keys.push({ ...(await exportJWK(lastKey.publicKey)), kid: `s${s}-k${i}`, alg: 'ES512', use: 'sig' });
      }
      sets.push({ keys });
    }
    const server = createServer((req, res) => {
      const set = sets[Number(/^\/jwks-(\d)$/.exec(req.url ?? '')?.[1])];
      res.writeHead(set ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(set ?? {}));
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const t = createTestApp({ federation: { allowHttpLoopback: true } });
      const account = await t.sa.admin.createAccount({ name: 'payments-exporter' });
      // Four credentials beside the account's first secret: the default maxSecretsPerAccount of 5.
      for (let s = 0; s < sets.length; s++) {
        await t.sa.admin.addFederatedCredential(account.clientId, { issuer: ISSUER, subject: SUBJECT, audience: `https://aud-${s}.example`, jwksUri: `${base}/jwks-${s}` });
      }
      const attacker = await generateKeyPair('ES512');
      const seconds = Math.floor(t.clock.now().getTime() / 1000);
      const forged = await new SignJWT({ iss: ISSUER, sub: SUBJECT, aud: 'https://aud-0.example', iat: seconds, exp: seconds + 600, jti: 'x' })
        .setProtectedHeader({ alg: 'ES512' })
        .sign(attacker.privateKey);
      vi.mocked(jose.jwtVerify).mockClear();
      const res = await request(t.app)
        .post('/oauth/token')
        .type('form')
        .send({ grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: forged });
      expectOAuthError(res, 401, 'invalid_client');
      expect(signatureChecks()).toBeLessThanOrEqual(MAX_CANDIDATE_KEYS);

      // The issuer's own token, naming its key, for the last credential's audience and key set, is still accepted.
      const genuine = await new SignJWT({ iss: ISSUER, sub: SUBJECT, aud: `https://aud-${sets.length - 1}.example`, iat: seconds, exp: seconds + 600, jti: 'y' })
        .setProtectedHeader({ alg: 'ES512', kid: `s${sets.length - 1}-k${MAX_CANDIDATE_KEYS - 1}` })
        .sign(lastKey!.privateKey);
      await request(t.app)
        .post('/oauth/token')
        .type('form')
        .send({ grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: genuine })
        .expect(200);
    } finally {
      server.close();
    }
  });
});
