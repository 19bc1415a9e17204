/**
 * `POST /oauth/revoke` (RFC 7009): one `it` per rule, each quoting the clause it checks, on Express 5
 * and Express 4. The client authenticates as at the token endpoint; the answer is 200 with an empty
 * body whatever became of the token; a revoked token is refused by `requireBearer()` at once on this
 * instance. Time comes from the injected TestClock.
 */
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import type { CreatedAccount, MemoryAccountStore } from '../../src/index.js';
import { createTestApp, type TestAppOptions } from '../helpers/create-app.js';
import { expectNoStore, expectOAuthError } from '../helpers/expect-oauth-error.js';
import { WatchlessStore } from '../helpers/watchless-store.js';
import { basicHeader, claimsFor, decodeToken, issueToken, signHs256 } from '../helpers/tokens.js';

const REVOKED = 'Bearer realm="service-accounts", error="invalid_token", error_description="The access token was revoked"';

describe.each([5, 4] as const)('POST /oauth/revoke on Express %i', (version) => {
  const make = (options: TestAppOptions = {}) => createTestApp({ express: version, ...options });
  let t: ReturnType<typeof make>;
  let account: CreatedAccount;
  let other: CreatedAccount;

  beforeEach(async () => {
    t = make();
    account = await t.sa.admin.createAccount({ name: 'procurement-portal' });
    other = await t.sa.admin.createAccount({ name: 'workflow-engine' });
  });

  const revoke = (fields: Record<string, string>, who: CreatedAccount = account) =>
    request(t.app).post('/oauth/revoke').set('Authorization', basicHeader(who.clientId, who.secret.value)).type('form').send(fields);
  const whoami = (token: string) => request(t.app).get('/api/whoami').set('Authorization', `Bearer ${token}`);

  // RFC 7009 §2.2: "The authorization server responds with HTTP status code 200 if the token has been
  // revoked successfully"; the token is then refused (RFC 7009 §2: "the particular token [is] invalidated").
  it('revokes a token of the calling client: 200, empty body, then requireBearer refuses it', async () => {
    const token = await issueToken(t.app, account.clientId, account.secret.value);
    expect((await whoami(token)).status).toBe(200);
    const res = await revoke({ token });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expectNoStore(res);
    const refused = await whoami(token);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe(REVOKED);
  });

  // RFC 7009 §2: revoking one access token leaves the client's other tokens (and its credentials) alone.
  it('leaves the other tokens of the client working', async () => {
    const revoked = await issueToken(t.app, account.clientId, account.secret.value);
    const kept = await issueToken(t.app, account.clientId, account.secret.value);
    await revoke({ token: revoked }).expect(200);
    expect((await whoami(kept)).status).toBe(200);
    expect((await whoami(revoked)).status).toBe(401);
  });

  // RFC 7009 §2.1: "The client also includes its authentication credentials as described in Section 2.3.
  // of [RFC6749]" — credentials in the body work as in HTTP Basic.
  it('accepts client credentials in the body', async () => {
    const token = await issueToken(t.app, account.clientId, account.secret.value);
    await request(t.app)
      .post('/oauth/revoke')
      .type('form')
      .send({ token, client_id: account.clientId, client_secret: account.secret.value })
      .expect(200);
    expect((await whoami(token)).status).toBe(401);
  });

  // RFC 7009 §2.1: "the authorization server ... verifies whether the token was issued to the client making
  // the revocation request"; §2.2: "invalid tokens do not cause an error response", so the answer does not
  // tell the caller that the token exists.
  it("does not revoke another client's token, and answers the same 200", async () => {
    const token = await issueToken(t.app, other.clientId, other.secret.value);
    const res = await revoke({ token });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect((await whoami(token)).status).toBe(200);
  });

  // RFC 7009 §2.2: "The authorization server responds with HTTP status code 200 ... if the client
  // submitted an invalid token."
  it('answers 200 for garbage, forged and expired tokens', async () => {
    const forged = signHs256(claimsFor(account.clientId, account.secret.id, Math.floor(t.clock.now().getTime() / 1000)), t.sa.config.signingKey.kid, 'another-key-0123456789abcdef-0123456789');
    const expiring = await issueToken(t.app, account.clientId, account.secret.value);
    t.clock.advance(3600 + 10);
    for (const token of ['garbage', forged, expiring]) {
      const res = await revoke({ token });
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
    }
  });

  // RFC 7009 §2.1: "If the server is unable to locate the token using the given hint, it MUST extend its
  // search across all of its supported token types"; an unknown hint value is therefore not an error.
  it('accepts token_type_hint, whatever its value, and still revokes the access token', async () => {
    for (const hint of ['access_token', 'refresh_token', 'something_else']) {
      const token = await issueToken(t.app, account.clientId, account.secret.value);
      await revoke({ token, token_type_hint: hint }).expect(200);
      expect((await whoami(token)).status).toBe(401);
    }
  });

  // RFC 7009 §2.2: revoking a token twice is not an error ("invalid tokens do not cause an error response").
  it('answers 200 when the token is revoked again', async () => {
    const token = await issueToken(t.app, account.clientId, account.secret.value);
    await revoke({ token }).expect(200);
    await revoke({ token }).expect(200);
  });

  // RFC 7009 §2.1: "token REQUIRED"; RFC 6749 §5.2: a missing required parameter is invalid_request.
  it('answers 400 invalid_request without a token', async () => {
    expectOAuthError(await revoke({}), 400, 'invalid_request');
  });

  // RFC 7009 §2.2.1 via RFC 6749 §5.2: "invalid_client ... 401 ... If the client attempted to authenticate
  // via the "Authorization" request header field, the authorization server MUST ... include the
  // "WWW-Authenticate" response header field".
  it('answers 401 invalid_client with a Basic challenge for a wrong secret, and does not revoke', async () => {
    const token = await issueToken(t.app, account.clientId, account.secret.value);
    const res = await request(t.app)
      .post('/oauth/revoke')
      .set('Authorization', basicHeader(account.clientId, other.secret.value))
      .type('form')
      .send({ token });
    expectOAuthError(res, 401, 'invalid_client', { challenge: /^Basic realm=/ });
    expect((await whoami(token)).status).toBe(200);
  });

  // RFC 7009 §2.1: the client includes its authentication credentials; without them, RFC 6749 §5.2 invalid_client.
  it('answers 401 invalid_client without client credentials', async () => {
    const token = await issueToken(t.app, account.clientId, account.secret.value);
    expectOAuthError(await request(t.app).post('/oauth/revoke').type('form').send({ token }), 401, 'invalid_client', { challenge: null });
  });

  // RFC 7009 §2.1: "The client requests the revocation of a particular token by making an HTTP POST request".
  it('answers 405 with Allow: POST to any other method', async () => {
    const res = await request(t.app).get('/oauth/revoke');
    expectOAuthError(res, 405, 'invalid_request');
    expect(res.headers.allow).toBe('POST');
  });

  // The token endpoint's guards apply here too: a repeated parameter (RFC 6749 §3.2 "Request and response
  // parameters MUST NOT be included more than once") and a browser's request are refused.
  it('refuses a repeated token parameter and a browser request with 400 invalid_request', async () => {
    const token = await issueToken(t.app, account.clientId, account.secret.value);
    const repeated = await request(t.app)
      .post('/oauth/revoke')
      .set('Authorization', basicHeader(account.clientId, account.secret.value))
      .type('form')
      .send(`token=${token}&token=${token}`);
    expectOAuthError(repeated, 400, 'invalid_request');
    expectOAuthError(await revoke({ token }).set('Origin', 'https://evil.example'), 400, 'invalid_request');
    expect((await whoami(token)).status).toBe(200);
  });

  // RFC 7009 §2.2.1: "unsupported_token_type: The authorization server does not support the revocation of
  // the presented token type" — the case of a store without a token deny-list.
  it('answers 400 unsupported_token_type when the store keeps no deny-list', async () => {
    const plain = make({ store: new WatchlessStore() });
    const acct = await plain.sa.admin.createAccount({ name: 'plain' });
    const token = await issueToken(plain.app, acct.clientId, acct.secret.value);
    const res = await request(plain.app).post('/oauth/revoke').set('Authorization', basicHeader(acct.clientId, acct.secret.value)).type('form').send({ token });
    expectOAuthError(res, 400, 'unsupported_token_type');
  });

  // A store with revokeToken but no listRevokedTokens could store an entry no instance ever reads back:
  // the revocation would answer 200 and the token keep working. It is refused as unsupported instead.
  it('answers 400 unsupported_token_type when the store can record a revocation but not list them', async () => {
    class HalfDenyListStore extends WatchlessStore {
      readonly recorded: unknown[] = [];
      revokeToken(record: Parameters<NonNullable<MemoryAccountStore['revokeToken']>>[0]) {
        this.recorded.push(record);
        return Promise.resolve({ ...record });
      }
    }
    const store = new HalfDenyListStore();
    const half = make({ store });
    const acct = await half.sa.admin.createAccount({ name: 'half' });
    const token = await issueToken(half.app, acct.clientId, acct.secret.value);
    const res = await request(half.app).post('/oauth/revoke').set('Authorization', basicHeader(acct.clientId, acct.secret.value)).type('form').send({ token });
    expectOAuthError(res, 400, 'unsupported_token_type');
    expect(store.recorded).toEqual([]);
  });

  // docs/revocation-and-introspection.md: a token stays refused for as long as any instance could admit
  // it, which is until its exp plus the clock tolerance.
  it('keeps the deny-list entry until the token expires plus the clock tolerance', async () => {
    const token = await issueToken(t.app, account.clientId, account.secret.value);
    await revoke({ token }).expect(200);
    const exp = decodeToken(token).payload.exp as number;
    const listed = await t.store.listRevokedTokens!(new Date((exp + 4) * 1000));
    expect(listed.map((entry) => entry.expiresAt.getTime())).toContain((exp + 5) * 1000);
  });

  // docs/revocation-and-introspection.md: the audit hook hears who revoked which token, never the token.
  it('emits token.revoked naming the token ID and the client, never the token', async () => {
    const token = await issueToken(t.app, account.clientId, account.secret.value);
    await revoke({ token }).expect(200);
    const jti = decodeToken(token).payload.jti;
    const event = t.events.find((e) => e.type === 'token.revoked');
    expect(event).toEqual({ type: 'token.revoked', at: expect.any(Date), tokenId: jti, by: 'client', clientId: account.clientId, name: 'procurement-portal' });
    expect(JSON.stringify(t.events)).not.toContain(token);
  });

  // The admin API revokes by ID too (the `tokenId` of an audit line): refused on this instance at once.
  it('admin.revokeToken revokes by ID; revoking again keeps the first revokedAt', async () => {
    const token = await issueToken(t.app, account.clientId, account.secret.value);
    const jti = decodeToken(token).payload.jti as string;
    const first = await t.sa.admin.revokeToken(jti);
    expect(first).toEqual({ tokenId: jti, revokedAt: t.clock.now() });
    expect((await whoami(token)).headers['www-authenticate']).toBe(REVOKED);
    t.clock.advance(5);
    expect(await t.sa.admin.revokeToken(jti)).toEqual(first);
    expect(t.events.filter((e) => e.type === 'token.revoked')[0]).toMatchObject({ tokenId: jti, by: 'operator' });
  });

  // docs/revocation-and-introspection.md, audit events: an operator's revocation names the person when the caller does.
  it('admin.withActor(actor).revokeToken names the person in token.revoked', async () => {
    await t.sa.admin.withActor({ id: 'u_42', name: 'Ada Lovelace' }).revokeToken('0f6a1c2e-58b4-4f59-9a57-2c1d6a1c9e3b');
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(t.events.find((e) => e.type === 'token.revoked')).toMatchObject({ by: 'operator', actor: { id: 'u_42', name: 'Ada Lovelace' } });
  });
});
