/**
 * Property-based fuzzing of client assertions at POST /oauth/token (docs/federated-credentials.md,
 * docs/private-key-jwt.md): random JWT-shaped `client_assertion` values (headers with any `alg`,
 * `kid`, `crit`; claims naming a trusted issuer and subject, an untrusted issuer, a client ID, or junk;
 * broken encodings and signatures; now and then a genuine token of the trusted issuer), with or without
 * `client_id`. Every answer must be 200, 400, 401 or 413 (a body over the limit) with the usual JSON body (never a 500, never a 503
 * while the issuer is up), and two properties hold across the whole run:
 * - an issuer no credential trusts receives no request at all ("an attacker-chosen iss never causes a request");
 * - the trusted issuer's keys are fetched once, however many made-up key IDs arrive within the
 *   refresh interval (the test's clock does not move).
 * Reproduce a failure with FUZZ_SEED=<printed seed>.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JWT_BEARER_ASSERTION_TYPE } from '../../src/client-auth/presented-credentials.js';
import { createTestApp, TEST_ISSUER } from '../helpers/create-app.js';
import { startLocalIssuer, type LocalIssuer } from '../helpers/local-oidc-issuer.js';
import { listen, tokenRequest, type LiveServer } from './helpers.js';
import { FUZZ_SEED, nastyString, runBatches } from './fuzz-support.js';

const SUBJECT = 'system:serviceaccount:payments:exporter';
const b64 = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

describe('fuzzing client assertions', () => {
  let trusted: LocalIssuer;
  let stranger: LocalIssuer;
  let server: LiveServer;
  let clientId: string;
  let genuine: string[];
  let close: () => Promise<void>;
  const statuses: Record<number, number> = {};

  beforeAll(async () => {
    trusted = await startLocalIssuer();
    stranger = await startLocalIssuer();
    const { app, sa, clock } = createTestApp({ failureLimit: false, federation: { allowHttpLoopback: true } });
    const account = await sa.admin.createAccount({ name: 'fuzzed-workload' });
    clientId = account.clientId;
    await sa.admin.addFederatedCredential(clientId, { issuer: trusted.issuer, subject: SUBJECT });
    genuine = await Promise.all(Array.from({ length: 40 }, () => trusted.kubernetesToken({ audience: TEST_ISSUER, subject: SUBJECT, now: clock.now() })));
    server = await listen(app);
    close = async () => {
      await server.close();
      await sa.close();
      await Promise.all([trusted.close(), stranger.close()]);
    };
  });
  afterAll(async () => {
    await close?.();
  });

  function assertions(): fc.Arbitrary<{ assertion: string; clientId?: string }> {
    const now = Math.floor(Date.parse('2026-11-22T10:00:00Z') / 1000);
    const claimValue = fc.oneof(fc.integer(), fc.double(), fc.constant(null), fc.boolean(), nastyString, fc.constant(now), fc.constant(now + 600));
    const iss = fc.oneof(fc.constantFrom(trusted.issuer, stranger.issuer, `${trusted.issuer}/`, clientId, 'https://token.actions.githubusercontent.com'), nastyString);
    const sub = fc.oneof(fc.constantFrom(SUBJECT, `${SUBJECT} `, 'system:serviceaccount:payments:*', clientId), nastyString);
    const aud = fc.oneof(fc.constantFrom(TEST_ISSUER, [TEST_ISSUER], ['https://kubernetes.default.svc', TEST_ISSUER], 'https://kubernetes.default.svc'), nastyString);
    const payload = fc.record(
      { iss, sub, aud, exp: claimValue, iat: claimValue, nbf: claimValue, jti: fc.oneof(nastyString, fc.uuid()), extra: fc.jsonValue({ maxDepth: 3 }) },
      { requiredKeys: [] },
    );
    const header = fc.record(
      {
        alg: fc.constantFrom('RS256', 'ES256', 'PS256', 'EdDSA', 'HS256', 'none', 'None', 'RS1', ''),
        kid: fc.oneof(fc.constant(trusted.currentKid), nastyString, fc.uuid()),
        typ: fc.constantFrom('JWT', 'at+jwt'),
        crit: fc.constantFrom(['exp'], ['b64'], []),
        jku: fc.constant(`${stranger.issuer}/jwks`),
      },
      { requiredKeys: ['alg'] },
    );
    const signature = fc.oneof(fc.constant(''), fc.base64String({ maxLength: 400 }).map((s) => s.replace(/=/g, '')), nastyString.map(b64));
    const forged = fc.tuple(header, payload, signature).map(([h, p, s]) => `${b64(h)}.${b64(p)}.${s}`);
    // A genuine token with one part swapped or cut: a valid signature over other content.
    const tampered = fc.tuple(fc.constantFrom(...genuine), payload, fc.nat(3)).map(([token, p, part]) => {
      const parts = token.split('.');
      if (part < 3) parts[part === 0 ? 1 : part] = part === 2 ? parts[2]!.slice(0, -4) : b64(p);
      return parts.join('.');
    });
    const assertion = fc.oneof({ weight: 5, arbitrary: forged }, { weight: 2, arbitrary: tampered }, { weight: 1, arbitrary: fc.constantFrom(...genuine) }, { weight: 1, arbitrary: nastyString });
    const id = fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constant(clientId) }, { weight: 1, arbitrary: nastyString });
    return fc.record({ assertion, clientId: id }, { requiredKeys: ['assertion'] });
  }

  it('answers every generated assertion as the contract allows, and never calls an untrusted issuer', { timeout: 120_000 }, async () => {
    await runBatches(
      'client assertion fuzz',
      assertions(),
      async ({ assertion, clientId: id }) => {
        const fields: Record<string, string> = { grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: assertion };
        if (id !== undefined) fields.client_id = id;
        const res = await tokenRequest(server, fields);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        expect([200, 400, 401, 413]).toContain(res.status);
        expect(res.headers['cache-control']).toBe('no-store');
        const body = JSON.parse(res.text) as Record<string, unknown>;
        if (res.status === 200) expect(body).toMatchObject({ access_token: expect.any(String), token_type: 'Bearer' });
        else expect(body.error).toBe(res.status === 401 ? 'invalid_client' : 'invalid_request');
        expect(stranger.requests).toHaveLength(0);
      },
      {
        batches: 4,
        runsPerBatch: 400,
        afterBatch: async () => {
          const fresh = await trusted.kubernetesToken({ audience: TEST_ISSUER, subject: SUBJECT, now: new Date(Date.parse('2026-11-22T10:00:00Z')) });
          const res = await tokenRequest(server, { grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: fresh });
          expect(res.status).toBe(200);
        },
      },
    );
    console.info(`client assertion fuzz: statuses ${JSON.stringify(statuses)}, FUZZ_SEED=${FUZZ_SEED}`);
    expect(stranger.requests).toHaveLength(0);
    // Made-up key IDs within one refresh interval cause no fetch beyond the first.
    expect(trusted.fetches('jwks')).toBe(1);
    expect(statuses[200]).toBeGreaterThan(0);
  });
});
