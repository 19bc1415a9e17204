/**
 * Per-account token policy over HTTP (docs/account-policy.md): an account's `accessTokenLifetime`
 * decides `expires_in` and `exp` within the server's `maxAccessTokenLifetime`; the admin API refuses
 * a lifetime above it; changes are audited; `dpopBoundAccessTokens` is stored and shown. The host's
 * `extraTokenClaims` hook adds claims, may not override registered ones, and is size-bounded: a
 * refusal is a 500 `server_error` that leaks nothing, plus an `extra_claims.refused` event.
 * One `it` per clause; time comes from the injected TestClock.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { AdminError, MemoryAccountStore, type CreatedAccount, type OperationalEvent, type ServiceAccountsOptions } from '../../src/index.js';
import { createTestApp, TEST_ISSUER } from '../helpers/create-app.js';
import { ForwardingStore } from '../helpers/forwarding-store.js';
import { expectNoStore, expectOAuthError } from '../helpers/expect-oauth-error.js';
import { basicHeader, decodeToken } from '../helpers/tokens.js';

type App = ReturnType<typeof createTestApp>;

const tokenRequest = (t: App, who: CreatedAccount) =>
  request(t.app).post('/oauth/token').set('Authorization', basicHeader(who.clientId, who.secret.value)).type('form').send({ grant_type: 'client_credentials' });

async function issue(t: App, who: CreatedAccount): Promise<{ expiresIn: number; payload: Record<string, unknown>; token: string }> {
  const res = await tokenRequest(t, who);
  expect(res.status).toBe(200);
  const body = res.body as { access_token: string; expires_in: number };
  return { expiresIn: body.expires_in, payload: decodeToken(body.access_token).payload, token: body.access_token };
}

describe('per-account token lifetime', () => {
  // Issue 34 item 3: "`accessTokenLifetime` per account within a server-wide maximum; default 3600 s
  // (the specification's value); `expires_in` reports it." RFC 6749 §5.1: expires_in is "the lifetime
  // in seconds of the access token".
  it('reports the account lifetime in expires_in, and the token exp is iat plus it', async () => {
    const t = createTestApp();
    const short = await t.sa.admin.createAccount({ name: 'payouts', accessTokenLifetime: 900 });
    const { expiresIn, payload } = await issue(t, short);
    expect(expiresIn).toBe(900);
    expect(payload.exp).toBe((payload.iat as number) + 900);
    expect(payload.iat).toBe(Math.floor(t.clock.now().getTime() / 1000));
  });

  // "default 3600 s": an account without a lifetime gets the server's tokenLifetime.
  it('gives an account without a lifetime the server tokenLifetime (3600 s by default)', async () => {
    const t = createTestApp();
    const plain = await t.sa.admin.createAccount({ name: 'batch-importer' });
    const { expiresIn, payload } = await issue(t, plain);
    expect(expiresIn).toBe(3600);
    expect(payload.exp).toBe((payload.iat as number) + 3600);
  });

  // "within a server-wide maximum": the admin API refuses a lifetime above maxAccessTokenLifetime.
  it('refuses at the admin API a lifetime above the server maximum, at creation and when set', async () => {
    const t = createTestApp({ maxAccessTokenLifetime: 7200 });
    await expect(t.sa.admin.createAccount({ name: 'too-long', accessTokenLifetime: 7201 })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/from 1 to 7200/),
    });
    const account = await t.sa.admin.createAccount({ name: 'long', accessTokenLifetime: 7200 });
    expect((await issue(t, account)).expiresIn).toBe(7200);
    await expect(t.sa.admin.setPolicy(account.clientId, { accessTokenLifetime: 86_400 })).rejects.toBeInstanceOf(AdminError);
    await expect(t.sa.admin.setPolicy(account.clientId, { accessTokenLifetime: 0 })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(t.sa.admin.setPolicy(account.clientId, { accessTokenLifetime: 60.5 })).rejects.toMatchObject({ code: 'invalid_input' });
  });

  // An account that requires DPoP-bound tokens on a server that cannot issue them could get no token.
  it('refuses dpopBoundAccessTokens at the admin API of a server with dpop: false, at creation and when set', async () => {
    const t = createTestApp({ dpop: false });
    await expect(t.sa.admin.createAccount({ name: 'bound', dpopBoundAccessTokens: true })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/DPoP turned off/),
    });
    const account = await t.sa.admin.createAccount({ name: 'unbound' });
    await expect(t.sa.admin.setPolicy(account.clientId, { dpopBoundAccessTokens: true })).rejects.toMatchObject({ code: 'invalid_input' });
    expect(await t.sa.admin.setPolicy(account.clientId, { dpopBoundAccessTokens: false })).toMatchObject({ dpopBoundAccessTokens: false });
    expect((await issue(t, account)).expiresIn).toBe(3600);
  });

  // The default maximum is tokenLifetime: accounts may shorten their tokens, not lengthen them.
  it('by default lets an account shorten its tokens only', async () => {
    const t = createTestApp();
    await expect(t.sa.admin.createAccount({ name: 'longer', accessTokenLifetime: 3601 })).rejects.toMatchObject({ code: 'invalid_input' });
    expect(t.sa.config.tokenLifetime).toBe(3600);
  });

  // A server refuses a maximum below its tokenLifetime (its default accounts would exceed it).
  it('refuses maxAccessTokenLifetime below tokenLifetime at start-up', () => {
    expect(() => createTestApp({ tokenLifetime: 3600, maxAccessTokenLifetime: 600 })).toThrow(TypeError);
  });

  // A lifetime stored by a standalone admin API with a higher maximum never yields a token longer than
  // this server's maximum (its deny-list retention is derived from that maximum).
  it('cuts a stored lifetime above the server maximum down to the maximum', async () => {
    const store = new MemoryAccountStore();
    const t = createTestApp({ store });
    const created = await t.sa.admin.createAccount({ name: 'stored-long' });
    await store.setAccountPolicy(created.clientId, { accessTokenLifetime: 50_000 });
    const { expiresIn, payload } = await issue(t, created);
    expect(expiresIn).toBe(3600);
    expect(payload.exp).toBe((payload.iat as number) + 3600);
  });

  // A new lifetime applies to new tokens; introspection reports each token's own exp (RFC 7662 §2.2).
  it('applies a changed lifetime to new tokens; introspection reports each token exp', async () => {
    const t = createTestApp();
    const gateway = await t.sa.admin.createAccount({ name: 'gateway', scopes: ['token:introspect'] });
    const account = await t.sa.admin.createAccount({ name: 'worker' });
    const first = await issue(t, account);
    await t.sa.admin.setPolicy(account.clientId, { accessTokenLifetime: 300 });
    const second = await issue(t, account);
    expect(second.expiresIn).toBe(300);
    const introspect = async (token: string) =>
      (await request(t.app).post('/oauth/introspect').set('Authorization', basicHeader(gateway.clientId, gateway.secret.value)).type('form').send({ token }))
        .body as { active: boolean; exp: number };
    expect(await introspect(first.token)).toMatchObject({ active: true, exp: first.payload.exp });
    expect(await introspect(second.token)).toMatchObject({ active: true, exp: second.payload.exp });
    t.clock.advance(301 + t.sa.config.clockTolerance);
    expect((await introspect(second.token)).active).toBe(false);
    expect((await introspect(first.token)).active).toBe(true);
  });

  // Revocation keeps a token listed while it can be admitted: with a longer maximum, a token revoked by
  // ID stays on the deny-list for that maximum plus the clock tolerance.
  it('keeps a token revoked by ID listed for the server maximum lifetime plus the clock tolerance', async () => {
    const t = createTestApp({ maxAccessTokenLifetime: 7200 });
    const account = await t.sa.admin.createAccount({ name: 'long', accessTokenLifetime: 7200 });
    const { token, payload } = await issue(t, account);
    const revoked = await t.sa.admin.revokeToken(payload.jti as string);
    expect(revoked.tokenId).toBe(payload.jti);
    const listed = await t.store.listRevokedTokens!(t.clock.now());
    const entry = listed.find((record) => record.tokenId === payload.jti);
    expect(entry?.expiresAt.getTime()).toBe(t.clock.now().getTime() + (7200 + t.sa.config.clockTolerance) * 1000);
    await request(t.app).get('/api/whoami').set('Authorization', `Bearer ${token}`).expect(401);
  });
});

describe('account token policy in the admin API', () => {
  // Issue 34 item 6: "Everywhere a credential or account is shown or changed": create answer, summaries, audit.
  it('shows the policy in the create answer and the summaries, and audits a change', async () => {
    const t = createTestApp();
    const created = await t.sa.admin.createAccount({ name: 'payouts', accessTokenLifetime: 900, dpopBoundAccessTokens: true });
    expect(created).toMatchObject({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
    expect(await t.sa.admin.getAccount(created.clientId)).toMatchObject({ accessTokenLifetime: 900, dpopBoundAccessTokens: true });
    const plain = await t.sa.admin.createAccount({ name: 'plain' });
    expect(plain).toMatchObject({ accessTokenLifetime: null, dpopBoundAccessTokens: false });
    expect(await t.sa.admin.setPolicy(created.clientId, { dpopBoundAccessTokens: false })).toEqual({
      clientId: created.clientId,
      accessTokenLifetime: 900,
      dpopBoundAccessTokens: false,
    });
    expect(await t.sa.admin.setPolicy(created.clientId, { accessTokenLifetime: null })).toEqual({
      clientId: created.clientId,
      accessTokenLifetime: null,
      dpopBoundAccessTokens: false,
    });
    // Audit hooks are called off the caller's path (setImmediate).
    await new Promise((resolve) => setImmediate(resolve));
    const changes = t.events.filter((event) => event.type === 'account.policy_changed');
    expect(changes).toEqual([
      expect.objectContaining({ clientId: created.clientId, name: 'payouts', accessTokenLifetime: 900, dpopBoundAccessTokens: false }),
      expect.objectContaining({ clientId: created.clientId, name: 'payouts', accessTokenLifetime: null, dpopBoundAccessTokens: false }),
    ]);
  });

  // An audit trail answers "what was it before?": who relaxed a DPoP requirement, from which lifetime.
  it('audits each policy change with the policy before it and after it', async () => {
    const t = createTestApp();
    const created = await t.sa.admin.createAccount({ name: 'payouts', accessTokenLifetime: 900, dpopBoundAccessTokens: true });
    await t.sa.admin.setPolicy(created.clientId, { dpopBoundAccessTokens: false });
    await t.sa.admin.setPolicy(created.clientId, { accessTokenLifetime: 600 });
    await new Promise((resolve) => setImmediate(resolve));
    const changes = t.events.filter((event) => event.type === 'account.policy_changed');
    expect(changes).toEqual([
      expect.objectContaining({ accessTokenLifetime: 900, dpopBoundAccessTokens: false, before: { accessTokenLifetime: 900, dpopBoundAccessTokens: true } }),
      expect.objectContaining({ accessTokenLifetime: 600, dpopBoundAccessTokens: false, before: { accessTokenLifetime: 900, dpopBoundAccessTokens: false } }),
    ]);
  });

  it('refuses an empty or unknown policy change, and an unknown account', async () => {
    const t = createTestApp();
    const account = await t.sa.admin.createAccount({ name: 'a' });
    await expect(t.sa.admin.setPolicy(account.clientId, {})).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(t.sa.admin.setPolicy(account.clientId, { dpopBoundAccessTokens: 'yes' as unknown as boolean })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(t.sa.admin.setPolicy('esa_unknown', { dpopBoundAccessTokens: true })).rejects.toMatchObject({ code: 'account_not_found' });
  });

  // A store without setAccountPolicy (written for an earlier version) cannot hold a policy: refused
  // rather than silently dropped; accounts without a policy keep working on it.
  it('refuses a policy on a store without setAccountPolicy, and issues tokens as before on it', async () => {
    // ForwardingStore forwards the required methods only: no setAccountPolicy.
    const legacy = new ForwardingStore(new MemoryAccountStore());
    const t = createTestApp({ store: legacy });
    await expect(t.sa.admin.createAccount({ name: 'x', dpopBoundAccessTokens: true })).rejects.toThrow(/setAccountPolicy/);
    const plain = await t.sa.admin.createAccount({ name: 'plain' });
    await expect(t.sa.admin.setPolicy(plain.clientId, { accessTokenLifetime: 60 })).rejects.toThrow(/setAccountPolicy/);
    expect((await issue(t, plain)).expiresIn).toBe(3600);
  });
});

describe('extraTokenClaims', () => {
  const withHook = (extraTokenClaims: ServiceAccountsOptions['extraTokenClaims']) => {
    const operational: OperationalEvent[] = [];
    const t = createTestApp({ extraTokenClaims, onEvent: (event) => void operational.push(event) });
    return { t, operational };
  };

  // Issue 34 item 4: "A host hook that adds claims to an account's access tokens ..., called on the
  // token path with the account, the scopes and the resource".
  it('adds the claims the hook returns, called with the account, the scopes and the resource', async () => {
    const calls: unknown[] = [];
    const { t } = withHook(({ account, scopes, resource }) => {
      calls.push({ clientId: account.clientId, scopes, resource });
      // RFC 9068 §2.2.3.1 authorization claims are the host's to add.
      return { plan: 'enterprise', tenant_region: 'eu', roles: ['reader'] };
    });
    const account = await t.sa.admin.createAccount({ name: 'acme', scopes: ['jobs:read'] });
    const { payload, token } = await issue(t, account);
    expect(payload).toMatchObject({ plan: 'enterprise', tenant_region: 'eu', roles: ['reader'], sub: account.clientId, iss: TEST_ISSUER, scope: 'jobs:read' });
    expect(calls).toEqual([{ clientId: account.clientId, scopes: ['jobs:read'], resource: TEST_ISSUER }]);
    // The token still verifies and works.
    await request(t.app).get('/api/whoami').set('Authorization', `Bearer ${token}`).expect(200);
  });

  it('adds nothing when the hook returns undefined or an empty object', async () => {
    for (const result of [undefined, {}]) {
      const { t } = withHook(() => result);
      const account = await t.sa.admin.createAccount({ name: 'acme' });
      const { payload } = await issue(t, account);
      expect(Object.keys(payload).sort()).toEqual(['aud', 'client_id', 'exp', 'iat', 'iss', 'jti', 'secret_id', 'sub']);
    }
  });

  // "registered claims (`iss`, `sub`, `aud`, `exp`, `iat`, `jti`, `client_id`, `scope`, `cnf`, ...) cannot
  // be overridden": the request fails with 500 server_error, the event names the claim, nothing leaks.
  it('cannot override a registered claim: 500 server_error without detail, and an extra_claims.refused event', async () => {
    for (const claim of ['iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'jti', 'client_id', 'scope', 'cnf', 'secret_id']) {
      const { t, operational } = withHook(() => ({ [claim]: 'forged-value', plan: 'x' }));
      const account = await t.sa.admin.createAccount({ name: 'acme' });
      const res = await tokenRequest(t, account);
      expectOAuthError(res, 500, 'server_error');
      expectNoStore(res);
      expect(res.text).not.toMatch(/forged-value|extraTokenClaims|registered/);
      expect(operational).toEqual([expect.objectContaining({ type: 'extra_claims.refused', clientId: account.clientId, reason: 'registered_claim', claim })]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(t.events.some((event) => event.type === 'token.issued')).toBe(false);
    }
  });

  // "a size limit on the result": more than 1024 bytes of JSON is refused.
  it('refuses more than 1024 bytes of JSON with 500 server_error and a too_large event; 1024 bytes pass', async () => {
    // {"blob":"..."} is 11 bytes plus the value.
    const fits = withHook(() => ({ blob: 'x'.repeat(1024 - 11) }));
    const account = await fits.t.sa.admin.createAccount({ name: 'acme' });
    expect((await issue(fits.t, account)).payload.blob).toHaveLength(1013);

    const big = withHook(() => ({ blob: 'x'.repeat(1024 - 10) }));
    const other = await big.t.sa.admin.createAccount({ name: 'acme' });
    const res = await tokenRequest(big.t, other);
    expectOAuthError(res, 500, 'server_error');
    expect(res.text).not.toMatch(/xxxx/);
    expect(big.operational).toEqual([expect.objectContaining({ type: 'extra_claims.refused', reason: 'too_large' })]);
  });

  it('answers 500 server_error without the error when the hook throws or returns no object', async () => {
    const cases: [ServiceAccountsOptions['extraTokenClaims'], string][] = [
      [() => { throw new Error('database password is hunter2'); }, 'hook_threw'],
      [() => 'plan=enterprise' as unknown as Record<string, unknown>, 'not_an_object'],
      [() => ({ n: 10n }), 'not_json'],
      [(() => Promise.resolve({ plan: 'x' })) as unknown as ServiceAccountsOptions['extraTokenClaims'], 'not_an_object'],
      // A toJSON would write names the check never saw: a scope of its own, here.
      [() => ({ plan: 'pro', toJSON: () => ({ plan: 'pro', scope: 'admin' }) }), 'not_an_object'],
      [() => new (class Claims { plan = 'pro'; toJSON() { return { plan: 'pro', scope: 'admin' }; } })() as unknown as Record<string, unknown>, 'not_an_object'],
    ];
    for (const [hook, reason] of cases) {
      const { t, operational } = withHook(hook);
      const account = await t.sa.admin.createAccount({ name: 'acme' });
      const res = await tokenRequest(t, account);
      expectOAuthError(res, 500, 'server_error');
      expect(res.text).not.toMatch(/hunter2|plan/);
      expect(operational).toEqual([expect.objectContaining({ type: 'extra_claims.refused', reason })]);
    }
  });

  // The hook gets a copy of its own: what it does to its input cannot reach the account the instance
  // authorizes with, nor the scopes of the token being issued, and does not fail the request.
  it('cannot change what this or later token requests grant by editing its input', async () => {
    const { t, operational } = withHook(({ account, scopes }) => {
      const editable = account as unknown as { scopes: string[]; enabled: boolean; resources: string[]; secrets: unknown[] };
      editable.scopes.push('admin');
      editable.enabled = false;
      editable.resources.push('https://evil.test');
      editable.secrets.length = 0;
      (scopes as string[]).push('admin');
      return { plan: 'pro' };
    });
    const account = await t.sa.admin.createAccount({ name: 'acme', scopes: ['jobs:read'] });
    expect((await issue(t, account)).payload).toMatchObject({ scope: 'jobs:read', aud: TEST_ISSUER, plan: 'pro' });
    expect((await issue(t, account)).payload).toMatchObject({ scope: 'jobs:read', aud: TEST_ISSUER, plan: 'pro' });
    const asked = await request(t.app).post('/oauth/token').set('Authorization', basicHeader(account.clientId, account.secret.value))
      .type('form').send({ grant_type: 'client_credentials', scope: 'admin' });
    expectOAuthError(asked, 400, 'invalid_scope');
    expect(operational).toEqual([]);
    expect(await t.sa.admin.getAccount(account.clientId)).toMatchObject({ scopes: ['jobs:read'], enabled: true, resources: [] });
  });

  // Synchronous by design: an async function is refused at start-up rather than on every token request.
  it('refuses an async hook at start-up', () => {
    expect(() => createTestApp({ extraTokenClaims: (async () => ({ plan: 'x' })) as unknown as ServiceAccountsOptions['extraTokenClaims'] })).toThrow(/synchronous/);
  });
});
