/**
 * People beside service accounts: a stand-in for your app's own sign-in (passport's session login,
 * which anyone may use with any name: replace it with your real login, SSO or identity provider), and
 * the one place where both kinds of caller become the app's user shape. Routes guarded by
 * `hirerOrServiceAccount()` accept a signed-in person (session cookie) and a service account (bearer
 * token) alike; see docs/hirers-and-service-accounts.md.
 */
import { createHash, randomBytes } from 'node:crypto';
import express, { type Express, type RequestHandler } from 'express';
import session from 'express-session';
import { Passport } from 'passport';
import { isCrossOriginRequest, type AdminPrincipal, type RequireActorOptions, type ServiceAccounts } from 'express-service-accounts';

/** The app's own user shape: what its permission checks read from `req.user`. */
export interface Hirer {
  readonly id: string;
  readonly name: string;
  readonly clientAccountId: string | null;
  readonly roles: readonly string[];
}

/** Told of each sign-in, for the activity history. */
export type OnSignIn = (hirer: Hirer) => Promise<void>;

/** The client account of a sign-in that names none: the one the sign-in form suggests. */
const DEFAULT_CLIENT_ACCOUNT = 'acme';

/**
 * A hirer for a name typed at the stand-in login: every name is a hirer with the `hirer` role, of the
 * client account typed beside it (`acme` when none is), whose service accounts they manage at
 * /console/.
 */
function standInHirer(name: string, clientAccountId: string): Hirer {
  // Letters and digits of any script: Дмитрий and 李雷 are two people, not one `user_hirer`. A name
  // with neither gets a digest of itself, so different names still get different IDs.
  const slug = name.toLowerCase().replace(/[^\p{L}\p{M}\p{N}]+/gu, '-').replace(/^-|-$/g, '') || `hirer-${createHash('sha256').update(name).digest('hex').slice(0, 12)}`;
  return { id: `user_${slug}`, name, clientAccountId, roles: ['hirer'] };
}

/** The sign-in form a browser gets at GET /login: plain HTML, no script, styled by the console's stylesheet. */
const SIGN_IN_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in (stand-in login)</title>
<link rel="stylesheet" href="/console/console.css">
</head>
<body class="esa-console">
<main class="esa-notice">
<h1>Sign in (stand-in login)</h1>
<p>This example lets anyone sign in with any name, for any client account, and manage its service accounts. Replace it with your own login.</p>
<form class="esa-form" method="post" action="/login">
<div class="esa-field"><label for="name">Your name</label><input id="name" name="name" required maxlength="100" autocomplete="name"></div>
<div class="esa-field"><label for="client-account">Client account</label><p id="client-account-hint" class="esa-hint">The company whose service accounts you manage, such as acme.</p><input id="client-account" name="clientAccount" required maxlength="100" pattern="[A-Za-z0-9._\\-]+" aria-describedby="client-account-hint" value="acme"></div>
<div class="esa-buttons"><button class="esa-button esa-primary" type="submit">Sign in</button></div>
</form>
</main>
</body>
</html>
`;

const CLIENT_ACCOUNT = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * What a name may not hold, as the library refuses it in account names (docs/security.md): C0 and C1
 * controls (U+009B starts a terminal escape sequence), bidirectional formatting characters (U+202E
 * shows the rest of a line reversed), U+2028 and U+2029, and unpaired surrogates. The name is the
 * `actor` of every audit line of the person's changes at /console/ and is shown in /api/activity.
 */
const UNSAFE_IN_NAME = /[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\u2028\u2029\p{Cs}]/u;

/**
 * Mounts the stand-in sign-in on `app`: `POST /login` with a `name` and optionally a `clientAccount`
 * (form or JSON; `acme` when none is given) starts a session (cookie `sid`), `POST /logout` ends it; `GET /login` is a form for
 * browsers, which then go on to /console/. Sessions live in this process's memory, under a key made at
 * start-up: a restart signs everyone out, and each instance has its own.
 */
export function mountHumanLogin(app: Express, onSignIn: OnSignIn): RequestHandler {
  const passport = new Passport();
  passport.serializeUser((user, done) => done(null, JSON.stringify(user)));
  passport.deserializeUser((text: string, done) => done(null, JSON.parse(text) as Hirer));
  const sessions = session({
    name: 'sid',
    secret: randomBytes(32).toString('base64url'),
    resave: false,
    saveUninitialized: false,
    // SameSite=Strict: another site's page cannot make the browser send the cookie to the routes that
    // act for the person. A sibling subdomain is the same site, though: /login, /logout and the
    // requireActor() routes also refuse changes a browser marks as from another origin.
    cookie: { httpOnly: true, sameSite: 'strict', maxAge: 8 * 3600_000 },
  });
  // Login CSRF: another site's form must not sign the visitor in under a name it chose, nor sign them
  // out. The routes behind requireActor() refuse such changes themselves (its crossOriginWrites option).
  const sameOriginOnly =
    (description: string): express.RequestHandler =>
    (req, res, next) => {
      if (!isCrossOriginRequest(req)) return next();
      res.status(403).json({ error: 'forbidden', error_description: description });
    };
  const form = [express.urlencoded({ extended: false, limit: '2kb' }), express.json({ limit: '2kb' })];
  app.get('/login', (_req, res) => {
    res.set({
      'Content-Security-Policy': "default-src 'self'; script-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      'X-Content-Type-Options': 'nosniff',
      // Not `no-referrer`: under it a browser sends the form's own POST with `Origin: null`, and over
      // plain HTTP to a host name that is not loopback it sends no Sec-Fetch-Site either, so the
      // sign-in would look like another site's. `same-origin` still gives other sites no referrer.
      'Referrer-Policy': 'same-origin',
      'Cache-Control': 'no-store',
    });
    res.type('html').send(SIGN_IN_PAGE);
  });
  app.post('/login', sameOriginOnly('Sign in from this site only'), sessions, passport.initialize(), ...form, (req, res, next) => {
    const name: unknown = (req.body as { name?: unknown } | undefined)?.name;
    if (typeof name !== 'string' || name.trim() === '' || name.length > 100 || UNSAFE_IN_NAME.test(name)) {
      res.status(400).json({
        error: 'invalid_request',
        error_description: 'name must be a string of 1 to 100 characters, without control or bidirectional formatting characters',
      });
      return;
    }
    const clientAccount: unknown = (req.body as { clientAccount?: unknown }).clientAccount;
    if (clientAccount !== undefined && clientAccount !== '' && (typeof clientAccount !== 'string' || !CLIENT_ACCOUNT.test(clientAccount))) {
      res.status(400).json({ error: 'invalid_request', error_description: 'clientAccount must be 1 to 100 letters, digits, dots, dashes or underscores' });
      return;
    }
    const hirer = standInHirer(name.trim(), typeof clientAccount === 'string' && clientAccount !== '' ? clientAccount : DEFAULT_CLIENT_ACCOUNT);
    req.login(hirer, (error) => {
      if (error) return next(error);
      // A browser's own form (a navigation) goes on to the console; scripts and curl get the hirer as JSON.
      // Without Fetch Metadata (plain HTTP to a host name that is not loopback), a navigation is the
      // request that prefers HTML to JSON: a browser's form does, curl's `*/*` and fetch()'s do not.
      const mode = req.headers['sec-fetch-mode'];
      const navigation = mode === undefined ? req.accepts(['json', 'html']) === 'html' : mode === 'navigate';
      onSignIn(hirer).then(() => (navigation ? res.redirect(303, '/console/') : res.json(hirer)), next);
    });
  });
  app.post('/logout', sameOriginOnly('Sign out from this site only'), sessions, passport.initialize(), passport.session(), (req, res, next) => {
    req.logout((error) => (error ? next(error) : res.status(204).end()));
  });
  // What requireActor() runs for a request without a bearer token: the session, then passport's user.
  return express.Router().use(sessions, passport.initialize(), passport.session());
}

/**
 * The actor mapping, in one place: a person's actor from the session's hirer, a service account's
 * roles, and `req.user` in the app's own shape for both, so `requireRole()` serves both unchanged.
 */
export function hirerOrServiceAccount(sa: ServiceAccounts, authenticate: RequestHandler) {
  const options: RequireActorOptions = {
    authenticate,
    user: (req) => {
      const hirer = req.user as Hirer | undefined;
      return hirer && { id: hirer.id, name: hirer.name, clientAccountId: hirer.clientAccountId, roles: hirer.roles };
    },
    // A service account acts like a hirer of its client account; its token's scopes may narrow that.
    serviceAccountRoles: () => ['hirer'],
    attach: (req, actor) => {
      req.user = { id: actor.id, name: actor.name, clientAccountId: actor.clientAccountId, roles: actor.roles } satisfies Hirer;
    },
  };
  return (scope?: string): RequestHandler => sa.requireActor(scope === undefined ? options : { ...options, scope });
}

/** The app's own permission check: it reads `req.user` and knows nothing of tokens or sessions. */
export function requireRole(role: string): RequestHandler {
  return (req, res, next) => {
    if ((req.user as Hirer | undefined)?.roles.includes(role)) return next();
    res.status(403).json({ error: 'forbidden', error_description: `This needs the role ${role}` });
  };
}

/**
 * Who manages service accounts at /console/: a signed-in hirer, as an administrator of their client
 * account. Nobody signed in: `undefined` (the page says to sign in); a hirer of no client account:
 * `false` (the page says they may not).
 */
export function consoleAdministrator(req: express.Request): AdminPrincipal | false | undefined {
  const hirer = req.user as Hirer | undefined;
  if (!hirer) return undefined;
  if (hirer.clientAccountId === null || !hirer.roles.includes('hirer')) return false;
  return { actor: { id: hirer.id, name: hirer.name }, clientAccountId: hirer.clientAccountId };
}
