/**
 * @module keyring
 * Signing keys turned into `crypto.KeyObject`s once, at start-up: one key signs, every key verifies,
 * and each key pins its own algorithm so a token can never choose one.
 */
import { createHmac, createPrivateKey, createPublicKey, createSecretKey, KeyObject } from 'node:crypto';
import { jwkThumbprint } from '../keys/jwk-thumbprint.js';

/**
 * The signing algorithms supported.
 *
 * @example
 * ```ts
 * import { readFileSync } from 'node:fs'
 * import type { SigningAlgorithm, SigningKeyOptions } from 'express-service-accounts'
 *
 * // ES256 and RS256 publish their public key in `sa.jwks`; HS256 keys are shared secrets.
 * const alg: SigningAlgorithm = 'ES256'
 * const signingKeys: SigningKeyOptions[] = [{ alg, key: readFileSync('es256-private.pem', 'utf8') }]
 * ```
 */
export type SigningAlgorithm = 'HS256' | 'ES256' | 'RS256';

/**
 * One key of the keyring.
 *
 * @example
 * ```ts
 * import { readFileSync } from 'node:fs'
 * import type { SigningKeyOptions } from 'express-service-accounts'
 *
 * // Rotation: the new ES256 key signs; the old HS256 key still verifies the tokens it signed.
 * const signingKeys: SigningKeyOptions[] = [
 *   { alg: 'ES256', key: readFileSync('es256-private.pem', 'utf8') },
 *   { alg: 'HS256', key: process.env.TOKEN_SIGNING_KEY! }, // ≥ 32 bytes
 * ]
 * ```
 */
export interface SigningKeyOptions {
  /** `HS256` (shared secret), `ES256` (P-256) or `RS256` (RSA of 2048 to 8192 bits). */
  alg: SigningAlgorithm;
  /**
   * HS256: at least 32 random bytes (a string is taken as its UTF-8 bytes), never a PEM key. ES256/RS256: a PEM private key
   * (can sign) or public key (verifies only), or a `KeyObject`.
   */
  key: string | Buffer | KeyObject;
  /** Key ID put in the token header, at most 256 characters. Default: derived from the key (RFC 7638 thumbprint for public keys). */
  kid?: string;
}

/** A resolved key: its verification key always, its signing key when it has one. */
export interface KeyringKey {
  readonly kid: string;
  readonly alg: SigningAlgorithm;
  readonly verifyKey: KeyObject;
  readonly signKey: KeyObject | undefined;
}

/** The resolved keyring. */
export interface Keyring {
  /**
   * The key that signs new tokens: the first key that can sign, with the JWS protected header it
   * writes, `{ alg, typ: 'at+jwt', kid }` (RFC 9068 §2.1), base64url-encoded once.
   */
  readonly signer: KeyringKey & { readonly signKey: KeyObject; readonly encodedHeader: string };
  /** Every key by `kid`. */
  readonly keys: ReadonlyMap<string, KeyringKey>;
  /** Public keys (asymmetric ones only) as an RFC 7517 JWK Set. */
  readonly jwks: { readonly keys: readonly Record<string, unknown>[] };
}

type Fail = (name: string, problem: string) => never;

function encodeHeader(key: KeyringKey): string {
  return Buffer.from(JSON.stringify({ alg: key.alg, typ: 'at+jwt', kid: key.kid }), 'utf8').toString('base64url');
}

const MIN_HS256_BYTES = 32;
/** Largest RSA signing key: its 1 KiB signature, with the largest claims, keeps a token within the 8192 characters accepted. */
const MAX_RSA_BITS = 8192;
/** Longest `kid`: it is in every token's header. */
const MAX_KID_LENGTH = 256;
const PEM_BOUNDARY = /-----BEGIN [A-Z0-9 ]+-----/;

function resolveSecretKey(key: SigningKeyOptions['key'], name: string, fail: Fail): KeyObject {
  let secret: KeyObject;
  if (key instanceof KeyObject) {
    if (key.type !== 'secret') fail(name, 'must be a secret key for HS256');
    secret = key;
  } else if (typeof key === 'string' || Buffer.isBuffer(key)) {
    secret = createSecretKey(typeof key === 'string' ? Buffer.from(key, 'utf8') : key);
  } else {
    return fail(name, 'must be a string, a Buffer or a KeyObject');
  }
  const size = secret.symmetricKeySize ?? 0;
  if (size < MIN_HS256_BYTES) fail(name, `is ${size} bytes; HS256 needs at least ${MIN_HS256_BYTES} (RFC 7518 §3.2)`);
  // A PEM key is no secret (its public part may even be in the JWK Set): anyone holding it could sign
  // tokens. jsonwebtoken refuses it as an HMAC key for the same reason.
  if (PEM_BOUNDARY.test(secret.export().toString('latin1'))) {
    fail(name, 'is a PEM key: HS256 needs a random shared secret; give a PEM key with alg ES256 or RS256');
  }
  return secret;
}

function resolveAsymmetricKey(
  options: SigningKeyOptions,
  name: string,
  fail: Fail,
): { verifyKey: KeyObject; signKey: KeyObject | undefined } {
  let key: KeyObject;
  try {
    if (options.key instanceof KeyObject) key = options.key;
    else {
      const text = Buffer.isBuffer(options.key) ? options.key.toString('utf8') : String(options.key);
      key = text.includes('PRIVATE KEY') ? createPrivateKey(text) : createPublicKey(text);
    }
  } catch {
    return fail(name, `is not a valid PEM key for ${options.alg}`);
  }
  if (key.type === 'secret') fail(name, `must be an asymmetric key for ${options.alg}`);
  const details = key.asymmetricKeyDetails ?? {};
  if (options.alg === 'ES256' && (key.asymmetricKeyType !== 'ec' || details.namedCurve !== 'prime256v1')) {
    fail(name, 'must be an EC P-256 key for ES256');
  }
  if (options.alg === 'RS256' && (key.asymmetricKeyType !== 'rsa' || (details.modulusLength ?? 0) < 2048)) {
    fail(name, 'must be an RSA key of at least 2048 bits for RS256');
  }
  // Its signature is a token's largest part: a larger key could make tokens too long to be accepted.
  if (options.alg === 'RS256' && (details.modulusLength ?? 0) > MAX_RSA_BITS) fail(name, `must be an RSA key of at most ${MAX_RSA_BITS} bits for RS256`);
  return key.type === 'private'
    ? { verifyKey: createPublicKey(key), signKey: key }
    : { verifyKey: key, signKey: undefined };
}

/**
 * Resolves the `signingKeys` option into a {@link Keyring}. Throws (through `fail`) on a short HS256 key,
 * an unknown algorithm, a key of the wrong type, duplicate `kid`s, or a keyring with no signing key.
 */
export function createKeyring(
  option: SigningKeyOptions | readonly SigningKeyOptions[] | undefined,
  fail: Fail,
): Keyring {
  const list = option === undefined ? [] : Array.isArray(option) ? option : [option as SigningKeyOptions];
  if (list.length === 0) fail('signingKeys', 'must list at least one key');
  const keys = new Map<string, KeyringKey>();
  let signer: Keyring['signer'] | undefined;
  const jwks: Record<string, unknown>[] = [];

  list.forEach((entry: SigningKeyOptions, index: number) => {
    const name = `signingKeys[${index}]`;
    if (typeof entry !== 'object' || entry === null) fail(name, 'must be an object { alg, key, kid? }');
    if (!['HS256', 'ES256', 'RS256'].includes(entry.alg)) {
      fail(`${name}.alg`, `must be one of HS256, ES256, RS256, got ${String(entry.alg)}`);
    }
    let resolved: KeyringKey;
    if (entry.alg === 'HS256') {
      const secret = resolveSecretKey(entry.key, `${name}.key`, fail);
      const kid =
        entry.kid ??
        `hs256-${createHmac('sha256', secret).update('express-service-accounts kid').digest('base64url').slice(0, 16)}`;
      resolved = { kid, alg: entry.alg, verifyKey: secret, signKey: secret };
    } else {
      const { verifyKey, signKey } = resolveAsymmetricKey(entry, `${name}.key`, fail);
      const jwk = verifyKey.export({ format: 'jwk' });
      const kid = entry.kid ?? jwkThumbprint(jwk);
      resolved = { kid, alg: entry.alg, verifyKey, signKey };
      jwks.push({ ...jwk, kid, alg: entry.alg, use: 'sig' });
    }
    if (typeof resolved.kid !== 'string' || resolved.kid === '' || resolved.kid.length > MAX_KID_LENGTH) fail(`${name}.kid`, `must be a non-empty string of at most ${MAX_KID_LENGTH} characters`);
    if (keys.has(resolved.kid)) fail(`${name}.kid`, `duplicates kid "${resolved.kid}"`);
    keys.set(resolved.kid, resolved);
    if (!signer && resolved.signKey) signer = { ...resolved, signKey: resolved.signKey, encodedHeader: encodeHeader(resolved) };
  });

  if (!signer) return fail('signingKeys', 'has no key that can sign (an HS256 key or a private ES256/RS256 key)');
  return Object.freeze({ signer, keys, jwks: Object.freeze({ keys: Object.freeze(jwks) }) });
}
