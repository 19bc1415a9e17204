/**
 * `POST /oauth/introspect` (RFC 7662) across client accounts (tenants): an introspecting account that
 * belongs to a client account learns only of that client account's tokens, whoever provisioned it (an
 * administrator of that client account through the admin router included); any other token is
 * answered exactly like a token that does not exist. Only an account without a client account, which
 * only an operator can create, introspects across client accounts. Checked by example and as a
 * property over random client accounts, introspectors and token states. Revocation (RFC 7009) across
 * client accounts is checked too.
 */
import type { Express } from 'express';
import fc from 'fast-check';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createAdminApi, createAdminRouter, type AdminPrincipal, type CreatedAccount, type TokenIntrospectedEvent } from '../../src/index.js';
import { createTestApp, watchAdmin } from '../helpers/create-app.js';
import { basicHeader, decodeToken, issueToken } from '../helpers/tokens.js';

const PRINCIPALS: Record<string, AdminPrincipal> = {
  operator: { actor: { id: 'op', name: 'Olive Operator' }, allClientAccounts: true },
  acme: { actor: { id: 'u-acme', name: 'Ada of Acme' }, clientAccountId: 'acme' },
  globex: { actor: { id: 'u-globex', name: 'Grace of Globex' }, clientAccountId: 'globex' },
};

/** A test app with the token router at /oauth and the admin router at /admin (Bearer <principal name>). */
function makeApp(allowUnrestrictedIntrospection = false) {
  const t = createTestApp({ allowUnrestrictedIntrospection });
  // The admin router shows each new secret once, in its response.
  const admin = createAdminApi({ store: t.store, secretHashRounds: 4, now: t.clock.now });
  watchAdmin(admin, 'in-its-response');
  t.app.use(
    '/admin',
    createAdminRouter({ admin, authorize: (req) => PRINCIPALS[/^Bearer (\w+)$/.exec(req.headers.authorization ?? '')?.[1] ?? ''] }),
  );
  /** Creates an account through the admin router, as `by` (a client account's administrator or the operator). */
  const create = async (by: string, name: string, scopes?: string[]): Promise<CreatedAccount> => {
    const res = await request(t.app).post('/admin/service-accounts').set('Authorization', `Bearer ${by}`).send({ name, ...(scopes && { scopes }) });
    expect(res.status, res.text).toBe(201);
    return res.body as CreatedAccount;
  };
  return { ...t, create };
}

/** acme's introspector, a client in acme and one in globex, and a token of each client. */
async function acmeGatewayAndTwoClients(t: ReturnType<typeof makeApp>) {
  const gateway = await t.create('acme', 'acme-gateway', ['token:introspect']);
  const acmeClient = await t.create('acme', 'acme-portal', ['jobs:read']);
  const globexClient = await t.create('globex', 'globex-portal', ['jobs:read']);
  const acmeToken = await issueToken(t.app, acmeClient.clientId, acmeClient.secret.value);
  const globexToken = await issueToken(t.app, globexClient.clientId, globexClient.secret.value);
  return { gateway, acmeClient, globexClient, acmeToken, globexToken };
}

/** What a caller can learn from an answer: status, the headers that describe the body, and the body. */
async function introspect(app: Express, who: CreatedAccount, token: string) {
  const res = await request(app).post('/oauth/introspect').set('Authorization', basicHeader(who.clientId, who.secret.value)).type('form').send({ token });
  const { 'content-type': type, 'content-length': length, 'cache-control': cache, pragma } = res.headers as Record<string, string | undefined>;
  return { status: res.status, type, length, cache, pragma, text: res.text };
}

// RFC 7662 §2.2: "If the introspection call is properly authorized but ... the protected resource is not
// allowed to introspect this particular token, then the authorization server MUST return an introspection
// response with the "active" field set to "false""; §4: "the authorization server MUST determine whether
// or not the token can be used at the protected resource making the introspection call". Our rule
// (docs/revocation-and-introspection.md, "Client accounts"): an introspector of client account X may
// introspect only X's tokens.
describe('introspection across client accounts', () => {
  it("answers an administrator-made introspector of acme about globex's token exactly as about an unknown token", async () => {
    const t = makeApp();
    const { gateway, globexClient, acmeToken, globexToken } = await acmeGatewayAndTwoClients(t);

    expect(JSON.parse((await introspect(t.app, gateway, acmeToken)).text)).toMatchObject({ active: true, username: 'acme-portal' });
    const foreign = await introspect(t.app, gateway, globexToken);
    expect(foreign.status).toBe(200);
    expect(JSON.parse(foreign.text)).toEqual({ active: false });
    expect(foreign).toEqual(await introspect(t.app, gateway, 'no-such-token'));
    // The token still works where it belongs.
    await request(t.app).get('/api/whoami').auth(globexToken, { type: 'bearer' }).expect(200);
  });

  it("keeps an acme introspector away from the tokens of an account without a client account", async () => {
    const t = makeApp();
    const gateway = await t.create('acme', 'acme-gateway', ['token:introspect']);
    const operators = await t.create('operator', 'billing-job', ['jobs:read']);
    const token = await issueToken(t.app, operators.clientId, operators.secret.value);
    expect(JSON.parse((await introspect(t.app, gateway, token)).text)).toEqual({ active: false });
  });

  // An unrestricted account of a client account (host opt-in, docs/configuration.md) is held to the same rule.
  it('holds an unrestricted introspector of a client account to the same rule', async () => {
    const t = makeApp(true);
    const gateway = await t.create('acme', 'acme-legacy-gateway');
    const globexClient = await t.create('globex', 'globex-portal', ['jobs:read']);
    const token = await issueToken(t.app, globexClient.clientId, globexClient.secret.value);
    expect(JSON.parse((await introspect(t.app, gateway, token)).text)).toEqual({ active: false });
  });

  it('lets an introspector without a client account, which only an operator can create, introspect every client account', async () => {
    const t = makeApp();
    const gateway = await t.create('operator', 'shared-gateway', ['token:introspect']);
    expect(gateway.clientAccountId).toBeNull();
    for (const tenant of ['acme', 'globex']) {
      const client = await t.create(tenant, `${tenant}-portal`, ['jobs:read']);
      const token = await issueToken(t.app, client.clientId, client.secret.value);
      expect(JSON.parse((await introspect(t.app, gateway, token)).text)).toMatchObject({ active: true, username: `${tenant}-portal` });
    }
  });

  // docs/revocation-and-introspection.md, audit: the host's audit hook hears the refusal, without the other account's name.
  it('emits token.introspected with reason other_client_account and without the other account’s name', async () => {
    const t = makeApp();
    const gateway = await t.create('acme', 'acme-gateway', ['token:introspect']);
    const globexClient = await t.create('globex', 'globex-portal', ['jobs:read']);
    const token = await issueToken(t.app, globexClient.clientId, globexClient.secret.value);
    await introspect(t.app, gateway, token);
    const events = t.events.filter((e): e is TokenIntrospectedEvent => e.type === 'token.introspected');
    expect(events).toEqual([
      {
        type: 'token.introspected',
        at: expect.any(Date),
        clientId: gateway.clientId,
        name: 'acme-gateway',
        active: false,
        reason: 'other_client_account',
        tokenId: decodeToken(token).payload.jti,
        tokenClientId: globexClient.clientId,
      },
    ]);
  });

  // docs/revocation-and-introspection.md: other_client_account "whatever its state", expired included; the
  // token's own client account still hears why its expired token is inactive.
  it('emits other_client_account for an expired token of another client account, and expired for its own', async () => {
    const t = makeApp();
    const { gateway, acmeClient, globexClient, acmeToken, globexToken } = await acmeGatewayAndTwoClients(t);
    t.clock.advance(3600 + 10);
    // The gateway's own secret is still good (secrets do not expire here); only the tokens have.
    const foreign = await introspect(t.app, gateway, globexToken);
    expect(JSON.parse(foreign.text)).toEqual({ active: false });
    expect(JSON.parse((await introspect(t.app, gateway, acmeToken)).text)).toEqual({ active: false });
    const events = t.events.filter((e): e is TokenIntrospectedEvent => e.type === 'token.introspected');
    expect(events.map(({ reason, tokenClientId }) => ({ reason, tokenClientId }))).toEqual([
      { reason: 'other_client_account', tokenClientId: globexClient.clientId },
      { reason: 'expired', tokenClientId: acmeClient.clientId },
    ]);
  });

  // RFC 7009 §2.1: "The authorization server first validates the client credentials ... and then verifies
  // whether the token was issued to the client making the revocation request. If this validation fails,
  // the request is refused" (answered 200 like every other refusal, §2.2).
  it("never revokes another client account's token, even with token:introspect, and answers the same 200", async () => {
    const t = makeApp();
    const gateway = await t.create('acme', 'acme-gateway', ['token:introspect']);
    const globexClient = await t.create('globex', 'globex-portal', ['jobs:read']);
    const token = await issueToken(t.app, globexClient.clientId, globexClient.secret.value);
    const res = await request(t.app).post('/oauth/revoke').set('Authorization', basicHeader(gateway.clientId, gateway.secret.value)).type('form').send({ token });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    await request(t.app).get('/api/whoami').auth(token, { type: 'bearer' }).expect(200);
  });

  /** One account of a run: who makes it, whether it may introspect, and what happens to its token. */
  const accountArb = fc.record({
    by: fc.constantFrom('acme', 'globex', 'operator'),
    scopes: fc.constantFrom<readonly string[] | undefined>(['token:introspect'], ['jobs:read', 'token:introspect'], ['jobs:read'], undefined),
    fate: fc.constantFrom('live', 'live', 'revoked', 'disabled'),
  });

  // The property of the rule above: whatever the accounts, scopes, token states and host option, an
  // introspector of a client account never learns anything of another client account's token (nor of
  // one without a client account): the whole answer equals the answer about a token that does not exist.
  it('never tells a client account’s introspector anything of a token outside it (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(accountArb, { minLength: 2, maxLength: 4 }), fc.boolean(), async (plan, allowUnrestricted) => {
        const t = makeApp(allowUnrestricted);
        const accounts = await Promise.all(plan.map((p, i) => t.create(p.by, `svc-${i}`, p.scopes ? [...p.scopes] : undefined)));
        const tokens = await Promise.all(accounts.map((a) => issueToken(t.app, a.clientId, a.secret.value)));
        for (const [i, p] of plan.entries()) {
          if (p.fate === 'revoked') await request(t.app).post('/oauth/revoke').auth(accounts[i]!.clientId, accounts[i]!.secret.value).type('form').send({ token: tokens[i] }).expect(200);
          if (p.fate === 'disabled') await request(t.app).post(`/admin/service-accounts/${accounts[i]!.clientId}/disable`).set('Authorization', 'Bearer operator').expect(200);
        }
        for (const [c, caller] of accounts.entries()) {
          const may = plan[c]!.scopes?.includes('token:introspect') === true || (allowUnrestricted && plan[c]!.scopes === undefined);
          if (!may || plan[c]!.fate === 'disabled') continue;
          const unknown = await introspect(t.app, caller, 'no-such-token');
          for (const [k, token] of tokens.entries()) {
            const answer = await introspect(t.app, caller, token);
            const sees = caller.clientAccountId === null || caller.clientAccountId === accounts[k]!.clientAccountId;
            if (!sees) expect(answer).toEqual(unknown);
            else expect(JSON.parse(answer.text)).toMatchObject({ active: plan[k]!.fate === 'live' });
          }
        }
      }),
      { numRuns: Number(process.env.INTROSPECTION_ISOLATION_RUNS ?? 100) },
    );
  }, 300_000);
});
