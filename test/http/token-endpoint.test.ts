/**
 * CONTRACT §2, the token endpoint `POST {mount}/token`: one `it` (or one `it` per variant) per row of
 * the table, each quoting the clause it checks. The whole file runs on Express 5 and Express 4, each
 * with and without the host's own global `express.json()` / `express.urlencoded()` (body rows differ
 * most there). The 429 row is the hardening suite's (test/hardening/failure-limiter.test.ts).
 */
import express5 from 'express';
import express4 from 'express4';
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryAccountStore, type CreatedAccount } from '../../src/index.js';
import { generateSecret } from '../../src/credentials/generate-credentials.js';
import { hashSecret } from '../../src/secrets/secret-verifier.js';
import { createTestApp, type TestAppOptions } from '../helpers/create-app.js';
import { expectNoCorsHeaders, expectNoSecret, expectNoStore, expectOAuthError } from '../helpers/expect-oauth-error.js';
import { FailingStore } from '../helpers/failing-store.js';
import { basicHeader, decodeToken, duplicateCredentialsJson, formEncode, withLastCharChanged } from '../helpers/tokens.js';

const VARIANTS = [
  { express: 5, hostParsers: false },
  { express: 4, hostParsers: false },
  { express: 5, hostParsers: true },
  { express: 4, hostParsers: true },
] as const;

const GRANT = { grant_type: 'client_credentials' } as const;
const BASIC_CHALLENGE = 'Basic realm="service-accounts"';

describe.each(VARIANTS)('POST /oauth/token (Express $express, host parsers: $hostParsers)', (variant) => {
  const make = (options: TestAppOptions = {}) => createTestApp({ express: variant.express, hostParsers: variant.hostParsers, ...options });

  let t: ReturnType<typeof make>;
  let account: CreatedAccount;
  let scoped: CreatedAccount;

  beforeEach(async () => {
    t = make();
    account = await t.sa.admin.createAccount({ name: 'procurement-portal', clientAccountId: 'acme' });
    scoped = await t.sa.admin.createAccount({ name: 'compliance-engine', scopes: ['jobs:read', 'jobs:write', 'reports:read'] });
  });

  const post = () => request(t.app).post('/oauth/token');

  /** Success: exactly `{access_token, token_type: "Bearer", expires_in: 3600}` (+ `scope`), with no-store headers. */
  function expectIssued(res: request.Response, scope?: string): void {
    expect(res.status, res.text).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      ...(scope !== undefined ? { scope } : {}),
    });
    expectNoStore(res);
    expectNoCorsHeaders(res);
  }

  describe('200: valid credentials, grant_type=client_credentials', () => {
    // CONTRACT §2 row 1: "valid credentials, `grant_type=client_credentials` | 200 | |
    // `{access_token, token_type: "Bearer", expires_in: 3600}` ... headers `Cache-Control: no-store`,
    // `Pragma: no-cache`". SPEC §4.1: "Request content types accepted: application/x-www-form-urlencoded".
    it('issues a token for credentials in a form body', async () => {
      const res = await post().type('form').send({ ...GRANT, client_id: account.clientId, client_secret: account.secret.value });
      expectIssued(res);
    });

    // SPEC §4.1: "application/json (accepted as an extension compatible with another identity provider's convention)."
    it('issues a token for credentials in a JSON body', async () => {
      const res = await post().send({ ...GRANT, client_id: account.clientId, client_secret: account.secret.value });
      expectIssued(res);
    });

    // SPEC §5.1: "authenticated by the client credentials ... by HTTP Basic authentication or in the request body".
    // Our client IDs and secrets are URL-safe, so plain (not urlencoded) Basic is the same bytes.
    it('issues a token for plain HTTP Basic credentials (URL-safe values need no encoding)', async () => {
      const res = await post().auth(account.clientId, account.secret.value).type('form').send(GRANT);
      expectIssued(res);
      const res2 = await post().set('Authorization', basicHeader(account.clientId, account.secret.value, false)).send(GRANT);
      expectIssued(res2);
    });

    // RFC 6749 §2.3.1: "The client identifier is encoded using the application/x-www-form-urlencoded
    // encoding algorithm per Appendix B, and the encoded value is used as the username; the client
    // password is encoded using the same algorithm and used as the password."
    it('decodes urlencoded Basic credentials: a client ID with ":" "%" "+" space and non-ASCII', async () => {
      const store = new MemoryAccountStore();
      const app = make({ store });
      const clientId = 'legacy:id%41+plus sp\u00e9\u20ac\u{1F511}';
      const secret = generateSecret();
      await store.createAccount({
        clientId,
        name: 'imported-legacy-client',
        clientAccountId: null,
        scopes: [],
        createdAt: app.clock.now(),
        secret: { id: secret.id, hash: await hashSecret(secret.value, 4), createdAt: app.clock.now() },
      });
      expect(formEncode(clientId)).toBe('legacy%3Aid%2541%2Bplus+sp%C3%A9%E2%82%AC%F0%9F%94%91');

      const res = await request(app.app).post('/oauth/token').set('Authorization', basicHeader(clientId, secret.value)).type('form').send(GRANT);
      expectIssued(res);
      expect(decodeToken((res.body as { access_token: string }).access_token).payload.sub).toBe(clientId);

      // The same ID, unencoded, is another client (its ':' would split the pair): refused, not mis-decoded.
      const raw = await request(app.app).post('/oauth/token').set('Authorization', basicHeader(clientId, secret.value, false)).type('form').send(GRANT);
      expectOAuthError(raw, 401, 'invalid_client', { challenge: BASIC_CHALLENGE });

      // In a form body the same ID travels form-encoded and decodes the same way.
      const body = await request(app.app).post('/oauth/token').type('form').send({ ...GRANT, client_id: clientId, client_secret: secret.value });
      expectIssued(body);
    });

    // RFC 9068 §2.2 / CONTRACT §6: the token carries `sub` (the client ID), `client_id`, `iss`, `aud`, `exp`.
    it('issues an RFC 9068 token valid for expires_in seconds', async () => {
      const res = await post().type('form').send({ ...GRANT, client_id: account.clientId, client_secret: account.secret.value });
      expectIssued(res);
      const { header, payload } = decodeToken((res.body as { access_token: string }).access_token);
      expect(header).toMatchObject({ alg: 'HS256', typ: 'at+jwt', kid: expect.any(String) });
      expect(payload).toMatchObject({ sub: account.clientId, client_id: account.clientId, iss: 'https://api.test', aud: 'https://api.test', secret_id: account.secret.id });
      expect((payload.exp as number) - (payload.iat as number)).toBe(3600);
      expect(payload.iat).toBe(Math.floor(t.clock.now().getTime() / 1000));
    });
  });

  // CONTRACT §2: "`grant_type` missing or not `client_credentials` (credentials valid) | 400 | `invalid_grant` | seed rule 1".
  // SPEC §4.1 rule 1: "When `grant_type` is missing or is not `client_credentials`, then the request fails with the error value `invalid_grant`."
  it.each([
    ['missing', {}],
    ['empty', { grant_type: '' }],
    ['password', { grant_type: 'password' }],
    ['authorization_code', { grant_type: 'authorization_code' }],
    ['client_credentials with another case', { grant_type: 'Client_Credentials' }],
    ['an unregistered URI', { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer' }],
  ])('400 invalid_grant when grant_type is %s and the credentials are valid', async (_name, fields) => {
    const form = await post().type('form').send({ ...fields, client_id: account.clientId, client_secret: account.secret.value });
    expectOAuthError(form, 400, 'invalid_grant', { challenge: null });
    expectNoStore(form);
    const basic = await post().auth(account.clientId, account.secret.value).send(fields);
    expectOAuthError(basic, 400, 'invalid_grant', { challenge: null });
  });

  // CONTRACT §2 rows 2 and 3: invalid_grant is for valid credentials; client authentication comes first
  // (RFC 6749 §5.2 "invalid_client: Client authentication failed").
  it('401 invalid_client, not invalid_grant, when grant_type is wrong and the credentials are bad', async () => {
    const res = await post().type('form').send({ grant_type: 'password', client_id: account.clientId, client_secret: generateSecret().value });
    expectOAuthError(res, 401, 'invalid_client');
    const missing = await post().type('form').send({ client_id: 'esa_nobody', client_secret: account.secret.value });
    expectOAuthError(missing, 401, 'invalid_client');
  });

  // CONTRACT §2: "unknown client ID, wrong secret, revoked secret, disabled account | 401 | `invalid_client` |
  // the four are indistinguishable in body, status and timing". SPEC §4.1 rule 2.
  it('401 invalid_client with one identical status and body for unknown client, wrong secret, revoked secret, disabled account', async () => {
    const revokedAccount = await t.sa.admin.createAccount({ name: 'revoked-one' });
    await t.sa.admin.addSecret(revokedAccount.clientId);
    await t.sa.admin.revokeSecret(revokedAccount.clientId, revokedAccount.secret.id);
    const disabledAccount = await t.sa.admin.createAccount({ name: 'disabled-one' });
    await t.sa.admin.disableAccount(disabledAccount.clientId);

    const attempts = {
      unknownClient: { client_id: 'esa_doesNotExist000000000000', client_secret: account.secret.value },
      wrongSecret: { client_id: account.clientId, client_secret: generateSecret().value },
      otherAccountsSecret: { client_id: account.clientId, client_secret: scoped.secret.value },
      revokedSecret: { client_id: revokedAccount.clientId, client_secret: revokedAccount.secret.value },
      disabledAccount: { client_id: disabledAccount.clientId, client_secret: disabledAccount.secret.value },
    };
    const responses = [];
    for (const [name, creds] of Object.entries(attempts)) {
      const res = await post().type('form').send({ ...GRANT, ...creds });
      expectOAuthError(res, 401, 'invalid_client', { challenge: null });
      expectNoStore(res);
      expectNoSecret(res, creds.client_secret);
      responses.push({ name, status: res.status, body: res.text, type: res.headers['content-type'] });
    }
    const first = responses[0]!;
    for (const r of responses) expect({ ...r, name: first.name }).toEqual(first);

    // By Basic too, identical among themselves (each with the Basic challenge).
    const basic = await Promise.all(
      Object.values(attempts).map((c) => post().auth(c.client_id, c.client_secret).type('form').send(GRANT)),
    );
    for (const res of basic) {
      expectOAuthError(res, 401, 'invalid_client', { challenge: BASIC_CHALLENGE });
      expect(res.text).toBe(first.body);
    }
  });

  // CONTRACT §2: "no client credentials at all | 401 | `invalid_client`".
  it('401 invalid_client when no client credentials are sent at all', async () => {
    const res = await post().type('form').send(GRANT);
    expectOAuthError(res, 401, 'invalid_client');
    expectNoStore(res);
    const json = await post().send(GRANT);
    expectOAuthError(json, 401, 'invalid_client');
    const empty = await post();
    expectOAuthError(empty, 401, 'invalid_client');
    // RFC 6749 §3.2: "Parameters sent without a value MUST be treated as if they were omitted".
    const blank = await post().type('form').send({ ...GRANT, client_id: '', client_secret: '' });
    expectOAuthError(blank, 401, 'invalid_client');
  });

  // CONTRACT §2: "credentials sent by Basic and failing | 401 | `invalid_client` | plus `WWW-Authenticate: Basic realm="..."` (RFC 6749 5.2)".
  // RFC 6749 §5.2: "If the client attempted to authenticate via the "Authorization" request header
  // field, the authorization server MUST respond with an HTTP 401 ... and include the "WWW-Authenticate" response header field".
  it('401 invalid_client with a Basic challenge when Basic credentials fail, and no Basic challenge for body credentials', async () => {
    const wrong = await post().auth(account.clientId, generateSecret().value).type('form').send(GRANT);
    expectOAuthError(wrong, 401, 'invalid_client', { challenge: BASIC_CHALLENGE });
    expectNoStore(wrong);

    const badPercent = await post().set('Authorization', `Basic ${Buffer.from(`${account.clientId}:%E0%A4%A`).toString('base64')}`).type('form').send(GRANT);
    expectOAuthError(badPercent, 401, 'invalid_client', { challenge: BASIC_CHALLENGE });

    const body = await post().type('form').send({ ...GRANT, client_id: account.clientId, client_secret: generateSecret().value });
    expectOAuthError(body, 401, 'invalid_client', { challenge: null });
    const bodyNoSecret = await post().type('form').send({ ...GRANT, client_id: account.clientId });
    expectOAuthError(bodyNoSecret, 401, 'invalid_client', { challenge: null });
  });

  describe('the Authorization header', () => {
    // RFC 7235 §2.1: "credentials = auth-scheme [ 1*SP ( token68 / #auth-param ) ]": one or more spaces.
    it('issues a token for Basic with several spaces between the scheme and the credentials', async () => {
      const header = basicHeader(account.clientId, account.secret.value).replace(' ', '   ');
      expect(header).toMatch(/^Basic {3}\S+$/);
      expectIssued(await post().set('Authorization', header).type('form').send(GRANT));
    });

    // RFC 6749 §5.2: "If the client attempted to authenticate via the "Authorization" request header
    // field, the authorization server MUST respond with an HTTP 401 (Unauthorized) status code and
    // include the "WWW-Authenticate" response header field". RFC 7235 §4.1: "A server generating a 401
    // (Unauthorized) response MUST send a WWW-Authenticate header field containing at least one
    // challenge applicable to the target resource": Basic is the one we take.
    it('401 with the Basic challenge for another scheme, with or without credentials in the body', async () => {
      const bearer = await post().set('Authorization', 'Bearer some-token').type('form').send(GRANT);
      expectOAuthError(bearer, 401, 'invalid_client', { challenge: BASIC_CHALLENGE });
      const digest = await post()
        .set('Authorization', 'Digest username="x"')
        .type('form')
        .send({ ...GRANT, client_id: account.clientId, client_secret: generateSecret().value });
      expectOAuthError(digest, 401, 'invalid_client', { challenge: BASIC_CHALLENGE });
    });

    // RFC 6749 §5.2 (as above): "If the client attempted to authenticate via the "Authorization" request
    // header field, ... MUST ... include the "WWW-Authenticate" response header field".
    it('401 with the Basic challenge for Basic credentials that are not base64', async () => {
      const res = await post().set('Authorization', 'Basic !!!not-base64!!!').type('form').send(GRANT);
      expectOAuthError(res, 401, 'invalid_client', { challenge: BASIC_CHALLENGE });
    });

    // RFC 7617 §2: "user-pass = user-id ":" password"; RFC 6749 §5.2 (as above): the client attempted to
    // authenticate via the Authorization header, so the 401 carries the challenge.
    it('401 with the Basic challenge for Basic credentials without a colon', async () => {
      const res = await post().set('Authorization', `Basic ${Buffer.from(account.clientId).toString('base64')}`).type('form').send(GRANT);
      expectOAuthError(res, 401, 'invalid_client', { challenge: BASIC_CHALLENGE });
    });

    // RFC 6749 §5.2 (as above): an empty Authorization header, or the scheme alone, is still an attempt
    // to authenticate via the "Authorization" request header field.
    it('401 with the Basic challenge for an empty Authorization header or the scheme alone', async () => {
      const empty = await post().set('Authorization', '').type('form').send(GRANT);
      expectOAuthError(empty, 401, 'invalid_client', { challenge: BASIC_CHALLENGE });
      const schemeOnly = await post().set('Authorization', 'Basic').type('form').send(GRANT);
      expectOAuthError(schemeOnly, 401, 'invalid_client', { challenge: BASIC_CHALLENGE });
    });
  });

  // CONTRACT §2: "credentials in both Basic and body | 400 | `invalid_request` | RFC 6749 2.3".
  // RFC 6749 §2.3: "The client MUST NOT use more than one authentication method in each request."
  it('400 invalid_request when credentials come in both Basic and the body', async () => {
    const both = await post().auth(account.clientId, account.secret.value).type('form').send({ ...GRANT, client_id: account.clientId, client_secret: account.secret.value });
    expectOAuthError(both, 400, 'invalid_request');
    expectNoStore(both);
    expectNoSecret(both, account.secret.value);
    const secretOnly = await post().auth(account.clientId, account.secret.value).send({ ...GRANT, client_secret: account.secret.value });
    expectOAuthError(secretOnly, 400, 'invalid_request');
    const otherId = await post().auth(account.clientId, account.secret.value).type('form').send({ ...GRANT, client_id: scoped.clientId });
    expectOAuthError(otherId, 400, 'invalid_request');
  });

  describe('400 invalid_request: malformed body', () => {
    // CONTRACT §2: "malformed body (bad JSON, unsupported content type, a repeated parameter, non-string
    // field) | 400 | `invalid_request` | never a 500, never an HTML page".
    it.each([
      ['bad JSON', 'application/json', '{"grant_type": "client_credentials",'],
      ['JSON with a trailing garbage', 'application/json', '{"grant_type":"client_credentials"} x'],
      ['text/plain', 'text/plain', 'grant_type=client_credentials'],
      ['application/xml', 'application/xml', '<grant_type>client_credentials</grant_type>'],
      ['multipart/form-data', 'multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="grant_type"\r\n\r\nclient_credentials\r\n--x--'],
      ['a repeated form parameter', 'application/x-www-form-urlencoded', 'grant_type=a&grant_type=b'],
      ['a repeated form credential', 'application/x-www-form-urlencoded', 'grant_type=client_credentials&client_id=a&client_id=b&client_secret=c'],
      ['a non-string JSON field (number)', 'application/json', '{"grant_type":"client_credentials","client_id":42,"client_secret":"x"}'],
      ['a non-string JSON field (object)', 'application/json', '{"grant_type":{"$ne":null}}'],
      ['a non-string JSON field (array)', 'application/json', '{"grant_type":["client_credentials"]}'],
      ['a non-string JSON field (boolean)', 'application/json', '{"grant_type":true}'],
      ['a JSON array body', 'application/json', '[{"grant_type":"client_credentials"}]'],
      ['a JSON string body', 'application/json', '"client_credentials"'],
    ])('400 invalid_request for %s', async (_name, type, body) => {
      const res = await post().set('Content-Type', type).send(body);
      expectOAuthError(res, 400, 'invalid_request');
      expectNoStore(res);
      expectNoCorsHeaders(res);
    });

    // Same row, with valid credentials present: a malformed body is refused before anything is issued.
    // RFC 6749 §3.2: "Request and response parameters MUST NOT be included more than once."
    it('400 invalid_request for a repeated form parameter even with valid credentials', async () => {
      const form = `grant_type=client_credentials&grant_type=client_credentials&client_id=${account.clientId}&client_secret=${account.secret.value}`;
      const res = await post().type('form').send(form);
      expectOAuthError(res, 400, 'invalid_request');
      expectNoSecret(res, account.secret.value);
    });

    // Same row, "a repeated parameter", for JSON: a duplicate key (JSON.parse would keep the last one silently).
    // RFC 6749 §3.2: "Request and response parameters MUST NOT be included more than once."
    // Behind the host's own global express.json() the raw text is gone (body-parser keeps no copy) and the
    // parsed object holds the last value only: docs/token-endpoint.md, "Your own body parsers", says so and
    // tells the host to mount the router first (test/http/host-body-parsers.test.ts checks both orders).
    if (variant.hostParsers) {
      it('a JSON duplicate key behind the host\'s express.json(): cannot be seen, the last value counts', async () => {
        const res = await post().set('Content-Type', 'application/json').send(duplicateCredentialsJson(scoped, account));
        expectIssued(res);
        expect(decodeToken((res.body as { access_token: string }).access_token).payload.sub).toBe(account.clientId);
      });
    } else {
      it('400 invalid_request for a JSON duplicate key', async () => {
        const res = await post().set('Content-Type', 'application/json').send('{"grant_type":"password","grant_type":"client_credentials"}');
        expectOAuthError(res, 400, 'invalid_request');
        const scopes = `{"grant_type":"client_credentials","client_id":"${account.clientId}","client_secret":"${account.secret.value}","scope":"jobs:read","scope":"jobs:write"}`;
        const res2 = await post().set('Content-Type', 'application/json').send(scopes);
        expectOAuthError(res2, 400, 'invalid_request');
        expectNoSecret(res2, account.secret.value);
        const credentials = await post().set('Content-Type', 'application/json').send(duplicateCredentialsJson(scoped, account));
        expectOAuthError(credentials, 400, 'invalid_request');
        expectNoSecret(credentials, account.secret.value);
      });
    }
  });

  // CONTRACT §2: "body larger than the limit | 413 | `invalid_request` | the server keeps serving".
  it('413 invalid_request for a body over the limit, and the next request is served', async () => {
    const big = { ...GRANT, client_id: account.clientId, client_secret: account.secret.value, padding: 'x'.repeat(20_000) };
    const form = await post().type('form').send(big);
    expectOAuthError(form, 413, 'invalid_request');
    expectNoStore(form);
    expectNoSecret(form, account.secret.value);
    const json = await post().send(big);
    expectOAuthError(json, 413, 'invalid_request');

    const huge = await post().type('form').send({ ...big, padding: 'x'.repeat(200_000) });
    expectOAuthError(huge, 413, 'invalid_request');

    const next = await post().type('form').send({ ...GRANT, client_id: account.clientId, client_secret: account.secret.value });
    expectIssued(next);
  });

  // Same row, for a chunked body (no Content-Length), which a host's own parser may already have read.
  it('413 invalid_request for a chunked body over the limit', async () => {
    const padding = 'x'.repeat(20_000);
    for (const [type, body] of [
      ['application/x-www-form-urlencoded', `grant_type=client_credentials&padding=${padding}`],
      ['application/json', JSON.stringify({ ...GRANT, padding })],
    ] as const) {
      const req = post().set('Content-Type', type).set('Transfer-Encoding', 'chunked');
      req.write(body.slice(0, 10_000));
      req.write(body.slice(10_000));
      expectOAuthError(await req, 413, 'invalid_request');
    }
    const next = await post().type('form').send({ ...GRANT, client_id: account.clientId, client_secret: account.secret.value });
    expectIssued(next);
  });

  describe('400 invalid_scope and the scopes granted', () => {
    const creds = () => ({ ...GRANT, client_id: scoped.clientId, client_secret: scoped.secret.value });

    // CONTRACT §2: "requested scope not allowed for the account | 400 | `invalid_scope`".
    // RFC 6749 §5.2: "invalid_scope: The requested scope is invalid, unknown, malformed, or exceeds the scope granted by the resource owner."
    it('400 invalid_scope when a requested scope is not allowed for the account', async () => {
      const res = await post().type('form').send({ ...creds(), scope: 'jobs:read admin' });
      expectOAuthError(res, 400, 'invalid_scope');
      expectNoStore(res);
      const malformed = await post().type('form').send({ ...creds(), scope: 'jobs:"read"' });
      expectOAuthError(malformed, 400, 'invalid_scope');
    });

    // RFC 6749 §3.3: "If the issued access token scope is different from the one requested by the client,
    // the authorization server MUST include the "scope" response parameter"; we always echo it when granted.
    it('grants a requested subset and echoes it in scope', async () => {
      const res = await post().type('form').send({ ...creds(), scope: 'jobs:write jobs:read' });
      expectIssued(res, 'jobs:write jobs:read');
      expect(decodeToken((res.body as { access_token: string }).access_token).payload.scope).toBe('jobs:write jobs:read');
    });

    // RFC 6749 §3.3: "If the client omits the scope parameter ... the authorization server MUST either
    // process the request using a pre-defined default value or fail": the default is every allowed scope.
    it('grants every allowed scope when none is requested', async () => {
      const res = await post().type('form').send(creds());
      expectIssued(res, 'jobs:read jobs:write reports:read');
    });

    // CONTRACT §3: "an account provisioned without scopes is unrestricted ...; its tokens carry no `scope` claim".
    it('an unrestricted account gets no scope in the response and no scope claim', async () => {
      const res = await post().type('form').send({ ...GRANT, client_id: account.clientId, client_secret: account.secret.value });
      expectIssued(res);
      expect(res.body).not.toHaveProperty('scope');
      expect(decodeToken((res.body as { access_token: string }).access_token).payload).not.toHaveProperty('scope');
    });

    // Same clause, also when the request names a scope: the token is not narrowed (docs/token-endpoint.md).
    it('an unrestricted account that asks for a scope still gets an unrestricted token, without scope', async () => {
      const res = await post().type('form').send({ ...GRANT, scope: 'jobs:read', client_id: account.clientId, client_secret: account.secret.value });
      expectIssued(res);
      expect(res.body).not.toHaveProperty('scope');
      expect(decodeToken((res.body as { access_token: string }).access_token).payload).not.toHaveProperty('scope');
    });
  });

  // CONTRACT §2: "any method but POST | 405 | `invalid_request` | with `Allow: POST`". RFC 6749 §3.2:
  // "The client MUST use the HTTP "POST" method when making access token requests."
  it.each(['get', 'put', 'delete', 'patch'] as const)('405 invalid_request with Allow: POST for %s', async (method) => {
    const res = await request(t.app)[method]('/oauth/token').query({ ...GRANT, client_id: account.clientId, client_secret: account.secret.value });
    expectOAuthError(res, 405, 'invalid_request');
    expect(res.headers.allow).toBe('POST');
    expectNoStore(res);
    expectNoSecret(res, account.secret.value);
  });

  describe('400 invalid_request: requests a browser marks', () => {
    const creds = () => ({ ...GRANT, client_id: account.clientId, client_secret: account.secret.value });

    // CONTRACT §2: "a request a browser marks (an `Origin` or `Sec-Fetch-Site` header) | 400 | `invalid_request` |
    // the flow is for backend clients only (SPEC §1, §5.7); no CORS headers are ever sent; configurable".
    // SPEC §5.7: "The flow is not for browsers, mobile apps or desktop clients."
    it.each([
      ['Origin', 'https://evil.example'],
      ['Origin', 'null'],
      ['Sec-Fetch-Site', 'cross-site'],
      ['Sec-Fetch-Site', 'same-origin'],
    ])('400 invalid_request for a %s: %s header, with no CORS headers', async (header, value) => {
      const res = await post().set(header, value).type('form').send(creds());
      expectOAuthError(res, 400, 'invalid_request');
      expectNoCorsHeaders(res);
      expectNoStore(res);
      const preflight = await request(t.app).options('/oauth/token').set('Origin', 'https://evil.example').set('Access-Control-Request-Method', 'POST');
      expect(preflight.status).not.toBe(200);
      expectNoCorsHeaders(preflight);
    });

    // Same row: "configurable", and "no CORS headers are ever sent".
    it('allowBrowserRequests: true lets browser-marked requests through, still without CORS headers', async () => {
      const open = make({ allowBrowserRequests: true });
      const a = await open.sa.admin.createAccount({ name: 'browser-tolerant' });
      const res = await request(open.app)
        .post('/oauth/token')
        .set('Origin', 'https://app.example')
        .set('Sec-Fetch-Site', 'cross-site')
        .type('form')
        .send({ ...GRANT, client_id: a.clientId, client_secret: a.secret.value });
      expect(res.status, res.text).toBe(200);
      expectNoCorsHeaders(res);
    });

    // Node's own fetch sends `Sec-Fetch-Mode: cors` on every request; only Origin / Sec-Fetch-Site mark a browser.
    it('Sec-Fetch-Mode: cors alone is not refused (Node fetch sends it)', async () => {
      const res = await post().set('Sec-Fetch-Mode', 'cors').type('form').send(creds());
      expectIssued(res);
    });
  });

  // CONTRACT §2: "too many failed attempts for one client ID or address | 429 | `too_many_requests`": not
  // here; test/hardening/failure-limiter.test.ts owns that row (it needs the limiter's own clock and Redis).

  // CONTRACT §2: "the store is unreachable | 503 | `temporarily_unavailable` | nothing is issued".
  it('503 temporarily_unavailable when the store is unreachable, and nothing is issued', async () => {
    const store = new FailingStore();
    const down = make({ store });
    const res = await request(down.app).post('/oauth/token').type('form').send({ ...GRANT, client_id: account.clientId, client_secret: account.secret.value });
    expectOAuthError(res, 503, 'temporarily_unavailable');
    expect(res.body).not.toHaveProperty('access_token');
    expectNoStore(res);
    expectNoSecret(res, account.secret.value);
    expect(res.text).not.toMatch(/StoreDownError|store unreachable/);
    expect(store.calls.length).toBeGreaterThan(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(down.events.filter((e) => e.type === 'token.issued')).toEqual([]);

    const basic = await request(down.app).post('/oauth/token').auth(account.clientId, account.secret.value).type('form').send(GRANT);
    expectOAuthError(basic, 503, 'temporarily_unavailable');
  });

  // CONTRACT §2: "Every error body is `application/json` with exactly the string fields `error` and
  // `error_description` (RFC 6749 5.2), and never echoes a secret." RFC 6749 §5.1: "Cache-Control: no-store".
  it('every error response: exactly {error, error_description} strings, no secret, no-store headers', async () => {
    const secret = account.secret.value;
    const cases = [
      post().type('form').send({ client_id: account.clientId, client_secret: secret }),
      post().type('form').send({ ...GRANT, client_id: account.clientId, client_secret: withLastCharChanged(secret) }),
      post().type('form').send({ ...GRANT, client_id: 'esa_nobody', client_secret: secret }),
      post().auth(account.clientId, secret).type('form').send({ ...GRANT, client_secret: secret }),
      post().set('Content-Type', 'application/json').send(`{"client_secret":"${secret}",`),
      post().type('form').send(`grant_type=client_credentials&client_secret=${secret}&client_secret=${secret}`),
      post().type('form').send({ ...GRANT, client_id: scoped.clientId, client_secret: scoped.secret.value, scope: secret }),
      request(t.app).get('/oauth/token').query({ client_secret: secret }),
      post().set('Origin', 'https://evil.example').type('form').send({ ...GRANT, client_id: account.clientId, client_secret: secret }),
    ];
    for (const res of await Promise.all(cases)) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(Object.keys(res.body as object).sort()).toEqual(['error', 'error_description']);
      expect(typeof (res.body as { error: unknown }).error).toBe('string');
      expect(typeof (res.body as { error_description: unknown }).error_description).toBe('string');
      expectNoSecret(res, secret, scoped.secret.value);
      expectNoStore(res);
      expectNoCorsHeaders(res);
    }
  });

  // Issue 2: passport runs "on a passport instance of the library's own (never the host's global one)".
  // Neither passport nor oauth2orize may decorate the host's request: a host running its own passport
  // would otherwise find our `req.login`, `req.isAuthenticated` and `req._sessionManager` on it.
  it('leaves the host request undecorated by our passport and oauth2orize', async () => {
    const seen: Record<string, unknown>[] = [];
    const app = createTestApp({ express: variant.express, hostParsers: variant.hostParsers, store: t.store });
    const host = (variant.express === 4 ? express4 : express5) as unknown as typeof express5;
    const outer = host();
    outer.use((req, res, next) => {
      res.on('finish', () => seen.push(req as unknown as Record<string, unknown>));
      next();
    });
    outer.use(app.app);
    const basic = await request(outer).post('/oauth/token').auth(account.clientId, account.secret.value).type('form').send(GRANT);
    expectIssued(basic);
    const body = await request(outer).post('/oauth/token').type('form').send({ ...GRANT, client_id: account.clientId, client_secret: 'esas_wrong' });
    expect(body.status).toBe(401);
    expect(seen).toHaveLength(2);
    for (const req of seen) {
      for (const name of ['login', 'logIn', 'logout', 'isAuthenticated', 'isUnauthenticated', '_sessionManager', 'user', 'authInfo']) {
        expect(name in req, name).toBe(false);
      }
    }
    await app.sa.close();
  });

  // Only `{mount}/token` is the endpoint's: other paths under the mount fall through to the host.
  it('leaves other paths under the mount to the host', async () => {
    const res = await request(t.app).post('/oauth/other').type('form').send(GRANT);
    expect(res.status).toBe(404);
  });
});
