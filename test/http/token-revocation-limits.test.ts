/**
 * The bounds of the token deny-list (docs/revocation-and-introspection.md, "Bounds"): a client may keep
 * at most `maxRevokedTokensPerClient` of its tokens revoked and unexpired, and one more revocation is
 * refused with advice to revoke the credential instead; a token an operator revokes by ID is kept only
 * as long as a token of the server can be admitted. Time comes from the injected TestClock.
 */
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAdminApi, MemoryAccountStore, type CreatedAccount, type OperationalEvent } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';
import { basicHeader, decodeToken, issueToken } from '../helpers/tokens.js';

describe.each([5, 4] as const)('the deny-list bounds on Express %i', (version) => {
  let t: ReturnType<typeof createTestApp>;
  let operational: OperationalEvent[];
  let account: CreatedAccount;
  let other: CreatedAccount;

  beforeEach(async () => {
    operational = [];
    t = createTestApp({ express: version, maxRevokedTokensPerClient: 2, onEvent: (event) => void operational.push(event) });
    account = await t.sa.admin.createAccount({ name: 'procurement-portal' });
    other = await t.sa.admin.createAccount({ name: 'workflow-engine' });
  });

  const revoke = (token: string, who: CreatedAccount = account) =>
    request(t.app).post('/oauth/revoke').set('Authorization', basicHeader(who.clientId, who.secret.value)).type('form').send({ token });
  const whoami = (token: string) => request(t.app).get('/api/whoami').set('Authorization', `Bearer ${token}`);
  const issue = (who: CreatedAccount = account) => issueToken(t.app, who.clientId, who.secret.value);

  // RFC 7009 §2.2.1: "The error presentation conforms to the definition in Section 5.2 of [RFC6749]";
  // docs/configuration.md, maxRevokedTokensPerClient: one revocation past the cap is answered 400
  // invalid_request, telling the client to revoke the credential instead, and the token stays valid.
  it('refuses a revocation past the cap with 400 invalid_request, and the token stays valid', async () => {
    const tokens = [await issue(), await issue(), await issue()];
    await revoke(tokens[0]!).expect(200);
    await revoke(tokens[1]!).expect(200);
    const refused = await revoke(tokens[2]!);
    expectOAuthError(refused, 400, 'invalid_request');
    expect(refused.body.error_description).toMatch(/revoke the credential/);
    expect((await whoami(tokens[2]!)).status).toBe(200);
    // A token already on the list is still answered 200, and another client has its own cap.
    await revoke(tokens[0]!).expect(200);
    await revoke(await issue(other), other).expect(200);
  });

  // docs/observability.md: token_revocations.limit_reached, at most once per client a minute.
  it('emits token_revocations.limit_reached once per client a minute', async () => {
    for (let i = 0; i < 2; i++) await revoke(await issue()).expect(200);
    await revoke(await issue()).expect(400);
    await revoke(await issue()).expect(400);
    await new Promise<void>((resolve) => setImmediate(resolve));
    const reached = operational.filter((event) => event.type === 'token_revocations.limit_reached');
    expect(reached).toEqual([{ type: 'token_revocations.limit_reached', at: expect.any(Date), clientId: account.clientId, limit: 2 }]);
    t.clock.advance(60);
    await revoke(await issue()).expect(400);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(operational.filter((event) => event.type === 'token_revocations.limit_reached')).toHaveLength(2);
  });

  // The advice works: revoking the secret revokes every token issued against it, past the cap too
  // (CONTRACT §3: "token revoked (its secret revoked) → 401"); and an expired entry frees its place.
  it('past the cap, revoking the secret still revokes every token, and expired entries free the cap', async () => {
    for (let i = 0; i < 2; i++) await revoke(await issue()).expect(200);
    const kept = await issue();
    await revoke(kept).expect(400);
    t.clock.advance(3600 + 5 + 1);
    const fresh = await issue();
    await revoke(fresh).expect(200);
    expect((await whoami(fresh)).status).toBe(401);
    const later = await issue();
    await t.sa.admin.revokeSecret(account.clientId, account.secret.id);
    expect((await whoami(later)).status).toBe(401);
  });

  // docs/revocation-and-introspection.md: an operator's revocation by ID is not held to a client's cap.
  it('an operator revokes by ID past the cap', async () => {
    for (let i = 0; i < 2; i++) await revoke(await issue()).expect(200);
    const token = await issue();
    await t.sa.admin.revokeToken(decodeToken(token).payload.jti as string);
    expect((await whoami(token)).status).toBe(401);
  });

  // docs/revocation-and-introspection.md: a token revoked by ID is kept for the token lifetime plus the
  // clock tolerance (3600 + 5 s here), the longest a token of this server can still be admitted, not a day.
  it('keeps a token revoked by ID for the token lifetime plus the clock tolerance', async () => {
    const token = await issue();
    const jti = decodeToken(token).payload.jti as string;
    const { revokedAt } = await t.sa.admin.revokeToken(jti);
    const entry = (await t.store.listRevokedTokens!(revokedAt)).find((x) => x.tokenId === jti);
    expect(entry?.expiresAt.getTime()).toBe(revokedAt.getTime() + (3600 + 5) * 1000);
  });
});

describe('the standalone admin API revoking by ID', () => {
  const now = new Date('2026-01-15T10:00:00Z');
  const keptFor = async (options: { tokenLifetime?: number }) => {
    const store = new MemoryAccountStore();
    const admin = createAdminApi({ store, now: () => now, ...options });
    await admin.revokeToken('0f6a1c2e-58b4-4f59-9a57-2c1d6a1c9e3b');
    const [entry] = await store.listRevokedTokens(now);
    return (entry!.expiresAt.getTime() - now.getTime()) / 1000;
  };

  // docs/revocation-and-introspection.md: given the server's tokenLifetime, the entry is kept that long
  // plus the largest clock tolerance; without it, for the longest lifetime a server accepts.
  it('keeps the entry for tokenLifetime plus 300 s, or a day plus 300 s when not told', async () => {
    expect(await keptFor({ tokenLifetime: 900 })).toBe(1200);
    expect(await keptFor({})).toBe(86_400 + 300);
  });

  it('refuses a tokenLifetime out of range at start-up', () => {
    expect(() => createAdminApi({ store: new MemoryAccountStore(), tokenLifetime: 86_401 })).toThrow(TypeError);
  });
});
