/**
 * The key-pair method (src/client-auth/key-pair-method.ts), in process: a client assertion
 * (`private_key_jwt`, RFC 7523 §2.2 and §3) signed by one of the account's registered public keys.
 * RFC 7523 §3: "The JWT MUST contain an "iss" (issuer) claim", "a "sub" (subject) claim", "an "aud"
 * (audience) claim containing a value that identifies the authorization server", "an "exp"
 * (expiration time) claim"; "The authorization server MAY ensure that JWTs are not replayed by
 * maintaining the set of used "jti" values". The clock is the test's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidClientError, TooManyRequestsError } from '../../src/errors.js';
import { KeyPairMethod } from '../../src/client-auth/key-pair-method.js';
import { JWT_BEARER_ASSERTION_TYPE, presentedCredentials } from '../../src/client-auth/presented-credentials.js';
import { MAX_CANDIDATE_KEYS } from '../../src/client-auth/key-tries.js';
import { authenticatedAs, closeClientAuthParts, createClientAuthParts, settle, type Settled } from '../helpers/client-auth-parts.js';
import { newKeyPair, signAssertion, type AssertionOptions, type TestKeyPair } from '../helpers/client-assertions.js';
import { TEST_ISSUER } from '../helpers/create-app.js';

afterEach(closeClientAuthParts);

async function setUp(options: Parameters<typeof createClientAuthParts>[0] = {}) {
  const parts = await createClientAuthParts(options);
  const { config, runtime, store, clock } = parts;
  const method = new KeyPairMethod({
    attempts: parts.attempts,
    accounts: runtime.accounts,
    replays: { store, storeTimeout: config.storeTimeout, storeCalls: runtime.storeCalls, clockTolerance: config.clockTolerance },
    rules: { issuer: config.issuer, clockTolerance: config.clockTolerance, maxLifetime: config.maxAssertionLifetime, tokenEndpointAudience: config.acceptTokenEndpointAudience },
    now: clock.now,
  });
  const account = await parts.admin.createAccount({ name: 'ledger-sync' });
  const pair = await newKeyPair('ES256');
  const key = await parts.admin.addKey(account.clientId, pair.publicPem);
  const nowSeconds = () => Math.floor(clock.now().getTime() / 1000);
  const assertion = (options: AssertionOptions = {}, signer: TestKeyPair = pair, clientId = account.clientId) =>
    signAssertion(signer, clientId, { now: nowSeconds(), ...options });
  /** Authenticates a token request carrying `assertion` (and `client_id` beside it, when given), read as the token endpoint reads it. */
  const authenticate = (assertion: string, clientId?: string): Promise<Settled> => {
    const credentials = presentedCredentials(
      { client_id: clientId, client_secret: undefined, client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: assertion },
      undefined,
    );
    if (credentials.kind !== 'key') throw new Error(`the assertion was read as kind ${credentials.kind}`);
    return settle((done) => method.authenticate(credentials, '192.0.2.20', done));
  };
  return { ...parts, method, account, pair, key, nowSeconds, assertion, authenticate };
}

function expectRefused(settled: Settled, reason: string, failures: string[]): void {
  expect(settled.error).toBeInstanceOf(InvalidClientError);
  expect((settled.error as InvalidClientError).reason).toBe(reason);
  expect(failures.at(-1)).toBe(reason);
}

describe('KeyPairMethod', () => {
  it('authenticates a valid ES256 assertion as the account, with the key as its credential', async () => {
    const t = await setUp();
    expect(authenticatedAs(await t.authenticate(await t.assertion()))).toEqual({ clientId: t.account.clientId, kind: 'key', id: t.key.id });
    expect(t.audit).toEqual([]);
  });

  it('refuses a replayed assertion (the same jti) as replayed_assertion', async () => {
    const t = await setUp();
    const assertion = await t.assertion();
    expect(authenticatedAs(await t.authenticate(assertion))?.kind).toBe('key');
    expectRefused(await t.authenticate(assertion), 'replayed_assertion', t.failures());
  });

  // The issuer identifier as the sole audience: not another server, not a list with others, not the token endpoint URL.
  it.each([
    ['another server', 'https://other.test'],
    ['a list with another audience', [TEST_ISSUER, 'https://other.test']],
    ['the token endpoint URL', `${TEST_ISSUER}/oauth/token`],
  ])('refuses an assertion made out to %s as wrong_audience', async (_name, aud) => {
    const t = await setUp();
    expectRefused(await t.authenticate(await t.assertion({ claims: { aud } })), 'wrong_audience', t.failures());
  });

  it('accepts the issuer identifier as a one-element audience list', async () => {
    const t = await setUp();
    expect(authenticatedAs(await t.authenticate(await t.assertion({ claims: { aud: [TEST_ISSUER] } })))?.kind).toBe('key');
  });

  it('refuses an assertion whose exp lies further ahead than maxAssertionLifetime plus the clock tolerance, and accepts one at that bound', async () => {
    const t = await setUp();
    const bound = t.config.maxAssertionLifetime + t.config.clockTolerance;
    expectRefused(await t.authenticate(await t.assertion({ claims: { exp: t.nowSeconds() + bound + 1 } })), 'assertion_lifetime_too_long', t.failures());
    expect(authenticatedAs(await t.authenticate(await t.assertion({ claims: { exp: t.nowSeconds() + bound } })))?.kind).toBe('key');
  });

  it('refuses an expired assertion by the injected clock, and one without jti', async () => {
    const t = await setUp();
    const assertion = await t.assertion(); // exp in 60 s
    t.clock.advance(60 + t.config.clockTolerance + 1);
    expectRefused(await t.authenticate(assertion), 'expired_assertion', t.failures());
    expectRefused(await t.authenticate(await t.assertion({ omit: ['jti'] })), 'invalid_assertion', t.failures());
  });

  it('refuses an assertion signed by a revoked key as revoked_key', async () => {
    const t = await setUp();
    await t.admin.revokeKey(t.account.clientId, t.key.id);
    expectRefused(await t.authenticate(await t.assertion()), 'revoked_key', t.failures());
  });

  it('refuses an assertion signed by a key the account does not hold as unknown_key', async () => {
    const t = await setUp();
    expectRefused(await t.authenticate(await t.assertion({}, await newKeyPair('ES256'))), 'unknown_key', t.failures());
  });

  it('refuses a valid assertion of a disabled account as disabled_account', async () => {
    const t = await setUp();
    await t.admin.disableAccount(t.account.clientId);
    expectRefused(await t.authenticate(await t.assertion()), 'disabled_account', t.failures());
  });

  // RFC 7521 §4.2: "client_id ... identifies the client to the authorization server", so it must name the client the assertion names.
  it('refuses an assertion with a client_id beside it naming another client as invalid_assertion, and accepts the same client', async () => {
    const t = await setUp();
    const other = await t.admin.createAccount({ name: 'other-client' });
    expectRefused(await t.authenticate(await t.assertion(), other.clientId), 'invalid_assertion', t.failures());
    // Counted and audited under the client ID the request presented.
    expect(t.audit.at(-1)).toMatchObject({ type: 'client.authentication_failed', clientId: other.clientId });
    expect(authenticatedAs(await t.authenticate(await t.assertion(), t.account.clientId))?.clientId).toBe(t.account.clientId);
  });

  it('refuses an assertion naming an unknown client as unknown_client', async () => {
    const t = await setUp();
    expectRefused(await t.authenticate(await t.assertion({}, t.pair, 'esa_nosuchclientnosuchclien')), 'unknown_client', t.failures());
  });

  it(`with more than ${MAX_CANDIDATE_KEYS} live keys, refuses an assertion without kid untried; with kid it passes`, async () => {
    const t = await setUp({ maxSecretsPerAccount: 10 });
    const pairs = [t.pair];
    for (let i = 1; i < MAX_CANDIDATE_KEYS + 1; i++) {
      pairs.push(await newKeyPair('ES256'));
      await t.admin.addKey(t.account.clientId, pairs.at(-1)!.publicPem);
    }
    // Signed by each of the keys in turn: had any key been tried (even only the first few), one of them would have passed.
    for (const pair of pairs) expectRefused(await t.authenticate(await t.assertion({}, pair)), 'invalid_assertion', t.failures());
    expect(t.failures()).toEqual(Array(pairs.length).fill('invalid_assertion'));
    expect(authenticatedAs(await t.authenticate(await t.assertion({ header: { kid: t.key.id } })))?.id).toBe(t.key.id);
    expect(authenticatedAs(await t.authenticate(await t.assertion({ header: { kid: t.key.thumbprint } })))?.id).toBe(t.key.id);
  });

  it(`with exactly ${MAX_CANDIDATE_KEYS} live keys, an assertion without kid is tried on each`, async () => {
    const t = await setUp({ maxSecretsPerAccount: 10 });
    let last = t.pair;
    for (let i = 1; i < MAX_CANDIDATE_KEYS; i++) {
      last = await newKeyPair('ES256');
      await t.admin.addKey(t.account.clientId, last.publicPem);
    }
    expect(authenticatedAs(await t.authenticate(await t.assertion({}, last)))?.kind).toBe('key');
  });

  // Not counted in advance (a signature cannot be guessed), but every failure is counted when decided.
  it('past `max` refused assertions, every assertion gets 429, a valid one too', async () => {
    const max = 2;
    const t = await setUp({ failureLimit: { max, windowSeconds: 3600 } });
    for (let i = 0; i < max; i++) {
      expectRefused(await t.authenticate(await t.assertion({ claims: { aud: 'https://other.test' } })), 'wrong_audience', t.failures());
    }
    const refused = await t.authenticate(await t.assertion({ claims: { aud: 'https://other.test' } }));
    const valid = await t.authenticate(await t.assertion());
    for (const settled of [refused, valid]) {
      expect(settled.error).toBeInstanceOf(TooManyRequestsError);
      expect((settled.error as TooManyRequestsError).retryAfterSeconds).toBeGreaterThan(0);
    }
    expect(t.failures()).toEqual([...Array(max).fill('wrong_audience'), 'rate_limited', 'rate_limited']);
  });

  // docs/security.md: "A 429 response carries no WWW-Authenticate, and the audit hook receives
  // client.authentication_failed with reason: 'rate_limited'": also a 429 given to an attempt that
  // failed its check and found the limit reached when its failure was counted (concurrent attempts).
  it('concurrent refused assertions past `max`: each 429 is audited rate_limited, once', async () => {
    const max = 2;
    const t = await setUp({ failureLimit: { max, windowSeconds: 3600 } });
    const assertions = await Promise.all([1, 2, 3, 4].map(() => t.assertion({ claims: { aud: 'https://other.test' } })));
    const settled = await Promise.all(assertions.map((assertion) => t.authenticate(assertion)));
    expect(settled.filter((s) => s.error instanceof InvalidClientError)).toHaveLength(max);
    expect(settled.filter((s) => s.error instanceof TooManyRequestsError)).toHaveLength(2);
    expect(t.failures().sort()).toEqual(['rate_limited', 'rate_limited', 'wrong_audience', 'wrong_audience']);
    // The account the assertion named is still named.
    expect(t.audit.filter((e) => e.type === 'client.authentication_failed' && e.reason === 'rate_limited')).toEqual([
      expect.objectContaining({ clientId: t.account.clientId, name: 'ledger-sync' }),
      expect.objectContaining({ clientId: t.account.clientId, name: 'ledger-sync' }),
    ]);
  });

  it('a valid assertion leaves no count behind', async () => {
    const t = await setUp({ failureLimit: { max: 1, windowSeconds: 3600 } });
    for (let i = 0; i < 3; i++) expect(authenticatedAs(await t.authenticate(await t.assertion()))?.kind).toBe('key');
    expectRefused(await t.authenticate(await t.assertion({ claims: { aud: 'https://other.test' } })), 'wrong_audience', t.failures());
  });
});
