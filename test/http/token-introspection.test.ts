/**
 * `POST /oauth/introspect` (RFC 7662): one `it` per rule, each quoting the clause it checks, on Express 5
 * and Express 4. Only an account holding the scope `token:introspect` may call it (an unrestricted one
 * when the host opts in); the answer is `{"active": false}` for every token `requireBearer()` would
 * refuse, and the token's claims plus its account's name otherwise. Time comes from the injected TestClock.
 */
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import type { CreatedAccount } from '../../src/index.js';
import { createTestApp, type TestAppOptions } from '../helpers/create-app.js';
import { expectNoStore, expectOAuthError } from '../helpers/expect-oauth-error.js';
import { basicHeader, claimsFor, decodeToken, issueToken, signHs256, unsignedToken } from '../helpers/tokens.js';

describe.each([5, 4] as const)('POST /oauth/introspect on Express %i', (version) => {
  const make = (options: TestAppOptions = {}) => createTestApp({ express: version, ...options });
  let t: ReturnType<typeof make>;
  /** A resource server: may introspect. */
  let gateway: CreatedAccount;
  /** A client with scopes, the tokens being checked. */
  let client: CreatedAccount;
  /** Unrestricted (no scopes). */
  let unrestricted: CreatedAccount;

  beforeEach(async () => {
    t = make();
    gateway = await t.sa.admin.createAccount({ name: 'api-gateway', scopes: ['token:introspect'] });
    client = await t.sa.admin.createAccount({ name: 'procurement-portal', scopes: ['jobs:read', 'jobs:write'] });
    unrestricted = await t.sa.admin.createAccount({ name: 'batch-importer' });
  });

  const introspect = (fields: Record<string, string>, who: CreatedAccount = gateway, app = t.app) =>
    request(app).post('/oauth/introspect').set('Authorization', basicHeader(who.clientId, who.secret.value)).type('form').send(fields);
  const nowSeconds = () => Math.floor(t.clock.now().getTime() / 1000);

  // RFC 7662 §2.2: "active REQUIRED ... scope OPTIONAL ... client_id OPTIONAL ... username OPTIONAL ...
  // token_type OPTIONAL ... exp ... iat ... nbf ... sub ... aud ... iss ... jti"; §2.2 "Cache-Control: no-store" (RFC 6749 §5.1).
  it('answers an active token with its claims and its account name as username', async () => {
    const token = await issueToken(t.app, client.clientId, client.secret.value, 'jobs:read');
    const res = await introspect({ token });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expectNoStore(res);
    const { payload } = decodeToken(token);
    expect(res.body).toEqual({
      active: true,
      scope: 'jobs:read',
      client_id: client.clientId,
      username: 'procurement-portal',
      token_type: 'Bearer',
      exp: payload.exp,
      iat: payload.iat,
      sub: client.clientId,
      aud: 'https://api.test',
      iss: 'https://api.test',
      jti: payload.jti,
    });
  });

  // RFC 7662 §2.2: scope is OPTIONAL; an unrestricted account's token carries none, so none is answered.
  it("answers an unrestricted account's token without scope", async () => {
    const token = await issueToken(t.app, unrestricted.clientId, unrestricted.secret.value);
    const res = await introspect({ token });
    expect(res.body).toMatchObject({ active: true, username: 'batch-importer' });
    expect(res.body).not.toHaveProperty('scope');
  });

  // RFC 7662 §2.2: "nbf OPTIONAL" — given when the token has one.
  it('answers nbf when the token carries one', async () => {
    const token = signHs256(claimsFor(client.clientId, client.secret.id, nowSeconds(), { nbf: nowSeconds() - 1 }), t.sa.config.signingKey.kid);
    expect((await introspect({ token })).body).toMatchObject({ active: true, nbf: nowSeconds() - 1 });
  });

  // RFC 7662 §2.2: "If the introspection call is properly authorized but the token is not active, does not
  // exist on this server, or the protected resource is not allowed to introspect this particular token,
  // then the authorization server MUST return an introspection response with the "active" field set to
  // "false"" and "SHOULD NOT include any additional information about an inactive token".
  describe('inactive tokens', () => {
    const inactive = async (token: string) => {
      const res = await introspect({ token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ active: false });
    };

    it('expired', async () => {
      const token = await issueToken(t.app, client.clientId, client.secret.value);
      t.clock.advance(3600 + 10);
      await inactive(token);
    });

    it('revoked at the revocation endpoint', async () => {
      const token = await issueToken(t.app, client.clientId, client.secret.value);
      await request(t.app).post('/oauth/revoke').set('Authorization', basicHeader(client.clientId, client.secret.value)).type('form').send({ token }).expect(200);
      await inactive(token);
    });

    it('revoked by ID through the admin API', async () => {
      const token = await issueToken(t.app, client.clientId, client.secret.value);
      await t.sa.admin.revokeToken(decodeToken(token).payload.jti as string);
      await inactive(token);
    });

    it('its secret revoked', async () => {
      const token = await issueToken(t.app, client.clientId, client.secret.value);
      await t.sa.admin.revokeSecret(client.clientId, client.secret.id);
      await inactive(token);
    });

    it('its account disabled', async () => {
      const token = await issueToken(t.app, client.clientId, client.secret.value);
      await t.sa.admin.disableAccount(client.clientId);
      await inactive(token);
    });

    it('its account or credential unknown (deleted)', async () => {
      await inactive(signHs256(claimsFor('esa_deleted0000000000000000', 'sec_gone', nowSeconds()), t.sa.config.signingKey.kid));
      await inactive(signHs256(claimsFor(client.clientId, 'sec_unknown', nowSeconds()), t.sa.config.signingKey.kid));
    });

    it('forged, unsigned, or garbage', async () => {
      const kid = t.sa.config.signingKey.kid;
      await inactive(signHs256(claimsFor(client.clientId, client.secret.id, nowSeconds()), kid, 'another-key-0123456789abcdef-0123456789'));
      await inactive(unsignedToken(claimsFor(client.clientId, client.secret.id, nowSeconds()), kid));
      await inactive('garbage');
    });
  });

  // RFC 7662 §2.1: "To prevent token scanning attacks, the endpoint MUST also require some form of
  // authorization"; §2.3: "If the protected resource uses OAuth 2.0 client credentials to authenticate to
  // the introspection endpoint and its credentials are invalid, the authorization server responds with an
  // HTTP 401 (Unauthorized) as described in Section 5.2 of OAuth 2.0".
  it('answers 401 invalid_client without credentials, or with wrong ones (Basic challenge)', async () => {
    const token = await issueToken(t.app, client.clientId, client.secret.value);
    expectOAuthError(await request(t.app).post('/oauth/introspect').type('form').send({ token }), 401, 'invalid_client', { challenge: null });
    const wrong = await request(t.app)
      .post('/oauth/introspect')
      .set('Authorization', basicHeader(gateway.clientId, client.secret.value))
      .type('form')
      .send({ token });
    expectOAuthError(wrong, 401, 'invalid_client', { challenge: /^Basic realm=/ });
  });

  // RFC 7662 §2.1 ("the authorization server MUST ... require some form of authorization") and §4 (limit
  // introspection to protected resources): an authenticated client that is not allowed gets 403
  // unauthorized_client (docs/errors.md), whether it is scoped or unrestricted.
  it('answers 403 unauthorized_client to an account without token:introspect, unrestricted included', async () => {
    const token = await issueToken(t.app, client.clientId, client.secret.value);
    expectOAuthError(await introspect({ token }, client), 403, 'unauthorized_client', { challenge: null });
    expectOAuthError(await introspect({ token }, unrestricted), 403, 'unauthorized_client', { challenge: null });
  });

  // docs/configuration.md, allowUnrestrictedIntrospection: the host may let unrestricted accounts introspect.
  it('lets an unrestricted account introspect when the host opts in', async () => {
    const opted = make({ allowUnrestrictedIntrospection: true });
    const rs = await opted.sa.admin.createAccount({ name: 'legacy-gateway' });
    const scoped = await opted.sa.admin.createAccount({ name: 'scoped', scopes: ['jobs:read'] });
    const token = await issueToken(opted.app, scoped.clientId, scoped.secret.value);
    expect((await introspect({ token }, rs, opted.app)).body).toMatchObject({ active: true });
    expectOAuthError(await introspect({ token }, scoped, opted.app), 403, 'unauthorized_client');
  });

  // RFC 7662 §2.1: "token REQUIRED".
  it('answers 400 invalid_request without a token', async () => {
    expectOAuthError(await introspect({}), 400, 'invalid_request');
  });

  // The token endpoint's body reader serves here too: JSON bodies, and bodies a host's own global parsers
  // (express.json(), express.urlencoded()) already read before the router.
  it('reads JSON bodies, and bodies the host already parsed', async () => {
    for (const app of [t.app, make({ hostParsers: true, store: t.store }).app]) {
      const token = await issueToken(app, client.clientId, client.secret.value);
      const json = await request(app)
        .post('/oauth/introspect')
        .set('Authorization', basicHeader(gateway.clientId, gateway.secret.value))
        .send({ token });
      expect(json.body).toMatchObject({ active: true, username: 'procurement-portal' });
      expect((await introspect({ token }, gateway, app)).body).toMatchObject({ active: true });
    }
  });

  // RFC 7662 §2.1: "token_type_hint OPTIONAL ... If the server is unable to locate the token using the given
  // hint, it MUST extend its search across all of its supported token types."
  it('accepts token_type_hint, whatever its value', async () => {
    const token = await issueToken(t.app, client.clientId, client.secret.value);
    for (const hint of ['access_token', 'refresh_token', 'something_else']) {
      expect((await introspect({ token, token_type_hint: hint })).body).toMatchObject({ active: true });
    }
  });

  // RFC 7662 §2.1: "The protected resource calls the introspection endpoint using an HTTP POST request".
  it('answers 405 with Allow: POST to GET', async () => {
    const res = await request(t.app).get('/oauth/introspect');
    expectOAuthError(res, 405, 'invalid_request');
    expect(res.headers.allow).toBe('POST');
  });

  // docs/revocation-and-introspection.md: the audit hook hears which resource server asked about which token and the result.
  it('emits token.introspected naming the caller, the token ID and its account, never the token', async () => {
    const token = await issueToken(t.app, client.clientId, client.secret.value);
    await introspect({ token }).expect(200);
    await t.sa.admin.disableAccount(client.clientId);
    await introspect({ token }).expect(200);
    const events = t.events.filter((e) => e.type === 'token.introspected');
    const jti = decodeToken(token).payload.jti;
    const base = { type: 'token.introspected', at: expect.any(Date), clientId: gateway.clientId, name: 'api-gateway', tokenId: jti, tokenClientId: client.clientId, tokenName: 'procurement-portal' };
    expect(events).toEqual([
      { ...base, active: true },
      { ...base, active: false, reason: 'disabled' },
    ]);
    expect(JSON.stringify(t.events)).not.toContain(token);
  });
});

// RFC 8414 §2: "revocation_endpoint", "revocation_endpoint_auth_methods_supported", "introspection_endpoint",
// "introspection_endpoint_auth_methods_supported".
describe('authorization server metadata', () => {
  it('lists the revocation and introspection endpoints beside the token endpoint', () => {
    const { sa } = createTestApp();
    const metadata = sa.authorizationServerMetadata({ tokenEndpoint: 'https://api.test/oauth/token' });
    expect(metadata).toMatchObject({
      revocation_endpoint: 'https://api.test/oauth/revoke',
      revocation_endpoint_auth_methods_supported: metadata.token_endpoint_auth_methods_supported,
      revocation_endpoint_auth_signing_alg_values_supported: metadata.token_endpoint_auth_signing_alg_values_supported,
      introspection_endpoint: 'https://api.test/oauth/introspect',
      introspection_endpoint_auth_methods_supported: metadata.token_endpoint_auth_methods_supported,
      introspection_endpoint_auth_signing_alg_values_supported: metadata.token_endpoint_auth_signing_alg_values_supported,
    });
  });

  it('says what it needs when called without the token endpoint, instead of failing on a missing property', () => {
    const { sa } = createTestApp();
    const call = sa.authorizationServerMetadata as (options?: unknown) => unknown;
    for (const options of [undefined, {}, { tokenEndpoint: '' }]) {
      expect(() => call(options)).toThrow(new TypeError('authorizationServerMetadata needs { tokenEndpoint }: the URL of your token endpoint, such as https://api.example.com/oauth/token'));
    }
  });
});
