/**
 * RFC 9068 access tokens (src/access-tokens/access-token.ts). CONTRACT §6: "header `typ: "at+jwt"` and a `kid`;
 * claims `iss`, `sub` (the client ID), `client_id`, `aud`, `iat`, `exp`, `jti`, `scope` when granted, and
 * the ID of the secret it was issued against".
 */
import { createHmac } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { describe, expect, it } from 'vitest';
import { InvalidTokenError } from '../../src/index.js';
import { readVerifiedClaims, signAccessToken, verifyAccessToken } from '../../src/access-tokens/access-token.js';
import { TEST_HS256_KEY } from '../helpers/create-app.js';
import { TOKEN_TEST_NOW, tokenConfig } from '../helpers/token-settings.js';

const config = tokenConfig;
const now = TOKEN_TEST_NOW;
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
      // One string, as issued: which API it names is decided by the token check and requireBearer.
      audienceList: sign({ ...claims, aud: ['https://api.test/resources'] }),
      noAudience: sign({ ...claims, aud: undefined }),
      clientIdMismatch: sign({ ...claims, client_id: 'esa_other' }),
      noSecretId: sign({ ...claims, secret_id: undefined }),
      garbage: 'garbage',
      tooLong: `${'a'.repeat(6000)}.${'b'.repeat(2100)}.${'c'.repeat(100)}`,
    };
    for (const [name, token] of Object.entries(bad)) {
      expect(reasonOf(() => verifyAccessToken(config, token, now)), name).toBe('invalid');
    }
  });

  // RFC 8707: a token may be for one of its account's resources, so the signature check takes any
  // one-string audience; test/unit/token-check.test.ts and the bearer tests check which.
  it('verifies a token issued for a resource, and returns its aud', () => {
    const { token } = signAccessToken(config, { ...input, scopes: undefined, audience: 'https://billing.test' });
    expect(verifyAccessToken(config, token, now).aud).toBe('https://billing.test');
  });

  it('accepts the full media type application/at+jwt as typ (RFC 7515 §4.1.9)', () => {
    const { claims } = signAccessToken(config, { ...input, scopes: undefined });
    const token = jwt.sign(claims, TEST_HS256_KEY, { algorithm: 'HS256', header: { alg: 'HS256', typ: 'application/at+jwt', kid: 'key-1' } });
    expect(verifyAccessToken(config, token, now).sub).toBe('esa_client');
  });
});

/**
 * Checks beyond the signature. These tokens carry a valid signature by the keyring's own HS256 key:
 * only the attacked property differs, so each rule is what stands between the token and acceptance.
 */
describe('access tokens: header and date checks beyond the signature', () => {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  /** HS256 over any header and payload, built with node:crypto so no library tidies them up. */
  const forge = (payload: object, header: object = {}) => {
    const input = `${part({ alg: 'HS256', typ: 'at+jwt', kid: 'key-1', ...header })}.${part(payload)}`;
    return `${input}.${createHmac('sha256', TEST_HS256_KEY).update(input).digest('base64url')}`;
  };
  const base = () => signAccessToken(config, { ...input, scopes: undefined }).claims;
  const reasonAt = (token: string, at = now) => reasonOf(() => verifyAccessToken(config, token, at));

  it('the forging helper makes tokens that verify (control)', () => {
    const claims = base();
    expect(verifyAccessToken(config, forge(claims), now)).toEqual(claims);
    expect(verifyAccessToken(config, forge(claims, { b64: true }), now)).toEqual(claims);
  });

  // RFC 7515 §4.1.11: "If any of the listed extension Header Parameters are not understood and supported
  // by the recipient, then the JWS is invalid." We understand none.
  it('refuses a token with a crit header', () => {
    for (const crit of [['exp'], ['b64'], ['http://example.com/ext'], [], 'exp', null]) {
      expect(reasonAt(forge(base(), { crit, 'http://example.com/ext': true })), JSON.stringify(crit)).toBe('invalid');
    }
  });

  // RFC 7797 §3: with "b64": false the payload is signed unencoded; we never issue such tokens.
  it('refuses a token with b64: false', () => {
    for (const b64 of [false, 'false', 0, null]) {
      expect(reasonAt(forge(base(), { b64 })), JSON.stringify(b64)).toBe('invalid');
    }
  });

  // RFC 7519 §4.1.6: "iat" is the time the JWT was issued; one from beyond our clock tolerance is forged.
  it('refuses a token issued later than now plus the clock tolerance', () => {
    const issued = (iat: number) => forge({ ...base(), iat, exp: iat + 3600 });
    expect(verifyAccessToken(config, issued(nowSeconds + 5), now).iat).toBe(nowSeconds + 5); // within the 5 s tolerance
    expect(reasonAt(issued(nowSeconds + 6))).toBe('invalid');
    expect(reasonAt(issued(nowSeconds + 86_400))).toBe('invalid');
  });

  // RFC 7519 §4.1.4, §4.1.6: a token cannot expire before it was issued.
  it('refuses a token whose iat is after its exp', () => {
    expect(reasonAt(forge({ ...base(), iat: nowSeconds + 3, exp: nowSeconds + 2 }))).toBe('invalid');
  });

  // RFC 7519 §2: NumericDate is seconds since the epoch; we accept whole seconds from 1970 to 9999 only.
  it('refuses an exp that is not a whole number of seconds in range', () => {
    for (const exp of [nowSeconds + 3600.5, 2 ** 53, 1e15, 253_402_300_800, 0, -1, `${nowSeconds + 3600}`, null]) {
      expect(reasonAt(forge({ ...base(), exp })), String(exp)).toBe('invalid');
    }
  });

  it('refuses an iat that is not a whole number of seconds in range', () => {
    for (const iat of [nowSeconds - 0.5, 0, -1, -(2 ** 53), `${nowSeconds}`, null]) {
      expect(reasonAt(forge({ ...base(), iat })), String(iat)).toBe('invalid');
    }
  });

  // RFC 7519 §4.1.5: "nbf" is optional; when present it is a NumericDate, and the token is not accepted before it.
  it('refuses an nbf that is not a whole number of seconds in range, or in the future beyond the tolerance', () => {
    expect(verifyAccessToken(config, forge({ ...base(), nbf: nowSeconds + 5 }), now).sub).toBe('esa_client');
    for (const nbf of [nowSeconds - 0.5, 0, -1, 1e15, `${nowSeconds}`, null, nowSeconds + 6]) {
      expect(reasonAt(forge({ ...base(), nbf })), String(nbf)).toBe('invalid');
    }
  });

  // readVerifiedClaims() reads an expired token's claims for the audit event: 'expired' promises they are well-formed.
  it('calls a token expired only when its claims are well-formed, as readVerifiedClaims agrees', () => {
    const later = new Date(now.getTime() + 7200_000);
    const expired = forge(base());
    expect(reasonAt(expired, later)).toBe('expired');
    expect(readVerifiedClaims(expired)).toMatchObject({ sub: 'esa_client' });
    const malformed = forge({ ...base(), iat: nowSeconds - 0.5 });
    expect(reasonAt(malformed, later)).toBe('invalid');
    expect(readVerifiedClaims(malformed)).toBeUndefined();
    expect(reasonAt(forge({ ...base(), exp: -1 }))).toBe('invalid');
  });
});
