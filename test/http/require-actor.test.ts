/**
 * `requireActor()`: one route that people signed in through the host's own authentication (here
 * passport's session login, with express-session) and service accounts with bearer tokens both call,
 * on Express 5 and Express 4. What the request presents decides the path: a `Bearer` token is the
 * service account's path, answered exactly as `requireBearer()` answers; anything else is the host's.
 * Either way the route sees one actor, the host's permission middleware sees its own user shape on
 * `req.user`, and the activity history names both. See docs/hirers-and-service-accounts.md.
 */
import express5, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import session from 'express-session';
import { Passport } from 'passport';
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Actor, CreatedAccount, RequireActorOptions } from '../../src/index.js';
import { createTestApp, TEST_ISSUER } from '../helpers/create-app.js';
import { DpopKey } from '../helpers/dpop-proofs.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';
import { issueToken } from '../helpers/tokens.js';

/** The host's own user shape, which its permission middleware reads from `req.user`. */
interface Hirer {
  id: string;
  displayName: string;
  companyId: string | null;
  roles: string[];
}

const HIRERS: Record<string, Hirer> = {
  u_ada: { id: 'u_ada', displayName: 'Ada Lovelace', companyId: 'acme-corp', roles: ['hirer'] },
  u_guest: { id: 'u_guest', displayName: 'Grace Guest', companyId: 'acme-corp', roles: ['viewer'] },
};

/** The host's existing permission middleware: it knows `req.user` and nothing of this library. */
function requireRole(role: string): RequestHandler {
  return (req, res, next) => {
    const user = req.user as Hirer | undefined;
    if (user?.roles.includes(role)) next();
    else res.status(403).json({ error: 'forbidden' });
  };
}

interface ActivityEntry {
  action: string;
  actor: { type: Actor['type']; id: string; name: string };
}

describe.each([5, 4] as const)('requireActor() with passport session login on Express %i', (version) => {
  let t: ReturnType<typeof createTestApp>;
  let activity: ActivityEntry[];
  /** Provisioned without scopes: unrestricted. */
  let portal: CreatedAccount;
  /** Restricted to jobs:read. */
  let reader: CreatedAccount;
  let hostAuthRuns: number;

  beforeEach(async () => {
    t = createTestApp({ express: version });
    activity = [];
    hostAuthRuns = 0;
    const express = (version === 4 ? (await import('express4')).default : express5) as unknown as typeof express5;
    const passport = new Passport();
    passport.serializeUser((user, done) => done(null, (user as Hirer).id));
    passport.deserializeUser((id: string, done) => done(null, HIRERS[id] ?? false));
    t.app.use(session({ secret: 'test-session-secret-0123456789', resave: false, saveUninitialized: false }));
    t.app.use(passport.initialize());
    // The host's login: passport's session login (req.login) for a known hirer.
    t.app.post('/login', express.json(), (req, res, next) => {
      const hirer = HIRERS[(req.body as { id?: string }).id ?? ''];
      if (!hirer) return void res.status(401).end();
      req.login(hirer, (err) => (err ? next(err) : res.status(204).end()));
    });
    const countedSession: RequestHandler = (req, res, next) => {
      hostAuthRuns++;
      return passport.session()(req, res, next);
    };
    const hirers: RequireActorOptions = {
      authenticate: countedSession,
      user: (req) => {
        const hirer = req.user as Hirer | undefined;
        return hirer && { id: hirer.id, name: hirer.displayName, clientAccountId: hirer.companyId, roles: hirer.roles };
      },
      serviceAccountRoles: () => ['hirer'],
      attach: (req, actor) => {
        if (actor.type === 'service_account') {
          req.user = { id: actor.id, displayName: actor.name, companyId: actor.clientAccountId, roles: [...actor.roles] } satisfies Hirer;
        }
      },
    };
    const record = (action: string) => (req: Request, res: Response) => {
      const { type, id, name } = req.actor!;
      activity.push({ action, actor: { type, id, name } });
      res.status(201).json({ actor: req.actor, user: req.user });
    };
    t.app.post('/api/hirer/jobs', t.sa.requireActor({ ...hirers, scope: 'jobs:write' }), requireRole('hirer'), record('job.created'));
    t.app.get('/api/hirer/jobs', t.sa.requireActor({ ...hirers, scope: 'jobs:read' }), requireRole('hirer'), record('jobs.listed'));
    t.app.get('/api/hirer/activity', t.sa.requireActor(hirers), (_req, res) => res.json(activity));
    t.app.get('/api/hirer/failing', t.sa.requireActor({ ...hirers, authenticate: (_req, _res, next) => next(new Error('session store down')) }), record('never'));
    t.app.get('/api/hirer/redirecting', t.sa.requireActor({ ...hirers, authenticate: [countedSession, (req, res, next) => (req.user ? next() : res.redirect('/login'))] }), record('redirect.passed'));
    // The session already runs for every request below (app.use): no authenticate option at all.
    const globalSession = express.Router();
    globalSession.use(passport.session());
    globalSession.get('/whoever', t.sa.requireActor({ user: hirers.user }), record('global.passed'));
    t.app.use('/api/global', globalSession);
    t.app.get('/api/hirer/null-user', t.sa.requireActor({ user: () => null }), record('never'));
    t.app.get('/api/hirer/bad-hook', t.sa.requireActor({ user: () => ({ id: 42 }) as never }), record('never'));
    // A host with its own CSRF defence turns the cross-origin refusal off.
    t.app.post('/api/hirer/own-csrf', t.sa.requireActor({ ...hirers, crossOriginWrites: 'allow' }), record('own-csrf.passed'));
    t.app.use((err: Error, _req: Request, res: Response, _next: NextFunction) => {
      res.status(500).json({ hostError: err.message });
    });
    portal = await t.sa.admin.createAccount({ name: 'procurement-portal', clientAccountId: 'acme-corp' });
    reader = await t.sa.admin.createAccount({ name: 'reporting-job', scopes: ['jobs:read'] });
  });

  const signIn = async (id: string) => {
    const agent = request.agent(t.app);
    await agent.post('/login').send({ id }).expect(204);
    return agent;
  };

  it('admits a hirer signed in by session and a service account by token on one route, with one actor shape', async () => {
    const ada = await signIn('u_ada');
    const human = await ada.post('/api/hirer/jobs').expect(201);
    expect(human.body.actor).toEqual({ type: 'user', id: 'u_ada', name: 'Ada Lovelace', clientAccountId: 'acme-corp', roles: ['hirer'], scopes: null });

    const token = await issueToken(t.app, portal.clientId, portal.secret.value);
    const machine = await request(t.app).post('/api/hirer/jobs').set('Authorization', `Bearer ${token}`).expect(201);
    // An account provisioned without scopes: nothing narrows its roles (scopes null), which the host gave it.
    expect(machine.body.actor).toEqual({
      type: 'service_account',
      id: portal.clientId,
      name: 'procurement-portal',
      clientAccountId: 'acme-corp',
      roles: ['hirer'],
      scopes: null,
    });
  });

  it("puts the host's own user shape on req.user through the attach hook, so its permission middleware works unchanged", async () => {
    const token = await issueToken(t.app, portal.clientId, portal.secret.value);
    const machine = await request(t.app).post('/api/hirer/jobs').set('Authorization', `Bearer ${token}`).expect(201);
    expect(machine.body.user).toEqual({ id: portal.clientId, displayName: 'procurement-portal', companyId: 'acme-corp', roles: ['hirer'] });
    const ada = await signIn('u_ada');
    expect((await ada.post('/api/hirer/jobs').expect(201)).body.user).toEqual(HIRERS.u_ada);
    // The host's role check refuses a signed-in viewer: the library leaves permissions to the host.
    const guest = await signIn('u_guest');
    await guest.post('/api/hirer/jobs').expect(403);
  });

  it('names both in the activity history', async () => {
    const ada = await signIn('u_ada');
    await ada.post('/api/hirer/jobs').expect(201);
    const token = await issueToken(t.app, portal.clientId, portal.secret.value);
    await request(t.app).post('/api/hirer/jobs').set('Authorization', `Bearer ${token}`).expect(201);
    const history = await ada.get('/api/hirer/activity').expect(200);
    expect(history.body).toEqual([
      { action: 'job.created', actor: { type: 'user', id: 'u_ada', name: 'Ada Lovelace' } },
      { action: 'job.created', actor: { type: 'service_account', id: portal.clientId, name: 'procurement-portal' } },
    ]);
  });

  // RFC 6750 §3.1: "If the request lacks any authentication information ..., the resource server SHOULD
  // NOT include an error code": neither a session nor a token gets requireBearer's own bare challenge.
  it('answers a request with neither a session nor a token as requireBearer does (401, bare Bearer challenge)', async () => {
    const route = await request(t.app).get('/api/hirer/activity');
    const bearer = await request(t.app).get('/api/whoami');
    expectOAuthError(route, 401, 'invalid_request', { challenge: 'Bearer realm="service-accounts", DPoP realm="service-accounts", algs="ES256 PS256"' });
    expect([route.status, route.headers['www-authenticate'], route.body]).toEqual([bearer.status, bearer.headers['www-authenticate'], bearer.body]);
  });

  // RFC 6750 §3.1 errors of the bearer path: a request that presents a Bearer token is answered by the
  // bearer check, as on a requireBearer() route, even when it also carries a valid session.
  it.each([
    ['a forged token', 'Bearer abc.def.ghi', 401],
    ['Bearer with no token (malformed)', 'Bearer', 400],
    ['two tokens (malformed)', 'Bearer abc.def.ghi jkl.mno.pqr', 400],
    ['a lower-case scheme with a forged token', 'bearer abc.def.ghi', 401],
  ])('answers %s exactly as requireBearer does, even with a valid session', async (_name, header, status) => {
    const ada = await signIn('u_ada');
    const route = await ada.get('/api/hirer/activity').set('Authorization', header);
    const bearer = await request(t.app).get('/api/whoami').set('Authorization', header);
    expect(route.status).toBe(status);
    expect([route.status, route.headers['www-authenticate'], route.body]).toEqual([bearer.status, bearer.headers['www-authenticate'], bearer.body]);
    // The host's authentication never ran: the token alone decided.
    expect(hostAuthRuns).toBe(0);
  });

  // RFC 6750 §3.1: "insufficient_scope: The request requires higher privileges than provided by the
  // access token" (403). A route's scope applies to service accounts; people have roles instead.
  it("applies the route's scope to a restricted service account's token, not to a person", async () => {
    const token = await issueToken(t.app, reader.clientId, reader.secret.value);
    const refused = await request(t.app).post('/api/hirer/jobs').set('Authorization', `Bearer ${token}`);
    expectOAuthError(refused, 403, 'insufficient_scope', { challenge: /error="insufficient_scope",.* scope="jobs:write"$/ });
    const listed = await request(t.app).get('/api/hirer/jobs').set('Authorization', `Bearer ${token}`).expect(201);
    expect(listed.body.actor).toMatchObject({ type: 'service_account', name: 'reporting-job', scopes: ['jobs:read'] });
    const ada = await signIn('u_ada');
    await ada.post('/api/hirer/jobs').expect(201);
  });

  it('revoking the secret refuses its token at once, as requireBearer does', async () => {
    const token = await issueToken(t.app, portal.clientId, portal.secret.value);
    await t.sa.admin.revokeSecret(portal.clientId, portal.secret.id);
    const res = await request(t.app).get('/api/hirer/activity').set('Authorization', `Bearer ${token}`);
    expectOAuthError(res, 401, 'invalid_token', { challenge: /error="invalid_token", error_description="The access token was revoked"/ });
  });

  it("takes another scheme (Basic) down the host's path", async () => {
    const ada = await signIn('u_ada');
    const res = await ada.post('/api/hirer/jobs').set('Authorization', `Basic ${Buffer.from('x:y').toString('base64')}`).expect(201);
    expect(res.body.actor.type).toBe('user');
    expect(hostAuthRuns).toBe(1);
  });

  it('lets an authenticate middleware answer the request itself (a redirect to the login page)', async () => {
    const res = await request(t.app).get('/api/hirer/redirecting').expect(302);
    expect(res.headers.location).toBe('/login');
    const ada = await signIn('u_ada');
    await ada.get('/api/hirer/redirecting').expect(201);
    expect(activity.map((entry) => entry.action)).toEqual(['redirect.passed']);
  });

  it('reads the person from a session the app runs for every request, with no authenticate option', async () => {
    const ada = await signIn('u_ada');
    expect((await ada.get('/api/global/whoever').expect(201)).body.actor).toMatchObject({ type: 'user', id: 'u_ada', roles: ['hirer'] });
    expectOAuthError(await request(t.app).get('/api/global/whoever'), 401, 'invalid_request', { challenge: 'Bearer realm="service-accounts", DPoP realm="service-accounts", algs="ES256 PS256"' });
  });

  // Fetch Metadata (W3C, "Sec-Fetch-Site": cross-site / same-site / same-origin / none) and RFC 6454 §7
  // (Origin): a session cookie is sent whichever page asks, and SameSite does not stop a sibling
  // subdomain (same-site). docs/hirers-and-service-accounts.md: the session path refuses a change (any
  // method but GET, HEAD, OPTIONS) a browser marks as sent from another origin, 403 invalid_request,
  // before the host's authentication runs; reads, bearer tokens and unmarked requests are not affected.
  it('refuses a change by session that a browser marks as from another origin (403), before the session is read', async () => {
    const ada = await signIn('u_ada');
    const runsBefore = hostAuthRuns;
    const marks = [{ 'Sec-Fetch-Site': 'cross-site' }, { 'Sec-Fetch-Site': 'same-site' }, { Origin: 'https://evil.example' }, { Origin: 'null' }];
    for (const headers of marks) {
      // A form another site posts: text/plain needs no CORS preflight.
      const res = await ada.post('/api/hirer/jobs').set(headers).set('Content-Type', 'text/plain').send('{"title":"x"}');
      expectOAuthError(res, 403, 'invalid_request', { challenge: null });
    }
    expect(hostAuthRuns).toBe(runsBefore);
    expect(activity).toEqual([]);
    // The same person from this site, from a client that marks nothing, and reads from anywhere.
    await ada.post('/api/hirer/jobs').set('Sec-Fetch-Site', 'same-origin').expect(201);
    await ada.post('/api/hirer/jobs').expect(201);
    await ada.post('/api/hirer/jobs').set('Host', 'jobs.example').set('Origin', 'https://jobs.example').expect(201);
    await ada.get('/api/hirer/jobs').set('Sec-Fetch-Site', 'cross-site').expect(201);
    // A bearer token is not sent by the browser on its own: marked requests are admitted as before.
    const token = await issueToken(t.app, portal.clientId, portal.secret.value);
    await request(t.app).post('/api/hirer/jobs').set('Authorization', `Bearer ${token}`).set('Sec-Fetch-Site', 'cross-site').expect(201);
  });

  it("lets a host with its own CSRF defence allow cross-origin changes (crossOriginWrites: 'allow')", async () => {
    const ada = await signIn('u_ada');
    await ada.post('/api/hirer/own-csrf').set('Sec-Fetch-Site', 'cross-site').expect(201);
  });

  // Like the admin router's authorize(), a user() hook may say "nobody" with null (passport's
  // req.logout() leaves req.user null): that is a 401 like undefined, not the host's 500.
  it('treats null from user() as nobody signed in: 401 with the bare challenge', async () => {
    const res = await request(t.app).get('/api/hirer/null-user');
    expectOAuthError(res, 401, 'invalid_request', { challenge: 'Bearer realm="service-accounts", DPoP realm="service-accounts", algs="ES256 PS256"' });
    expect(activity).toEqual([]);
  });

  it("passes an error of the host's authentication, or of its user() hook, to the host's error handlers", async () => {
    expect((await request(t.app).get('/api/hirer/failing').expect(500)).body).toEqual({ hostError: 'session store down' });
    expect((await request(t.app).get('/api/hirer/bad-hook').expect(500)).body.hostError).toMatch(/user\(\) must return/);
  });
});

describe('requireActor() options', () => {
  const { sa } = createTestApp();
  const none = (): undefined => undefined;
  const cases: Array<[string, unknown, RegExp]> = [
    ['no options', undefined, /option "user" is required/],
    ['no user hook', {}, /option "user" must be a function/],
    ['an unknown option', { user: none, roles: ['hirer'] }, /option "roles" is not a known option/],
    ['a bad authenticate', { user: none, authenticate: 'session' }, /option "authenticate" must be a middleware/],
    ['a bad attach', { user: none, attach: true }, /option "attach" must be a function/],
    ['a bad scope', { user: none, scope: 'a"b' }, /option "scope" has an invalid scope/],
    ['a bad crossOriginWrites', { user: none, crossOriginWrites: false }, /option "crossOriginWrites" must be 'refuse' or 'allow'/],
  ];
  it.each(cases)('throws a TypeError naming the option for %s', (_name, options, message) => {
    expect(() => sa.requireActor(options as never)).toThrow(TypeError);
    expect(() => sa.requireActor(options as never)).toThrow(message);
  });
});

// RFC 9449 §7.1: "Authorization: DPoP <token>" with a proof whose htu is the request's URL. On a
// requireActor() route in a mounted router the token goes down the bearer path as on requireBearer();
// a DPoP-bound token presented as Bearer (§7.2) is refused whatever session cookie rides along.
describe('requireActor() with a DPoP-bound token', () => {
  it('admits it with its proof on a mounted router, and refuses it as a Bearer token beside a session cookie', async () => {
    const t = createTestApp({ dpop: { origins: [TEST_ISSUER] } });
    const account = await t.sa.admin.createAccount({ name: 'billing-sync', scopes: ['jobs:write'] });
    const key = await DpopKey.create();
    const iat = () => Math.floor(t.clock.now().getTime() / 1000);
    const jobs = express5.Router();
    jobs.post('/jobs', t.sa.requireActor({ user: () => ({ id: 'u_ada', name: 'Ada' }), scope: 'jobs:write' }), (req, res) => void res.status(201).json(req.actor));
    t.app.use('/hirer', jobs);
    const issued = await request(t.app)
      .post('/oauth/token')
      .type('form')
      .set('DPoP', await key.proof({ htu: `${TEST_ISSUER}/oauth/token`, iat: iat() }))
      .send({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value })
      .expect(200);
    const token = (issued.body as { access_token: string }).access_token;
    const proof = await key.proof({ htm: 'POST', htu: `${TEST_ISSUER}/hirer/jobs`, iat: iat(), accessToken: token });
    const admitted = await request(t.app).post('/hirer/jobs').set('Authorization', `DPoP ${token}`).set('DPoP', proof).expect(201);
    expect(admitted.body).toMatchObject({ type: 'service_account', id: account.clientId, scopes: ['jobs:write'] });
    const asBearer = await request(t.app).post('/hirer/jobs').set('Authorization', `Bearer ${token}`).set('Cookie', 'connect.sid=anything');
    expectOAuthError(asBearer, 401, 'invalid_token', { challenge: /error="invalid_token"/ });
  });
});
