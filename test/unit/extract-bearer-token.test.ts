/**
 * `extractBearerToken` (src/bearer/extract-bearer-token.ts): CONTRACT §3 rows 1 and 2.
 */
import { describe, expect, it } from 'vitest';
import { InvalidRequestError, MissingTokenError } from '../../src/index.js';
import { extractBearerToken, hasRepeatedAuthorization, presentsBearer } from '../../src/bearer/extract-bearer-token.js';

describe('extractBearerToken', () => {
  // RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token.
  it('returns the token of `Bearer <token>`', () => {
    expect(extractBearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(extractBearerToken('Bearer   abc-_~+/=')).toBe('abc-_~+/=');
    expect(extractBearerToken('  Bearer abc  ')).toBe('abc');
  });

  // CONTRACT §3: "The scheme name is matched case-insensitively (RFC 7235)."
  it.each(['bearer', 'BEARER', 'bEaReR'])('matches the scheme %s case-insensitively', (scheme) => {
    expect(extractBearerToken(`${scheme} tok`)).toBe('tok');
  });

  // CONTRACT §3: "no `Authorization` header, or another scheme | 401 | ... with no `error` attribute".
  it.each([undefined, '', 'Basic dXNlcjpwYXNz', 'Token abc', 'Bearerabc', 'DPoP abc', 'Digest username="x"'])(
    'throws MissingTokenError (401, no error attribute) for %j',
    (header) => {
      expect(() => extractBearerToken(header)).toThrow(MissingTokenError);
    },
  );

  // CONTRACT §3: "malformed header (`Bearer` with no token, two tokens) | 400 | ... error="invalid_request"".
  it.each(['Bearer', 'Bearer ', 'bearer    ', 'Bearer a b', 'Bearer a,b', 'Bearer a\tb'])('throws InvalidRequestError (400) for %j', (header) => {
    let caught: unknown;
    try {
      extractBearerToken(header);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InvalidRequestError);
    expect((caught as InvalidRequestError).status).toBe(400);
  });
});

describe('presentsBearer', () => {
  // RFC 7235 §2.1: "the case-insensitive token [auth-scheme]": every Authorization header whose scheme
  // is Bearer, well-formed or not, sends requireActor() down the bearer path.
  it.each([
    [['Authorization', 'Bearer abc']],
    [['authorization', 'bearer abc']],
    [['AUTHORIZATION', '  BEARER abc']],
    [['Authorization', 'Bearer']],
    [['Authorization', 'Bearer a b']],
    [['Cookie', 'sid=1', 'Authorization', 'Basic dTpw', 'Authorization', 'Bearer abc']],
  ])('true for %j', (raw) => {
    expect(presentsBearer(raw)).toBe(true);
  });

  it.each([[[]], [['Cookie', 'sid=1']], [['Authorization', 'Basic dTpw']], [['Authorization', 'Bearerabc']], [['X-Authorization', 'Bearer abc']]])(
    'false for %j',
    (raw) => {
      expect(presentsBearer(raw)).toBe(false);
    },
  );
});

describe('hasRepeatedAuthorization', () => {
  // RFC 6750 §2: "Clients MUST NOT use more than one method to transmit the token in each request".
  // Node keeps only the first of several Authorization headers, so the raw list is read; header
  // names match case-insensitively (RFC 9110 §5.1), and a header's value is never taken for a name.
  it.each([
    [['Authorization', 'Bearer a', 'Authorization', 'Bearer b'], true],
    [['authorization', 'Bearer a', 'Cookie', 'sid=1', 'AUTHORIZATION', 'Basic dTpw'], true],
    [['Authorization', 'Bearer a'], false],
    [['X-Note', 'Authorization', 'Authorization', 'Bearer a'], false],
    [['X-Authorization', 'Bearer a', 'Authorization', 'Bearer b'], false],
    [[], false],
  ] as const)('%j → %s', (raw, expected) => {
    expect(hasRepeatedAuthorization(raw)).toBe(expected);
  });
});
