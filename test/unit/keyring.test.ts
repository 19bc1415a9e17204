/**
 * The keyring (src/access-tokens/keyring.ts). CONTRACT §6: "one key signs, every listed key verifies, so keys
 * rotate without rejecting live tokens. HS256 and at least one asymmetric algorithm (ES256 or RS256)";
 * the JWKS holds "the public keys only".
 */
import { createPublicKey, createSecretKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { describe, expect, it } from 'vitest';
import { MemoryAccountStore, createServiceAccounts, type SigningKeyOptions } from '../../src/index.js';
import { resolveConfig } from '../../src/config.js';
import { signAccessToken, verifyAccessToken } from '../../src/access-tokens/access-token.js';
import { TEST_HS256_KEY } from '../helpers/create-app.js';

const p256 = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    privatePem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
  };
};
const configWith = (signingKeys: SigningKeyOptions | SigningKeyOptions[]) =>
  resolveConfig({ store: new MemoryAccountStore(), issuer: 'https://api.test', signingKeys });
const now = new Date('2026-11-22T10:00:00Z');
const input = { clientId: 'esa_client', secretId: 'SECRETID00000001', scopes: undefined, now, lifetime: 3600 };

describe('keyring', () => {
  it('signs ES256 with a generated P-256 key, kid = RFC 7638 thumbprint, verifiable with the public key', () => {
    const key = p256();
    const config = configWith({ alg: 'ES256', key: key.privatePem });
    const { token } = signAccessToken(config, input);
    const header = jwt.decode(token, { complete: true })!.header;
    expect(header).toEqual({ alg: 'ES256', typ: 'at+jwt', kid: config.keyring.signer.kid });
    expect(config.keyring.signer.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(verifyAccessToken(config, token, now).sub).toBe('esa_client');
    // Anyone with the public key can verify it (resource servers may verify, CONTRACT §6).
    expect(() => jwt.verify(token, key.publicPem, { algorithms: ['ES256'], clockTimestamp: now.getTime() / 1000 })).not.toThrow();
  });

  it('a public key verifies only: old tokens stay valid after rotation, and it never signs', () => {
    const oldKey = p256();
    const newKey = p256();
    const before = configWith({ alg: 'ES256', key: oldKey.privatePem });
    const { token: oldToken } = signAccessToken(before, input);

    const after = configWith([
      { alg: 'ES256', key: newKey.privatePem },
      { alg: 'ES256', key: oldKey.publicPem },
    ]);
    expect(after.keyring.signer.kid).not.toBe(before.keyring.signer.kid);
    expect(verifyAccessToken(after, oldToken, now).sub).toBe('esa_client');
    const oldEntry = after.keyring.keys.get(before.keyring.signer.kid)!;
    expect(oldEntry.signKey).toBeUndefined();
    const { token: newToken } = signAccessToken(after, input);
    expect(jwt.decode(newToken, { complete: true })!.header.kid).toBe(after.keyring.signer.kid);

    expect(() => configWith({ alg: 'ES256', key: oldKey.publicPem })).toThrow(/"signingKeys" has no key that can sign/);
  });

  // CONTRACT §6: "`GET /.well-known/jwks.json` holding the public keys only".
  it('the JWKS holds public keys only: no private part d, and no HS256 key', () => {
    const a = p256();
    const b = p256();
    const config = configWith([
      { alg: 'ES256', key: a.privatePem },
      { alg: 'ES256', key: b.publicPem, kid: 'old' },
      { alg: 'HS256', key: TEST_HS256_KEY, kid: 'shared' },
    ]);
    const { keys } = config.keyring.jwks;
    expect(keys).toHaveLength(2);
    for (const jwk of keys) {
      expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', x: expect.any(String), y: expect.any(String) });
      expect(jwk).not.toHaveProperty('d');
      expect(jwk).not.toHaveProperty('k');
    }
    expect(keys.map((k) => k.kid)).toEqual([config.keyring.signer.kid, 'old']);
    const text = JSON.stringify(keys);
    expect(text).not.toContain(TEST_HS256_KEY);
    expect(text).not.toContain(Buffer.from(TEST_HS256_KEY).toString('base64url'));
    // The same set through the public API.
    const sa = createServiceAccounts({ store: new MemoryAccountStore(), issuer: 'https://api.test', signingKeys: { alg: 'ES256', key: a.privatePem } });
    expect(sa.jwks.keys.every((k) => !('d' in k))).toBe(true);
  });

  it('HS256 keys have a stable derived kid that does not reveal the key, and an empty JWKS', () => {
    const one = configWith({ alg: 'HS256', key: TEST_HS256_KEY });
    const two = configWith({ alg: 'HS256', key: TEST_HS256_KEY });
    expect(one.keyring.signer.kid).toBe(two.keyring.signer.kid);
    expect(one.keyring.signer.kid).toMatch(/^hs256-/);
    expect(one.keyring.signer.kid).not.toContain(TEST_HS256_KEY.slice(0, 8));
    expect(one.keyring.jwks.keys).toEqual([]);
  });

  it('pins each key to its algorithm: an HS256 token under an ES256 kid is refused', () => {
    const key = p256();
    const config = configWith({ alg: 'ES256', key: key.privatePem });
    const { claims } = signAccessToken(config, input);
    // The classic confusion attack: HMAC-sign with the public key's PEM as the secret.
    const forged = jwt.sign(claims, TEST_HS256_KEY, { algorithm: 'HS256', header: { alg: 'HS256', typ: 'at+jwt', kid: config.keyring.signer.kid } });
    expect(() => verifyAccessToken(config, forged, now)).toThrow(/invalid/);
  });

  // jsonwebtoken refuses a PEM key as an HMAC secret ("secretOrPublicKey must be a symmetric key"):
  // a public key is no secret, and here it may even be published in the JWK Set beside it.
  it('refuses a PEM key given as an HS256 secret: tokens signed with the published public key are never accepted', () => {
    const key = p256();
    const cert = '-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n';
    for (const pem of [key.publicPem, key.privatePem, Buffer.from(key.publicPem), cert]) {
      expect(() => configWith({ alg: 'HS256', key: pem })).toThrow(/"signingKeys\[0\]\.key" is a PEM key: HS256 needs a random shared secret/);
    }
    expect(() => configWith({ alg: 'HS256', key: createSecretKey(Buffer.from(key.publicPem)) })).toThrow(/is a PEM key/);
    // In a mixed keyring, whose JWK Set publishes that very public key.
    expect(() =>
      configWith([
        { alg: 'ES256', key: key.privatePem },
        { alg: 'HS256', key: key.publicPem, kid: 'shared' },
      ]),
    ).toThrow(/"signingKeys\[1\]\.key" is a PEM key/);
  });

  it('refuses keys of the wrong kind, naming the option', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'secp384r1' });
    expect(() => configWith({ alg: 'ES256', key: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() })).toThrow(
      /"signingKeys\[0\]\.key" must be an EC P-256 key/,
    );
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    expect(() => configWith({ alg: 'RS256', key: rsa })).toThrow(/"signingKeys\[0\]\.key" must be an RSA key of at least 2048 bits/);
    expect(() => configWith({ alg: 'ES256', key: TEST_HS256_KEY })).toThrow(TypeError);
  });

  // A token is refused past 8192 characters (docs/require-bearer.md): the signature of an RSA key above
  // 8192 bits, or a kid of thousands of characters, could make every token the server issues too long.
  it('refuses an RSA key above 8192 bits and a kid longer than 256 characters, naming the option', () => {
    // A verify-only public key of 8200 bits (a public modulus is not checked for primes: no slow key generation).
    const n = randomBytes(1025);
    n[0] = 0xff;
    const huge = createPublicKey({ key: { kty: 'RSA', n: n.toString('base64url'), e: 'AQAB' }, format: 'jwk' });
    expect(() => configWith([{ alg: 'HS256', key: TEST_HS256_KEY }, { alg: 'RS256', key: huge }])).toThrow(/"signingKeys\[1\]\.key" must be an RSA key of at most 8192 bits/);
    expect(() => configWith({ alg: 'HS256', key: TEST_HS256_KEY, kid: 'k'.repeat(257) })).toThrow(/"signingKeys\[0\]\.kid" must be a non-empty string of at most 256 characters/);
    expect(() => configWith({ alg: 'HS256', key: TEST_HS256_KEY, kid: 'k'.repeat(256) })).not.toThrow();
  });
});
