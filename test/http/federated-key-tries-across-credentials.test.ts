/**
 * The bounded key tries hold per token, not per credential (docs/federated-credentials.md, "Bounded
 * work per token": "A token costs at most 3 signature checks (6 when it causes a refetch)"; docs/security.md:
 * "at most 3 keys are tried on one token"). An account may hold several live credentials for one
 * issuer and subject (another audience each, up to `maxSecretsPerAccount`); a forged token without
 * `kid` must not be tried against the issuer's keys once per credential. Signature checks are counted
 * through a spy on jose's `jwtVerify`, as in test/federation/bounded-key-tries.test.ts. No network:
 * the issuer's keys are inline.
 */
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import * as jose from 'jose';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { MAX_CANDIDATE_KEYS } from '../../src/client-auth/assertion-rules.js';
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
});
