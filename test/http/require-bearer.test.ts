/**
 * CONTRACT §3, `requireBearer()` on protected routes: one `it` per row of the table, each quoting the
 * clause it checks, with the middleware mounted in Express 5 and in Express 4. Time comes from the
 * injected TestClock; nothing sleeps. Hand-made tokens are signed with jsonwebtoken directly.
 */
import { connect, type AddressInfo } from 'node:net';
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import type { CreatedAccount } from '../../src/index.js';
import { signAccessToken } from '../../src/access-tokens/access-token.js';
import { resolveConfig } from '../../src/config.js';
import { MAX_SCOPES, MAX_SCOPES_LENGTH } from '../../src/admin/admin-input.js';
import { MAX_EXTRA_CLAIMS_BYTES } from '../../src/extra-token-claims.js';
import { createTestApp, TEST_HS256_KEY, TEST_ISSUER, type TestAppOptions } from '../helpers/create-app.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';
import { recordServiceAccountOnFinish } from '../helpers/finish-log.js';
import { FailingStore } from '../helpers/failing-store.js';
import { WatchlessStore } from '../helpers/watchless-store.js';
import { claimsFor, decodeToken, issueToken, signHs256, unsignedToken } from '../helpers/tokens.js';

const REALM = 'Bearer realm="service-accounts"';
const challenge = (params: string) => `${REALM}, ${params}`;
const INVALID_TOKEN = challenge('error="invalid_token", error_description="The access token is invalid"');

describe.each([5, 4] as const)('requireBearer() on Express %i', (version) => {
  const make = (options: TestAppOptions = {}) => createTestApp({ express: version, ...options });

  let t: ReturnType<typeof make>;
  /** Unrestricted: provisioned without scopes. */
  let account: CreatedAccount;
  /** Restricted to jobs:read and jobs:write. */
  let scoped: CreatedAccount;
  let handlerRuns: number;

  beforeEach(async () => {
    t = make();
    handlerRuns = 0;
    t.app.get('/api/counted', t.sa.requireBearer(), (_req, res) => {
      handlerRuns++;
      res.json({ ok: true });
    });
    account = await t.sa.admin.createAccount({ name: 'procurement-portal', clientAccountId: 'acme-corp' });
    scoped = await t.sa.admin.createAccount({ name: 'workflow-engine', scopes: ['jobs:read', 'jobs:write'] });
  });

  const whoami = (authorization?: string) => {
    const req = request(t.app).get('/api/whoami');
    return authorization === undefined ? req : req.set('Authorization', authorization);
  };
  const nowSeconds = () => Math.floor(t.clock.now().getTime() / 1000);
  const kid = () => t.sa.config.signingKey.kid;

  // CONTRACT §3: "no `Authorization` header, or another scheme | 401 | `Bearer realm="..."`, with no `error`
  // attribute (RFC 6750 3.1)". RFC 6750 §3.1: "If the request lacks any authentication information ...,
  // the resource server SHOULD NOT include an error code or other error information."
  // "A 401 without credentials offers a DPoP challenge beside Bearer" (RFC 9449 §7.1).
  it('401 with a bare Bearer challenge, and a DPoP one beside it, for no Authorization header or another scheme', async () => {
    const token = await issueToken(t.app, account.clientId, account.secret.value);
    const cases = [
      whoami(),
      whoami(`Basic ${Buffer.from(`${account.clientId}:${account.secret.value}`).toString('base64')}`),
      whoami(`Token ${token}`),
      whoami(`Bearer${token}`),
      whoami(`MAC ${token}`),
      // CONTRACT §3: "The token is read from `Authorization: Bearer <token>` only."
      request(t.app).get('/api/whoami').query({ access_token: token }),
      request(t.app).get('/api/whoami').set('X-Access-Token', token),
    ];
    for (const res of await Promise.all(cases)) {
      expectOAuthError(res, 401, 'invalid_request', { challenge: `${REALM}, DPoP realm="service-accounts", algs="ES256 PS256"` });
      expect(res.headers['www-authenticate']).not.toMatch(/error=/);
    }
  });

  // CONTRACT §3: "malformed header (`Bearer` with no token, two tokens) | 400 | `Bearer realm="...", error="invalid_request"`".
  // RFC 6750 §3.1: "invalid_request: The request is missing a required parameter, ... or is otherwise malformed."
  it.each([
    ['Bearer with no token', 'Bearer'],
    ['Bearer with only spaces', 'Bearer    '],
    ['two tokens', 'Bearer abc.def.ghi jkl.mno.pqr'],
    ['two tokens separated by a comma', 'Bearer abc.def.ghi,jkl.mno.pqr'],
  ])('400 invalid_request for a malformed header: %s', async (_name, header) => {
    const res = await whoami(header);
    expectOAuthError(res, 400, 'invalid_request', { challenge: /^Bearer realm="service-accounts", error="invalid_request"/ });
  });

  // RFC 6750 §2: the token travels in one Authorization header. Node keeps only the first of several,
  // so a second one (which another component might read) must not pass unseen.
  it('400 invalid_request for two Authorization headers', async () => {
    const token = await issueToken(t.app, account.clientId, account.secret.value);
    const server = t.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.end(`GET /api/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`);
        });
        let data = '';
        socket.on('data', (chunk: Buffer) => (data += chunk.toString()));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
      expect(raw).toMatch(/^HTTP\/1\.1 400 /);
      expect(raw).toMatch(/www-authenticate: Bearer realm="service-accounts", error="invalid_request"/i);
    } finally {
      server.close();
    }
  });

  describe('401 invalid_token: expired', () => {
    // CONTRACT §3: "token expired | 401 | `Bearer realm="...", error="invalid_token", error_description="The access token expired"`".
    // SPEC §5.3: "A token is valid for 3600 seconds. When it has expired, a call returns 401 with a
    // `WWW-Authenticate` header indicating that the token is expired."
    it('401 invalid_token "The access token expired" once 3600 s and the 5 s tolerance have passed', async () => {
      const token = await issueToken(t.app, account.clientId, account.secret.value);
      (await whoami(`Bearer ${token}`).expect(200)).body;
      t.clock.advance(3600 + 5);
      const res = await whoami(`Bearer ${token}`);
      expectOAuthError(res, 401, 'invalid_token', {
        challenge: challenge('error="invalid_token", error_description="The access token expired"'),
      });
      expect(res.body).toEqual({ error: 'invalid_token', error_description: 'The access token expired' });
      // Issue 2 point 9: the refusal is audited with the account's client ID and name.
      await new Promise((resolve) => setImmediate(resolve));
      expect(t.events).toContainEqual(
        expect.objectContaining({ type: 'token.refused', reason: 'expired', clientId: account.clientId, name: 'procurement-portal' }),
      );
      // SPEC §3: "expired | POST {base_url}/oauth/token | Client repeats the request ... | a new token is valid".
      const fresh = await issueToken(t.app, account.clientId, account.secret.value);
      await whoami(`Bearer ${fresh}`).expect(200);
    });

    // CONTRACT §3: "Clock tolerance is configurable and at most 5 seconds by default."
    it('a token just inside the 5 s tolerance still passes; one second later it is expired', async () => {
      const token = await issueToken(t.app, account.clientId, account.secret.value);
      t.clock.advance(3600 + 4);
      await whoami(`Bearer ${token}`).expect(200);
      t.clock.advance(1);
      expectOAuthError(await whoami(`Bearer ${token}`), 401, 'invalid_token', { challenge: /error_description="The access token expired"/ });
    });

    // Same clause, "configurable": a tolerance of 0 expires the token at exp exactly.
    it('clockTolerance: 0 expires the token at exp', async () => {
      t = make({ clockTolerance: 0 });
      const a = await t.sa.admin.createAccount({ name: 'strict-clock' });
      const token = await issueToken(t.app, a.clientId, a.secret.value);
      t.clock.advance(3599);
      await whoami(`Bearer ${token}`).expect(200);
      t.clock.advance(1);
      expectOAuthError(await whoami(`Bearer ${token}`), 401, 'invalid_token', { challenge: /The access token expired/ });
    });
  });

  describe('401 invalid_token: revoked secret or disabled account', () => {
    // CONTRACT §3: "token revoked (its secret revoked) or account disabled | 401 | `Bearer ..., error="invalid_token",
    // error_description=` saying revoked / disabled". SPEC §5.4: "Revoking a client secret revokes every access token issued against it."
    it('401 invalid_token "revoked" once its secret is revoked, while tokens of the other live secret pass (rotation)', async () => {
      const oldToken = await issueToken(t.app, account.clientId, account.secret.value);
      const oldToken2 = await issueToken(t.app, account.clientId, account.secret.value);
      // SPEC §5.5: "Rotation without downtime: provision a second secret for the same account, move traffic to it, retire the old one."
      const second = await t.sa.admin.addSecret(account.clientId);
      const newToken = await issueToken(t.app, account.clientId, second.value);
      await whoami(`Bearer ${oldToken}`).expect(200);

      await t.sa.admin.revokeSecret(account.clientId, account.secret.id);
      for (const token of [oldToken, oldToken2]) {
        const res = await whoami(`Bearer ${token}`);
        expectOAuthError(res, 401, 'invalid_token', {
          challenge: challenge('error="invalid_token", error_description="The access token was revoked"'),
        });
        expect((res.body as { error_description: string }).error_description).toMatch(/revoked/);
      }
      const res = await whoami(`Bearer ${newToken}`).expect(200);
      expect(res.body).toMatchObject({ clientId: account.clientId, secretId: second.id });
    });

    // CONTRACT §3: "A secret revocation ... takes effect on every server sharing the store within 1 second":
    // with `statusCacheTtl: 0` and a store that cannot announce changes, nothing is cached at all.
    it('statusCacheTtl: 0 sees a revocation made by another instance at once', async () => {
      const store = new WatchlessStore();
      const here = make({ store, statusCacheTtl: 0 });
      const there = make({ store, statusCacheTtl: 0 });
      const a = await here.sa.admin.createAccount({ name: 'no-cache' });
      const token = await issueToken(here.app, a.clientId, a.secret.value);
      await request(here.app).get('/api/whoami').set('Authorization', `Bearer ${token}`).expect(200);
      await there.sa.admin.revokeSecret(a.clientId, a.secret.id);
      const res = await request(here.app).get('/api/whoami').set('Authorization', `Bearer ${token}`);
      expectOAuthError(res, 401, 'invalid_token', { challenge: /The access token was revoked/ });
    });

    // Same row, "account disabled"; SPEC §3 "disabled | Client authentication fails"; re-enabling restores access.
    it('401 invalid_token "disabled" while the account is disabled; the same token passes again once re-enabled', async () => {
      const token = await issueToken(t.app, account.clientId, account.secret.value);
      await whoami(`Bearer ${token}`).expect(200);
      await t.sa.admin.disableAccount(account.clientId);
      const res = await whoami(`Bearer ${token}`);
      expectOAuthError(res, 401, 'invalid_token', {
        challenge: challenge('error="invalid_token", error_description="The service account is disabled"'),
      });
      expect((res.body as { error_description: string }).error_description).toMatch(/disabled/);
      await t.sa.admin.enableAccount(account.clientId);
      await whoami(`Bearer ${token}`).expect(200);
    });
  });

  // CONTRACT §3: "token forged, tampered, `alg: none`, wrong issuer or audience, garbage | 401 | `Bearer ..., error="invalid_token"`".
  // RFC 6750 §3.1: "invalid_token: The access token provided is expired, revoked, malformed, or invalid for other reasons."
  it('401 invalid_token for forged, tampered, alg none, wrong issuer, wrong audience and garbage tokens', async () => {
    const real = await issueToken(t.app, scoped.clientId, scoped.secret.value, 'jobs:read');
    const claims = claimsFor(account.clientId, account.secret.id, nowSeconds());
    // The hand-made baseline is accepted: every variant below differs from it in one way only.
    await whoami(`Bearer ${signHs256(claims, kid())}`).expect(200);

    const [h, p, s] = real.split('.') as [string, string, string];
    const payload = decodeToken(real).payload;
    const tamperedPayload = Buffer.from(JSON.stringify({ ...payload, scope: 'jobs:read jobs:write' })).toString('base64url');
    const flipped = s.slice(0, 10) + (s[10] === 'A' ? 'B' : 'A') + s.slice(11);

    const tokens: Record<string, string> = {
      forgedWithAnotherKey: signHs256(claims, kid(), 'an-attacker-key-that-is-32-bytes-long!!'),
      forgedWithUnknownKid: signHs256(claims, 'attacker-kid'),
      tamperedPayload: `${h}.${tamperedPayload}.${s}`,
      tamperedSignature: `${h}.${p}.${flipped}`,
      algNone: unsignedToken(claims, kid()),
      algNoneWithSignature: `${unsignedToken(claims, kid())}${s}`,
      wrongIssuer: signHs256({ ...claims, iss: 'https://evil.test' }, kid()),
      wrongAudience: signHs256({ ...claims, aud: 'https://other-api.test' }, kid()),
      notYetValid: signHs256({ ...claims, nbf: nowSeconds() + 600 }, kid()),
      noTyp: (() => {
        const part = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
        return `${part({ alg: 'HS256', kid: kid() })}.${p}.${s}`;
      })(),
      unknownSecretId: signHs256({ ...claims, secret_id: 'AAAAAAAAAAAAAAAA' }, kid()),
      unknownClient: signHs256({ ...claims, sub: 'esa_ghost', client_id: 'esa_ghost' }, kid()),
      garbage: 'garbage',
      garbageDots: 'a.b.c',
      base64Junk: Buffer.from('{"alg":"HS256"}').toString('base64url'),
      tooLong: `${h}.${'A'.repeat(9000)}.${s}`,
    };
    for (const [name, token] of Object.entries(tokens)) {
      const res = await whoami(`Bearer ${token}`);
      expect(res.status, name).toBe(401);
      expectOAuthError(res, 401, 'invalid_token', { challenge: INVALID_TOKEN });
    }
    // The untouched token still works.
    await whoami(`Bearer ${real}`).expect(200);
  });

  // CONTRACT §3: only a token that is expired, revoked, disabled, forged, tampered, for another issuer or
  // audience, or garbage is refused; a token the token endpoint issued at its own limits is none of these.
  // An account may hold 100 scopes of 2000 characters in all (the `scope` claim) and the host may add
  // 1 KiB of extra claims: such a token is well over 4096 characters.
  it('admits the largest token the token endpoint issues (every scope an account may hold, 1 KiB of extra claims)', async () => {
    t = make({ extraTokenClaims: () => ({ profile: 'x'.repeat(MAX_EXTRA_CLAIMS_BYTES - '{"profile":""}'.length) }) });
    const scopes = Array.from({ length: MAX_SCOPES }, (_, i) => `scope-${String(i).padStart(3, '0')}`.padEnd(19, '.'));
    expect(scopes.join(' ').length).toBeLessThanOrEqual(MAX_SCOPES_LENGTH);
    const big = await t.sa.admin.createAccount({ name: 'every-scope', scopes });
    const token = await issueToken(t.app, big.clientId, big.secret.value);
    expect(token.length).toBeGreaterThan(4096);
    const res = await whoami(`Bearer ${token}`).expect(200);
    expect(res.body).toMatchObject({ clientId: big.clientId, scopes });
  });

  describe('403 insufficient_scope', () => {
    // CONTRACT §3: "token valid but lacks the route's scope | 403 | `Bearer ..., error="insufficient_scope", scope="<needed>"`".
    // RFC 6750 §3.1: "insufficient_scope: The request requires higher privileges than provided by the access token."
    it('403 insufficient_scope naming the needed scope when the token lacks it', async () => {
      const readOnly = await t.sa.admin.createAccount({ name: 'read-only-reporter', scopes: ['jobs:read'] });
      const token = await issueToken(t.app, readOnly.clientId, readOnly.secret.value);
      const res = await request(t.app).post('/api/jobs').set('Authorization', `Bearer ${token}`);
      expectOAuthError(res, 403, 'insufficient_scope', {
        challenge: /^Bearer realm="service-accounts", error="insufficient_scope", error_description="[^"]*", scope="jobs:write"$/,
      });

      // An account allowed jobs:write whose token asked only for jobs:read lacks it too.
      const narrow = await issueToken(t.app, scoped.clientId, scoped.secret.value, 'jobs:read');
      const res2 = await request(t.app).post('/api/jobs').set('Authorization', `Bearer ${narrow}`);
      expectOAuthError(res2, 403, 'insufficient_scope', { challenge: /scope="jobs:write"/ });

      const wide = await issueToken(t.app, scoped.clientId, scoped.secret.value);
      await request(t.app).post('/api/jobs').set('Authorization', `Bearer ${wide}`).expect(201, { createdBy: 'workflow-engine' });
    });

    // docs/require-bearer.md: "`req.serviceAccount` is also set on a request refused `403 insufficient_scope`
    // ... Its `scopes` are then the token's own. ... on every other refusal it stays unset."
    it('names the account of a 403 on req.serviceAccount for what runs as the answer is sent, and no other refusal', async () => {
      const seen: unknown[] = [];
      let ran = 0;
      t.app.post('/api/logged', recordServiceAccountOnFinish(seen), t.sa.requireBearer({ scope: 'jobs:write' }), (_req, res) => void (ran++, res.status(201).end()));
      const narrow = await issueToken(t.app, scoped.clientId, scoped.secret.value, 'jobs:read');
      expectOAuthError(await request(t.app).post('/api/logged').set('Authorization', `Bearer ${narrow}`), 403, 'insufficient_scope');
      expectOAuthError(await request(t.app).post('/api/logged').set('Authorization', `Bearer ${narrow}x`), 401, 'invalid_token');
      expect(ran).toBe(0);
      expect(seen).toEqual([expect.objectContaining({ type: 'service_account', clientId: scoped.clientId, name: 'workflow-engine', scopes: ['jobs:read'] }), undefined]);
    });

    // CONTRACT §3: "an account provisioned without scopes is unrestricted, like a human hirer (SPEC §1); its
    // tokens carry no `scope` claim and pass every scope check."
    it('a token of an unrestricted account passes every scope check', async () => {
      const token = await issueToken(t.app, account.clientId, account.secret.value);
      expect(decodeToken(token).payload).not.toHaveProperty('scope');
      await request(t.app).post('/api/jobs').set('Authorization', `Bearer ${token}`).expect(201, { createdBy: 'procurement-portal' });
      t.app.get('/api/multi', t.sa.requireBearer({ scope: ['reports:read', 'admin:everything'] }), (_req, res) => {
        res.json({ ok: true });
      });
      await request(t.app).get('/api/multi').set('Authorization', `Bearer ${token}`).expect(200);
    });

    // Same clause: a token without a scope claim from an account that now HAS scopes gets no free pass.
    it('a scope-less token does not pass the scope check once the account is restricted', async () => {
      const claims = claimsFor(scoped.clientId, scoped.secret.id, nowSeconds());
      const res = await request(t.app).post('/api/jobs').set('Authorization', `Bearer ${signHs256(claims, kid())}`);
      expectOAuthError(res, 403, 'insufficient_scope', { challenge: /scope="jobs:write"/ });
    });

    // RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). A route scope outside the grammar is a
    // configuration mistake, refused when the route is set up rather than answered with 403 on every request.
    it('refuses a route scope that is not an RFC 6749 scope token, at setup', () => {
      expect(() => t.sa.requireBearer({ scope: 'jobs:read jobs"write' })).toThrow(
        new TypeError('requireBearer: option "scope" has an invalid scope: "jobs\\"write"'),
      );
      expect(() => t.sa.requireBearer({ scope: ['jobs:read', 'back\\slash'] })).toThrow(TypeError);
      // Not a scope at all (JavaScript callers): refused too, rather than read as "no scope needed".
      expect(() => t.sa.requireBearer({ scope: null as never })).toThrow(TypeError);
      expect(() => t.sa.requireBearer({ scope: [42] as never })).toThrow(TypeError);
      // Spaces separate scopes in a string; empty items are ignored.
      expect(() => t.sa.requireBearer({ scope: '  jobs:read   jobs:write ' })).not.toThrow();
    });

    // docs/require-bearer.md: a scope option that names no scope (an unset variable read as '') throws
    // rather than leaving the route open to every valid token; leaving the option out is how to say so.
    it('refuses a scope option that names no scope (\'\', \'  \', [], [\'\']), at setup', () => {
      for (const scope of ['', '   ', [], ['']]) {
        expect(() => t.sa.requireBearer({ scope }), JSON.stringify(scope)).toThrow(
          new TypeError(`requireBearer: option "scope" names no scope (${JSON.stringify(scope)}); leave it out for a route any valid token may call`),
        );
      }
      expect(() => t.sa.requireBearer({})).not.toThrow();
    });

    // docs/require-bearer.md: "An unknown option, or options that are not an object (a bare scope string),
    // throws a TypeError too: a typo must not leave a route without its scope check."
    it('refuses an unknown option and options that are not an object, at setup', () => {
      expect(() => t.sa.requireBearer({ scopes: 'jobs:write' } as never)).toThrow(
        new TypeError('requireBearer: option "scopes" is not a known option'),
      );
      expect(() => t.sa.requireBearer('jobs:write' as never)).toThrow(
        new TypeError(`requireBearer: options must be an object such as { scope: 'jobs:write' }, got "jobs:write"`),
      );
      expect(() => t.sa.requireBearer(null as never)).toThrow(TypeError);
      expect(() => t.sa.requireBearer(['jobs:write'] as never)).toThrow(
        new TypeError(`requireBearer: options must be an object such as { scope: 'jobs:write' }, got an array`),
      );
      expect(() => t.sa.requireBearer((() => 'jobs:write') as never)).toThrow(/got a function$/);
      expect(() => t.sa.requireBearer({ scope: 'jobs:write', audience: undefined, dpop: 'allowed' })).not.toThrow();
    });
  });

  // CONTRACT §3: "the store is unreachable | 503 | never lets the request through".
  it('503 temporarily_unavailable when the store is unreachable, and the handler never runs', async () => {
    const store = new FailingStore();
    const down = make({ store });
    let ran = 0;
    down.app.get('/api/counted', down.sa.requireBearer(), (_req, res) => {
      ran++;
      res.json({ ok: true });
    });
    // The instance's own signing settings (the test app's), so the token verifies until the store is asked.
    const { token } = signAccessToken(resolveConfig({ store, issuer: TEST_ISSUER, signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY }] }), {
      clientId: account.clientId,
      secretId: account.secret.id,
      scopes: undefined,
      now: down.clock.now(),
      lifetime: 3600,
    });
    for (const path of ['/api/counted', '/api/whoami']) {
      const res = await request(down.app).get(path).set('Authorization', `Bearer ${token}`);
      expectOAuthError(res, 503, 'temporarily_unavailable');
      expect(res.text).not.toMatch(/StoreDownError|store unreachable/);
    }
    const res = await request(down.app).post('/api/jobs').set('Authorization', `Bearer ${token}`);
    expectOAuthError(res, 503, 'temporarily_unavailable');
    expect(ran).toBe(0);
    expect(store.calls.length).toBeGreaterThan(0);
  });

  // CONTRACT §3: "The scheme name is matched case-insensitively (RFC 7235)." RFC 7235 §2.1: "It uses a
  // case-insensitive token as a means to identify the authentication scheme".
  it.each(['bearer', 'BEARER', 'BeArEr'])('accepts the scheme spelled %s', async (scheme) => {
    const token = await issueToken(t.app, account.clientId, account.secret.value);
    await whoami(`${scheme} ${token}`).expect(200);
    await request(t.app).get('/api/counted').set('Authorization', `${scheme} ${token}`).expect(200);
    expect(handlerRuns).toBe(1);
  });

  // CONTRACT §1: "`req.serviceAccount` holds the authenticated principal: `{ type: 'service_account', clientId,
  // name, clientAccountId, scopes, secretId, tokenId }` ... `secretId` is the same `id` the CLI and admin API show".
  it('req.serviceAccount is exactly the principal, with the admin API secret id', async () => {
    const token = await issueToken(t.app, account.clientId, account.secret.value);
    const listed = (await t.sa.admin.listAccounts()).find((a) => a.clientId === account.clientId)!;
    const res = await whoami(`Bearer ${token}`).expect(200);
    expect(res.body).toEqual({
      type: 'service_account',
      clientId: account.clientId,
      name: 'procurement-portal',
      clientAccountId: 'acme-corp',
      scopes: [],
      secretId: listed.secrets[0]!.id,
      tokenId: decodeToken(token).payload.jti,
    });
    expect(listed.secrets[0]!.id).toBe(account.secret.id);

    const scopedToken = await issueToken(t.app, scoped.clientId, scoped.secret.value, 'jobs:write');
    const res2 = await whoami(`Bearer ${scopedToken}`).expect(200);
    expect(res2.body).toEqual({
      type: 'service_account',
      clientId: scoped.clientId,
      name: 'workflow-engine',
      clientAccountId: null,
      scopes: ['jobs:write'],
      secretId: scoped.secret.id,
      tokenId: decodeToken(scopedToken).payload.jti,
    });
  });

  // RFC 7230 §3.2.6 / RFC 7235 §2.1: auth-param values are quoted-strings; "\"" and "\\" are escaped with a backslash.
  it('escapes " and \\ in challenge parameters (a realm containing a quote)', async () => {
    t = make({ realm: 'acme "prod" \\ api' });
    const missing = await whoami();
    expectOAuthError(missing, 401, 'invalid_request', {
      challenge: 'Bearer realm="acme \\"prod\\" \\\\ api", DPoP realm="acme \\"prod\\" \\\\ api", algs="ES256 PS256"',
    });
    const bad = await whoami('Bearer garbage');
    expectOAuthError(bad, 401, 'invalid_token', {
      challenge: 'Bearer realm="acme \\"prod\\" \\\\ api", error="invalid_token", error_description="The access token is invalid"',
    });
  });

  // CONTRACT §3: "Error responses also carry a JSON body `{error, error_description}`."
  it('every refusal carries exactly {error, error_description} and a Bearer challenge', async () => {
    const token = await issueToken(t.app, account.clientId, account.secret.value);
    const refusals = await Promise.all([
      whoami(),
      whoami('Bearer'),
      whoami('Bearer garbage'),
      whoami(`Bearer ${token}x`),
      request(t.app).post('/api/jobs').set('Authorization', `Bearer ${await issueToken(t.app, scoped.clientId, scoped.secret.value, 'jobs:read')}`),
    ]);
    for (const res of refusals) {
      expect([400, 401, 403]).toContain(res.status);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(Object.keys(res.body as object).sort()).toEqual(['error', 'error_description']);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="service-accounts"/);
      expect(res.text).not.toContain(token);
    }
  });
});
