/**
 * signAccessToken builds the JWS compact serialization itself (RFC 7515 §7.1) with node:crypto. The
 * token format must not change: header `{ alg, typ: 'at+jwt', kid }` (RFC 9068 §2.1) and the claims
 * iss, sub, client_id, aud, iat, exp, jti, scope?, secret_id, in that order. For the deterministic
 * algorithms the bytes must equal what jsonwebtoken writes for the same claims and header; ES256
 * signatures are randomized, so they must verify with jsonwebtoken and be R || S (RFC 7518 §3.4).
 */
import { generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { describe, expect, it } from 'vitest';
import { MemoryAccountStore, type SigningKeyOptions } from '../../src/index.js';
import { resolveConfig } from '../../src/config.js';
import { signAccessToken, verifyAccessToken } from '../../src/access-tokens/access-token.js';
import { TEST_HS256_KEY } from '../helpers/create-app.js';

const pem = (type: 'rsa' | 'ec') => {
  const { privateKey } =
    type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
};
const configWith = (signingKeys: SigningKeyOptions) =>
  resolveConfig({ store: new MemoryAccountStore(), issuer: 'https://api.test', audience: 'https://api.test/v1', signingKeys });
const now = new Date('2026-11-22T10:00:00Z');

describe('signAccessToken', () => {
  for (const [alg, key] of [
    ['HS256', TEST_HS256_KEY],
    ['RS256', pem('rsa')],
  ] as const) {
    for (const scopes of [['jobs:read', 'jobs:write'], undefined]) {
      it(`${alg}, scopes ${scopes ? 'listed' : 'absent'}: the same bytes as jsonwebtoken`, () => {
        const config = configWith({ alg, key, kid: 'k1' });
        const { token, claims } = signAccessToken(config, { clientId: 'esa_c', secretId: 'S1', scopes, now, lifetime: 600 });
        expect(Object.keys(claims)).toEqual(['iss', 'sub', 'client_id', 'aud', 'iat', 'exp', 'jti', ...(scopes ? ['scope'] : []), 'secret_id']);
        const expected = jwt.sign({ ...claims }, config.keyring.signer.signKey, {
          algorithm: alg,
          keyid: 'k1',
          header: { alg, typ: 'at+jwt', kid: 'k1' },
        });
        expect(token).toBe(expected);
        expect(jwt.decode(token, { complete: true })!.header).toEqual({ alg, typ: 'at+jwt', kid: 'k1' });
        expect(verifyAccessToken(config, token, now)).toEqual(claims);
      });
    }
  }

  it('ES256: verifies with jsonwebtoken, and the signature is R || S (64 bytes)', () => {
    const config = configWith({ alg: 'ES256', key: pem('ec'), kid: 'e1' });
    const { token, claims } = signAccessToken(config, { clientId: 'esa_c', secretId: 'S1', scopes: ['a'], now, lifetime: 600 });
    expect(Buffer.from(token.split('.')[2]!, 'base64url')).toHaveLength(64);
    const key = config.keyring.keys.get('e1')!.verifyKey;
    expect(jwt.verify(token, key, { algorithms: ['ES256'], clockTimestamp: claims.iat })).toEqual(claims);
    expect(jwt.decode(token, { complete: true })!.header).toEqual({ alg: 'ES256', typ: 'at+jwt', kid: 'e1' });
    expect(verifyAccessToken(config, token, now)).toEqual(claims);
  });
});
