/**
 * Key pairs and client assertions (`private_key_jwt`, RFC 7523) as a client would make them with
 * `jose`: a key pair of the given algorithm, its public half as PEM, and a signed assertion whose
 * claims and header each test may change.
 */
import { randomUUID, sign, type KeyObject } from 'node:crypto';
import { base64url, exportSPKI, generateKeyPair, SignJWT, type JWTPayload, type KeyLike } from 'jose';
import { TEST_ISSUER } from './create-app.js';

export type AssertionAlg = 'ES256' | 'RS256' | 'PS256' | 'EdDSA' | 'Ed25519';

export interface TestKeyPair {
  readonly alg: AssertionAlg;
  readonly privateKey: KeyLike;
  readonly publicPem: string;
}

/** A fresh key pair for `alg` (RSA: 2048 bits; EdDSA and Ed25519, its fully specified name: Ed25519). */
export async function newKeyPair(alg: AssertionAlg = 'ES256'): Promise<TestKeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg === 'Ed25519' ? 'EdDSA' : alg, alg === 'EdDSA' || alg === 'Ed25519' ? { crv: 'Ed25519' } : {});
  return { alg, privateKey, publicPem: await exportSPKI(publicKey) };
}

export interface AssertionOptions {
  /** Defaults: `iss` = `sub` = the client ID, `aud` the test issuer, `iat` now, `exp` in 60 s, a random `jti`. */
  readonly claims?: JWTPayload;
  /** Claims to leave out. */
  readonly omit?: readonly string[];
  /** Extra protected header parameters (`kid`, `crit`, …). */
  readonly header?: Record<string, unknown>;
  /** Seconds since the epoch that count as now. */
  readonly now?: number;
}

/** A client assertion for `clientId`, signed with the key pair, as RFC 7523 §3 describes it. */
export async function signAssertion(pair: TestKeyPair, clientId: string, options: AssertionOptions = {}): Promise<string> {
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const claims: JWTPayload = { iss: clientId, sub: clientId, aud: TEST_ISSUER, iat: now, exp: now + 60, jti: randomUUID(), ...options.claims };
  for (const name of options.omit ?? []) delete claims[name];
  return new SignJWT(claims).setProtectedHeader({ alg: pair.alg, ...options.header }).sign(pair.privateKey);
}

/** The body fields of a token request authenticated by `assertion` (RFC 7521 §4.2). */
export function assertionFields(assertion: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    grant_type: 'client_credentials',
    client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    client_assertion: assertion,
    ...extra,
  };
}

/**
 * An ES256 JWS of exactly this header and payload, signed with node:crypto: for headers `jose` itself
 * refuses to sign (an unknown `crit` extension).
 */
export function signRawEs256(pair: TestKeyPair, header: Record<string, unknown>, payload: JWTPayload): string {
  const input = `${base64url.encode(JSON.stringify({ alg: 'ES256', ...header }))}.${base64url.encode(JSON.stringify(payload))}`;
  const signature = sign('sha256', Buffer.from(input), { key: pair.privateKey as KeyObject, dsaEncoding: 'ieee-p1363' });
  return `${input}.${base64url.encode(signature)}`;
}
