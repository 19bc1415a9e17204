/**
 * Bounded work per presented token, counted in signature checks: every check is one call of jose's
 * `jwtVerify` with one key, counted through a spy on it (nothing else of jose is changed). The rule:
 * "cap the keys accepted in a fetched or inline key set, try at most a small number of candidate keys
 * per token, and refuse a kid-less token when more than that match its algorithm. The same bound for
 * every place that tries keys (key pairs too)." The attack it answers: a federated JWK Set of 1,000
 * P-521 keys and a token without `kid` made the server try every key.
 */
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type KeyLike } from 'jose';
import * as jose from 'jose';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_CANDIDATE_KEYS } from '../../src/client-auth/key-tries.js';
import { FederatedKeysUnavailableError } from '../../src/errors.js';
import { resolveFederation } from '../../src/federation/federation-options.js';
import { MAX_KEYS_PER_SET } from '../../src/federation/key-set.js';
import { IssuerKeySets } from '../../src/federation/issuer-key-sets.js';
import type { AccountRecord, KeyRecord, PublicKeyJwk } from '../../src/store/account-store.js';
import { KeyAssertionChecker } from '../../src/client-auth/key-pair-method.js';
import { verifyIssuerToken } from '../../src/client-auth/federated-method.js';
import { TEST_ISSUER } from '../helpers/create-app.js';
import { startLocalIssuer, type LocalIssuer } from '../helpers/local-oidc-issuer.js';
import { longExponentRsaKey } from '../helpers/long-exponent-rsa-key.js';

vi.mock('jose', async (importOriginal) => {
  const actual = await importOriginal<typeof import('jose')>();
  return { ...actual, jwtVerify: vi.fn(actual.jwtVerify) };
});

const signatureChecks = (): number => vi.mocked(jose.jwtVerify).mock.calls.length;

const AUDIENCE = 'https://api.example.com';
const now = new Date('2026-03-01T12:00:00Z');
const seconds = Math.floor(now.getTime() / 1000);

/** `count` keys of one P-521 public key under distinct `kid`s: to a verifier, `count` keys to try. */
const p521Set = (publicJwk: JWK, count: number, prefix = 'k'): { keys: JWK[] } => ({
  keys: Array.from({ length: count }, (_, i) => ({ ...publicJwk, kid: `${prefix}-${i}`, alg: 'ES512', use: 'sig' })),
});

let attacker: { privateKey: KeyLike; publicJwk: JWK };
let published: JWK;
beforeAll(async () => {
  const pair = await generateKeyPair('ES512');
  attacker = { privateKey: pair.privateKey, publicJwk: await exportJWK(pair.publicKey) };
  published = await exportJWK((await generateKeyPair('ES512')).publicKey);
});

beforeEach(() => {
  vi.mocked(jose.jwtVerify).mockClear();
});

/** A token of `issuer` without `kid`, signed by a key the issuer does not publish. */
const kidlessToken = (issuer: string): Promise<string> =>
  new SignJWT({ iss: issuer, sub: 'system:serviceaccount:payments:exporter', aud: AUDIENCE, iat: seconds, exp: seconds + 600 })
    .setProtectedHeader({ alg: 'ES512' })
    .sign(attacker.privateKey);

describe('outside issuers: signature checks per token', () => {
  let idp: LocalIssuer;
  beforeEach(async () => {
    idp = await startLocalIssuer();
  });
  afterEach(async () => {
    await idp.close();
  });

  const keySets = (options: Parameters<typeof resolveFederation>[0] = {}) =>
    new IssuerKeySets({ settings: resolveFederation({ allowHttpLoopback: true, ...(options as object) }), now: () => now });

  it(`refuses a fetched JWK Set of more than ${MAX_KEYS_PER_SET} keys as unusable, with no signature check, and says why`, async () => {
    await idp.setMode({ body: JSON.stringify(p521Set(published, 1000)) }, 'jwks');
    const error = await verifyIssuerToken(keySets(), await kidlessToken(idp.issuer), { issuer: idp.issuer }, { audience: AUDIENCE }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(FederatedKeysUnavailableError);
    expect((error as Error).message).toBe(`The keys of ${idp.issuer} cannot be fetched: ${idp.jwksUri} holds 1000 keys, more than the 100 a JWK Set may hold`);
    expect(signatureChecks()).toBe(0);
  });

  it(`refuses a token without kid untried when more than ${MAX_CANDIDATE_KEYS} keys suit its algorithm (a set of ${MAX_KEYS_PER_SET})`, async () => {
    const sets = keySets({ issuers: { [idp.issuer]: { jwks: p521Set(published, MAX_KEYS_PER_SET) } } });
    expect(await verifyIssuerToken(sets, await kidlessToken(idp.issuer), { issuer: idp.issuer }, { audience: AUDIENCE })).toBeUndefined();
    expect(signatureChecks()).toBe(0);
  });

  it('checks one signature for a token whose kid names a key of a large set', async () => {
    const set = p521Set(published, MAX_KEYS_PER_SET - 1);
    set.keys.push({ ...attacker.publicJwk, kid: 'the-key', alg: 'ES512' });
    const sets = keySets({ issuers: { [idp.issuer]: { jwks: set } } });
    const token = await new SignJWT({ sub: 'x', aud: AUDIENCE, exp: seconds + 60 }).setIssuer(idp.issuer).setProtectedHeader({ alg: 'ES512', kid: 'the-key' }).sign(attacker.privateKey);
    expect(await verifyIssuerToken(sets, token, { issuer: idp.issuer }, { audience: AUDIENCE })).toBeDefined();
    expect(signatureChecks()).toBe(1);
  });

  it(`tries the ${MAX_CANDIDATE_KEYS} keys of a small set on a token without kid, and refetches once per interval, within a few checks a token`, async () => {
    await idp.setMode({ body: JSON.stringify(p521Set(published, MAX_CANDIDATE_KEYS)) }, 'jwks');
    let clock = now.getTime();
    const sets = new IssuerKeySets({ settings: resolveFederation({ allowHttpLoopback: true }), now: () => new Date(clock) });
    const options = { audience: AUDIENCE, currentDate: now };
    expect(await verifyIssuerToken(sets, await kidlessToken(idp.issuer), { issuer: idp.issuer }, options)).toBeUndefined();
    expect(signatureChecks()).toBe(MAX_CANDIDATE_KEYS);
    expect(idp.fetches('jwks')).toBe(1); // just fetched: no refetch within the refresh interval
    clock += 30_000;
    vi.mocked(jose.jwtVerify).mockClear();
    // No cached key made the signature: the issuer may have rotated its keys, so they are fetched again once.
    expect(await verifyIssuerToken(sets, await kidlessToken(idp.issuer), { issuer: idp.issuer }, options)).toBeUndefined();
    expect(idp.fetches('jwks')).toBe(2);
    expect(signatureChecks()).toBe(2 * MAX_CANDIDATE_KEYS);
  });

  // RFC 8017 §3.1 allows any public exponent below the modulus, and a verify costs a modular exponentiation
  // by it: one as long as the modulus makes each check over a hundred times dearer. Such a key, as for
  // registered keys and DPoP proofs, is never verified with.
  it('never checks a signature with an RSA key whose public exponent is not 3 to 2^32 - 1', async () => {
    const sets = keySets({ issuers: { [idp.issuer]: { jwks: { keys: [{ kty: 'RSA', ...longExponentRsaKey(), kid: 'dear', alg: 'RS256' }] } } } });
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const token = `${part({ alg: 'RS256', kid: 'dear' })}.${part({ iss: idp.issuer, sub: 'x', aud: AUDIENCE, exp: seconds + 60 })}.${randomBytes(384).toString('base64url')}`;
    expect(await verifyIssuerToken(sets, token, { issuer: idp.issuer }, { audience: AUDIENCE, currentDate: now })).toBeUndefined();
    expect(signatureChecks()).toBe(0);
  });

  // A verify's cost grows about with the square of the modulus: registered keys may have at most
  // 16384 bits, and an outside issuer's keys are held to the same size.
  it('never checks a signature with an RSA key of more than 16384 bits', async () => {
    const modulus = randomBytes(2049); // 16392 bits
    modulus[0]! |= 0x80;
    modulus[2048]! |= 1;
    const sets = keySets({ issuers: { [idp.issuer]: { jwks: { keys: [{ kty: 'RSA', n: modulus.toString('base64url'), e: 'AQAB', kid: 'huge', alg: 'RS256' }] } } } });
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const token = `${part({ alg: 'RS256', kid: 'huge' })}.${part({ iss: idp.issuer, sub: 'x', aud: AUDIENCE, exp: seconds + 60 })}.${randomBytes(2049).toString('base64url')}`;
    expect(await verifyIssuerToken(sets, token, { issuer: idp.issuer }, { audience: AUDIENCE, currentDate: now })).toBeUndefined();
    expect(signatureChecks()).toBe(0);
  });

  it(`refuses an inline JWK Set of more than ${MAX_KEYS_PER_SET} keys at start with a TypeError`, () => {
    expect(() => resolveFederation({ issuers: { [idp.issuer]: { jwks: p521Set(published, MAX_KEYS_PER_SET + 1) } } })).toThrow(
      new TypeError(`express-service-accounts: option "federation.issuers[${JSON.stringify(idp.issuer)}].jwks" holds 101 keys: a JWK Set may hold at most 100`),
    );
    expect(() => resolveFederation({ issuers: { [idp.issuer]: { jwks: p521Set(published, MAX_KEYS_PER_SET) } } })).not.toThrow();
  });
});

describe('key pairs: signature checks per assertion', () => {
  const CLIENT_ID = 'esa_V1StGXR8Z5jdHi6BmyT0aQ2k';
  let signer: { privateKey: KeyLike; publicJwk: PublicKeyJwk };
  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    const { kty, crv, x, y } = await exportJWK(pair.publicKey);
    signer = { privateKey: pair.privateKey, publicJwk: { kty: kty as 'EC', crv: crv as 'P-256', x: x!, y: y! } };
  });

  const key = (id: string, revoked = false): KeyRecord => ({ id, thumbprint: `thumb-${id}`, publicKey: signer.publicJwk, createdAt: now, lastUsedAt: null, revokedAt: revoked ? now : null });
  const account = (keys: KeyRecord[]): AccountRecord => ({ clientId: CLIENT_ID, name: 'ci', clientAccountId: null, scopes: [], enabled: true, createdAt: now, secrets: [], keys });
  const assertion = (kid?: string) =>
    new SignJWT({ iss: CLIENT_ID, sub: CLIENT_ID, aud: TEST_ISSUER, iat: seconds, exp: seconds + 60, jti: `jti-${Math.random()}` })
      .setProtectedHeader({ alg: 'ES256', ...(kid !== undefined && { kid }) })
      .sign(signer.privateKey);
  const options = { issuer: TEST_ISSUER, clockTolerance: 5, maxLifetime: 300, now };

  // A store may hold more keys than the admin API lets one add: the per-token rule applies still.
  it(`refuses an assertion without kid, untried, when the account holds more than ${MAX_CANDIDATE_KEYS} live keys of its type`, async () => {
    const many = Array.from({ length: 100 }, (_, i) => key(`esak_${i}`));
    expect(await new KeyAssertionChecker().verify(await assertion(), account(many), options)).toEqual({ failure: 'invalid_assertion' });
    expect(signatureChecks()).toBe(0);
    // Its kid names the key: one check.
    expect(await new KeyAssertionChecker().verify(await assertion('esak_99'), account(many), options)).toMatchObject({ key: { id: 'esak_99' } });
    expect(signatureChecks()).toBe(1);
  });

  it('tries revoked keys only within the same budget', async () => {
    const keys = [...Array.from({ length: 50 }, (_, i) => key(`esak_r${i}`, true)), key('esak_live')];
    // Signed by the live key: found among the candidates, revoked keys after it are not needed.
    expect(await new KeyAssertionChecker().verify(await assertion(), account(keys), options)).toMatchObject({ key: { id: 'esak_live' } });
    expect(signatureChecks()).toBe(1);
    const stranger = await generateKeyPair('ES256');
    const forged = await new SignJWT({ iss: CLIENT_ID, sub: CLIENT_ID, aud: TEST_ISSUER, exp: seconds + 60, jti: 'x' }).setProtectedHeader({ alg: 'ES256' }).sign(stranger.privateKey);
    vi.mocked(jose.jwtVerify).mockClear();
    expect(await new KeyAssertionChecker().verify(forged, account(keys), options)).toEqual({ failure: 'unknown_key' });
    expect(signatureChecks()).toBe(MAX_CANDIDATE_KEYS);
  });
});
