/**
 * src/client-auth/presented-credentials.ts. `parseBasicAuthorization`: HTTP Basic client credentials
 * decoded per RFC 6749 §2.3.1 and Appendix B. `presentedCredentials`: what a token request presents,
 * read once, and the method that decides it, chosen once (RFC 6749 §2.3: "The client MUST NOT use more
 * than one authentication method in each request").
 */
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../src/errors.js';
import {
  JWT_BEARER_ASSERTION_TYPE,
  parseBasicAuthorization,
  presentedCredentials,
  type CredentialFields,
} from '../../src/client-auth/presented-credentials.js';

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

const CLIENT_ID = 'esa_V1StGXR8Z5jdHi6BmyT0aQ2k';
const SECRET = 'esas_0123456789abcdef_0123456789abcdefghijABCDEFGHIJ0123456789abcdABCDEF';
const NO_FIELDS: CredentialFields = { client_id: undefined, client_secret: undefined, client_assertion_type: undefined, client_assertion: undefined };
const fields = (given: Partial<CredentialFields>): CredentialFields => ({ ...NO_FIELDS, ...given });
const assertionFields = (assertion: string, given: Partial<CredentialFields> = {}): CredentialFields =>
  fields({ client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: assertion, ...given });

/** A JWT with these claims (the signature does not matter here: the kind is read before any is checked). */
const jwt = (claims: Record<string, unknown>): Promise<string> =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('presented-credentials-test-key-0123456789'));

describe('presentedCredentials: the kind, decided once', () => {
  it('reads a secret from HTTP Basic', () => {
    expect(presentedCredentials(NO_FIELDS, basic(`${CLIENT_ID}:${SECRET}`))).toEqual({
      kind: 'secret',
      method: 'basic',
      clientId: CLIENT_ID,
      secret: SECRET,
      authorizationHeader: true,
    });
  });

  it('accepts a client_id in the body equal to the Basic one', () => {
    expect(presentedCredentials(fields({ client_id: CLIENT_ID }), basic(`${CLIENT_ID}:${SECRET}`))).toMatchObject({ kind: 'secret', method: 'basic' });
  });

  // RFC 6749 §2.3.1: "the client MAY include the client credentials in the request-body using ... client_id ... client_secret".
  it('reads a secret from the body', () => {
    expect(presentedCredentials(fields({ client_id: CLIENT_ID, client_secret: SECRET }), undefined)).toEqual({
      kind: 'secret',
      method: 'body',
      clientId: CLIENT_ID,
      secret: SECRET,
      authorizationHeader: false,
    });
  });

  it('is malformed for unreadable Basic credentials, and for half a pair in the body', () => {
    expect(presentedCredentials(NO_FIELDS, 'Basic !!!!')).toEqual({ kind: 'malformed', method: 'basic', authorizationHeader: true });
    expect(presentedCredentials(fields({ client_id: CLIENT_ID }), undefined)).toEqual({ kind: 'malformed', method: 'body', clientId: CLIENT_ID, authorizationHeader: false });
    expect(presentedCredentials(fields({ client_secret: SECRET }), undefined)).toEqual({ kind: 'malformed', method: 'body', authorizationHeader: false });
  });

  it('is none without credentials; another Authorization scheme still asks for a Basic challenge', () => {
    expect(presentedCredentials(NO_FIELDS, undefined)).toEqual({ kind: 'none', method: 'none', authorizationHeader: false });
    expect(presentedCredentials(NO_FIELDS, 'Bearer abc')).toEqual({ kind: 'none', method: 'none', authorizationHeader: true });
  });

  // RFC 7523 §3: a client authenticating with its own key names itself as both "iss" and "sub".
  it('is a key-pair assertion when iss equals sub, with its claims read and the client_id beside it', async () => {
    const claims = { iss: CLIENT_ID, sub: CLIENT_ID, aud: 'https://api.test', exp: 2_000_000_000, jti: 'a-1' };
    const assertion = await jwt(claims);
    expect(presentedCredentials(assertionFields(assertion, { client_id: CLIENT_ID }), undefined)).toEqual({
      kind: 'key',
      method: 'assertion',
      assertion,
      claims,
      clientId: CLIENT_ID,
      authorizationHeader: false,
    });
  });

  it('is a federated token when iss differs from sub, with the issuer and subject it names', async () => {
    const assertion = await jwt({ iss: 'https://token.actions.githubusercontent.com', sub: 'repo:acme/billing:ref:refs/heads/main', aud: 'https://api.test' });
    expect(presentedCredentials(assertionFields(assertion), undefined)).toEqual({
      kind: 'federated',
      method: 'assertion',
      assertion,
      names: { issuer: 'https://token.actions.githubusercontent.com', subject: 'repo:acme/billing:ref:refs/heads/main' },
      authorizationHeader: false,
    });
  });

  it('is a key-pair assertion without claims when the assertion is no JWT, and when iss or sub is missing', async () => {
    expect(presentedCredentials(assertionFields('not.a.jwt'), undefined)).toEqual({
      kind: 'key',
      method: 'assertion',
      assertion: 'not.a.jwt',
      claims: undefined,
      authorizationHeader: false,
    });
    const withoutSub = await jwt({ iss: 'https://issuer.example' });
    expect(presentedCredentials(assertionFields(withoutSub), undefined)).toMatchObject({ kind: 'key', claims: { iss: 'https://issuer.example' } });
  });
});

describe('presentedCredentials: requests that are not one method (400 invalid_request)', () => {
  const invalid = (given: CredentialFields, authorization: string | undefined): InvalidRequestError => {
    let thrown: unknown;
    try {
      presentedCredentials(given, authorization);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidRequestError);
    expect((thrown as InvalidRequestError).status).toBe(400);
    return thrown as InvalidRequestError;
  };

  // RFC 6749 §2.3: "The client MUST NOT use more than one authentication method in each request."
  it('refuses an assertion with a secret, in the body or in Basic', () => {
    const message = 'Send either a client assertion or a client secret, not both';
    expect(invalid(assertionFields('x.y.z', { client_secret: SECRET }), undefined).message).toBe(message);
    expect(invalid(assertionFields('x.y.z'), basic(`${CLIENT_ID}:${SECRET}`)).message).toBe(message);
    // Even unreadable Basic credentials are a second method.
    expect(invalid(assertionFields('x.y.z'), 'Basic !!!!').message).toBe(message);
  });

  it('refuses Basic credentials with a secret in the body, or with another client_id in the body', () => {
    const message = 'Send client credentials either in HTTP Basic or in the body, not both';
    expect(invalid(fields({ client_secret: SECRET }), basic(`${CLIENT_ID}:${SECRET}`)).message).toBe(message);
    expect(invalid(fields({ client_id: 'esa_AAAAAAAAAAAAAAAAAAAAAAAA' }), basic(`${CLIENT_ID}:${SECRET}`)).message).toBe(message);
    expect(invalid(fields({ client_id: CLIENT_ID }), 'Basic !!!!').message).toBe(message);
  });

  // RFC 7521 §4.2: "client_assertion_type ... REQUIRED", "client_assertion ... REQUIRED".
  it('refuses a client_assertion_type without client_assertion', () => {
    expect(invalid(fields({ client_assertion_type: JWT_BEARER_ASSERTION_TYPE }), undefined).message).toBe('The client_assertion parameter is missing');
  });

  it('refuses a client_assertion without, or with another, client_assertion_type', () => {
    const message = `The client_assertion_type parameter must be ${JWT_BEARER_ASSERTION_TYPE}`;
    expect(invalid(fields({ client_assertion: 'x.y.z' }), undefined).message).toBe(message);
    expect(invalid(fields({ client_assertion: 'x.y.z', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer' }), undefined).message).toBe(message);
  });
});
