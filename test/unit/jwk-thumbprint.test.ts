/**
 * The one RFC 7638 thumbprint (src/keys/jwk-thumbprint.ts) behind the signing keyring's default `kid`
 * and a registered key's thumbprint: it must be the value every other RFC 7638 implementation gives,
 * or a resource server matching `kid`s from our JWKS by thumbprint would miss.
 */
import { generateKeyPairSync } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { MemoryAccountStore } from '../../src/index.js';
import { resolveConfig } from '../../src/config.js';
import { jwkThumbprint } from '../../src/keys/jwk-thumbprint.js';

describe('jwkThumbprint', () => {
  // RFC 7638 §3.1: the example RSA key's SHA-256 thumbprint is "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs".
  it('gives the RFC 7638 example value', () => {
    const n =
      '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMs' +
      'tn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5' +
      'hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw';
    expect(jwkThumbprint({ kty: 'RSA', n, e: 'AQAB' })).toBe('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
  });

  // RFC 7638 §3.2 (EC, RSA) and RFC 8037 §2 (OKP): only the required members, so jose agrees on every key type.
  it('equals jose calculateJwkThumbprint for EC P-256, RSA and Ed25519', async () => {
    const pairs = [generateKeyPairSync('ec', { namedCurve: 'P-256' }), generateKeyPairSync('rsa', { modulusLength: 2048 }), generateKeyPairSync('ed25519')];
    for (const { publicKey } of pairs) {
      const jwk = await exportJWK(publicKey);
      expect(jwkThumbprint(jwk)).toBe(await calculateJwkThumbprint(jwk, 'sha256'));
    }
  });

  // docs/configuration.md, signingKeys: "`kid`: the key ID put in token headers; by default derived
  // from the key (the RFC 7638 thumbprint for public keys)".
  it('is the default kid of an ES256 or RS256 signing key, as listed in the JWKS', async () => {
    for (const [alg, pair] of [
      ['ES256', generateKeyPairSync('ec', { namedCurve: 'P-256' })],
      ['RS256', generateKeyPairSync('rsa', { modulusLength: 2048 })],
    ] as const) {
      const key = pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
      const config = resolveConfig({ store: new MemoryAccountStore(), issuer: 'https://api.test', signingKeys: { alg, key } });
      const expected = await calculateJwkThumbprint(await exportJWK(pair.publicKey), 'sha256');
      expect(config.keyring.signer.kid).toBe(expected);
      expect(config.keyring.jwks.keys.map((k) => k.kid)).toEqual([expected]);
    }
  });

  it('refuses a key type it has no member list for', () => {
    expect(() => jwkThumbprint({ kty: 'oct' })).toThrow(TypeError);
    expect(() => jwkThumbprint({ kty: 'EC', crv: 'P-256', x: 'AA' })).toThrow(/"y"/);
  });
});
