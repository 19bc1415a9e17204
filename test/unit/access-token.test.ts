/**
 * RFC 9068 access tokens (src/tokens/access-token.ts). CONTRACT §6: "header `typ: "at+jwt"` and a `kid`;
 * claims `iss`, `sub` (the client ID), `client_id`, `aud`, `iat`, `exp`, `jti`, `scope` when granted, and
 * the ID of the secret it was issued against".
 */
import jwt from 'jsonwebtoken';
import { describe, expect, it } from 'vitest';
import { InvalidTokenError, MemoryAccountStore, resolveConfig } from '../../src/index.js';
import { signAccessToken, verifyAccessToken } from '../../src/tokens/access-token.js';
import { TEST_HS256_KEY } from '../helpers/create-app.js';

const config = resolveConfig({
  store: new MemoryAccountStore(),
  issuer: 'https://api.test',
  audience: 'https://api.test/resources',
  signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY, kid: 'key-1' }],
});
const now = new Date('2026-11-22T10:00:00Z');
const nowSeconds = now.getTime() / 1000;
const input = { clientId: 'esa_client', secretId: 'SECRETID00000001', now, lifetime: 3600 };

function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidTokenError);
    return (err as InvalidTokenError).reason;
  }
  return undefined;
}

describe('access tokens', () => {
  it('signs an RFC 9068 JWT: typ at+jwt, kid, and the contract claims', () => {
    const { token, claims } = signAccessToken(config, { ...input, scopes: ['jobs:read', 'jobs:write'] });
    const decoded = jwt.decode(token, { complete: true })!;
    expect(decoded.header).toEqual({ alg: 'HS256', typ: 'at+jwt', kid: 'key-1' });
    expect(decoded.payload).toEqual({
      iss: 'https://api.test',
      sub: 'esa_client',
      client_id: 'esa_client',
      aud: 'https://api.test/resources',
      iat: nowSeconds,
      exp: nowSeconds + 3600,
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      scope: 'jobs:read jobs:write',
      secret_id: 'SECRETID00000001',
    });
    expect(claims).toEqual(decoded.payload);
  });

  // CONTRACT §3: "its tokens carry no `scope` claim".
  it('leaves out scope for an unrestricted account, and gives every token its own jti', () => {
    const a = signAccessToken(config, { ...input, scopes: undefined });
    const b = signAccessToken(config, { ...input, scopes: [] });
    expect(a.claims).not.toHaveProperty('scope');
    expect(b.claims).not.toHaveProperty('scope');
    expect(a.claims.jti).not.toBe(b.claims.jti);
  });

  it('verifies its own tokens and returns their claims', () => {
    const { token, claims } = signAccessToken(config, { ...input, scopes: ['jobs:read'] });
    expect(verifyAccessToken(config, token, now)).toEqual(claims);
    expect(verifyAccessToken(config, token, new Date(now.getTime() + 3604_000))).toEqual(claims);
  });

  // CONTRACT §3: "token expired | 401 | ... error_description="The access token expired"" (with the 5 s tolerance).
  it('refuses an expired token with reason expired, after the clock tolerance', () => {
    const { token } = signAccessToken(config, { ...input, scopes: undefined });
    expect(reasonOf(() => verifyAccessToken(config, token, new Date(now.getTime() + 3605_000)))).toBe('expired');
    expect(reasonOf(() => verifyAccessToken({ ...config, clockTolerance: 0 }, token, new Date(now.getTime() + 3600_000)))).toBe('expired');
  });

  // CONTRACT §3: "token forged, tampered, `alg: none`, wrong issuer or audience, garbage | 401 | invalid_token".
  it('refuses forged, wrong-claim and malformed tokens with reason invalid', () => {
    const { claims } = signAccessToken(config, { ...input, scopes: undefined });
    const sign = (payload: object, header: object = { alg: 'HS256', typ: 'at+jwt', kid: 'key-1' }, key = TEST_HS256_KEY) =>
      jwt.sign(payload, key, { algorithm: 'HS256', header: header as jwt.JwtHeader });
    const part = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const bad = {
      otherKey: sign(claims, undefined, 'another-key-of-at-least-32-bytes-long!'),
      unknownKid: sign(claims, { alg: 'HS256', typ: 'at+jwt', kid: 'key-2' }),
      noKid: sign(claims, { alg: 'HS256', typ: 'at+jwt' }),
      plainJwtTyp: sign(claims, { alg: 'HS256', typ: 'JWT', kid: 'key-1' }),
      algNone: `${part({ alg: 'none', typ: 'at+jwt', kid: 'key-1' })}.${part(claims)}.`,
      wrongIssuer: sign({ ...claims, iss: 'https://evil.test' }),
      wrongAudience: sign({ ...claims, aud: 'https://api.test' }),
      clientIdMismatch: sign({ ...claims, client_id: 'esa_other' }),
      noSecretId: sign({ ...claims, secret_id: undefined }),
      garbage: 'garbage',
      tooLong: `${'a'.repeat(3000)}.${'b'.repeat(1000)}.${'c'.repeat(100)}`,
    };
    for (const [name, token] of Object.entries(bad)) {
      expect(reasonOf(() => verifyAccessToken(config, token, now)), name).toBe('invalid');
    }
  });

  it('accepts the full media type application/at+jwt as typ (RFC 7515 §4.1.9)', () => {
    const { claims } = signAccessToken(config, { ...input, scopes: undefined });
    const token = jwt.sign(claims, TEST_HS256_KEY, { algorithm: 'HS256', header: { alg: 'HS256', typ: 'application/at+jwt', kid: 'key-1' } });
    expect(verifyAccessToken(config, token, now).sub).toBe('esa_client');
  });
});
