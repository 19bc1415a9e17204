/**
 * `parseBasicAuthorization` (src/token-endpoint/basic-credentials.ts): HTTP Basic client credentials decoded per
 * RFC 6749 §2.3.1 and Appendix B.
 */
import { describe, expect, it } from 'vitest';
import { parseBasicAuthorization } from '../../src/client-auth/presented-credentials.js';

const basic = (pair: string) => `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;

describe('parseBasicAuthorization', () => {
  // RFC 6749 Appendix B: "the value consisting of the six Unicode code points (1) U+0020 (SPACE), (2)
  // U+0025 (PERCENT SIGN), (3) U+0026 (AMPERSAND), (4) U+002B (PLUS SIGN), (5) U+00A3 (POUND SIGN), and
  // (6) U+20AC (EURO SIGN) ... represented in the payload as: +%25%26%2B%C2%A3%E2%82%AC".
  it('decodes the Appendix B example in the client ID and in the secret', () => {
    expect(parseBasicAuthorization(basic('+%25%26%2B%C2%A3%E2%82%AC:+%25%26%2B%C2%A3%E2%82%AC'))).toEqual({
      kind: 'present',
      clientId: ' %&+\u00a3\u20ac',
      secret: ' %&+\u00a3\u20ac',
    });
  });

  // RFC 6749 §2.3.1: "The client identifier is encoded using the application/x-www-form-urlencoded encoding
  // algorithm per Appendix B, and the encoded value is used as the username".
  it('decodes an encoded ":" in the client ID and splits at the first raw ":"', () => {
    expect(parseBasicAuthorization(basic('my%3Aclient:s3cr%3At'))).toEqual({ kind: 'present', clientId: 'my:client', secret: 's3cr:t' });
    expect(parseBasicAuthorization(basic('id:a:b'))).toEqual({ kind: 'present', clientId: 'id', secret: 'a:b' });
  });

  it('passes URL-safe values through unchanged (our client IDs and secrets)', () => {
    const id = 'esa_V1StGXR8Z5jdHi6BmyT0aQ2k';
    const secret = 'esas_0123456789abcdef_0123456789abcdefghijABCDEFGHIJ0123456789abcdABCDEF';
    expect(parseBasicAuthorization(basic(`${id}:${secret}`))).toEqual({ kind: 'present', clientId: id, secret });
  });

  // RFC 7235 §2.1: the scheme is a case-insensitive token.
  it('matches the scheme case-insensitively', () => {
    for (const scheme of ['basic', 'BASIC', 'bAsIc']) {
      expect(parseBasicAuthorization(`${scheme} ${Buffer.from('a:b').toString('base64')}`)).toEqual({ kind: 'present', clientId: 'a', secret: 'b' });
    }
  });

  it('is absent without a header or with another scheme', () => {
    expect(parseBasicAuthorization(undefined)).toEqual({ kind: 'absent' });
    expect(parseBasicAuthorization('Bearer abc')).toEqual({ kind: 'absent' });
    expect(parseBasicAuthorization('Digest username="a"')).toEqual({ kind: 'absent' });
  });

  it.each([
    ['no credentials', 'Basic'],
    ['not base64', 'Basic !!!!'],
    ['a base64 length of 4n+1', 'Basic abcde'],
    ['no colon', basic('justaclientid')],
    ['an empty client ID', basic(':secret')],
    ['an empty secret', basic('client:')],
    ['a broken percent escape', basic('client:%E0%A4%A')],
    ['a lone percent', basic('cli%ent:secret')],
  ])('is malformed for %s', (_name, header) => {
    expect(parseBasicAuthorization(header)).toEqual({ kind: 'malformed' });
  });
});
