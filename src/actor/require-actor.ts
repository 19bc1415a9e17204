/**
 * @module require-actor
 * `requireActor()`: one middleware for routes that people and service accounts both call. A request
 * that presents a bearer token goes through `requireBearer()` (and is refused exactly as it would
 * be); any other request goes through the host's own authentication. Either way `req.actor` holds
 * one {@link Actor}, and a hook can map it onto the host's own user shape. A change (an unsafe
 * method) on the host's path that a browser marks as sent from another origin is refused before the
 * host's authentication runs: a session cookie is sent by the browser whoever made the page.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { InvalidRequestError, MissingTokenError, sendOAuthError, type DpopChallenge } from '../errors.js';
import { checkKnownKeys, fail as failOption } from '../config-checks.js';
import { isCrossOriginRequest } from '../cross-origin-request.js';
import { presentsBearer } from '../bearer/extract-bearer-token.js';
import type { RequireBearerOptions } from '../bearer/require-bearer.js';
import type { ServiceAccountPrincipal } from '../bearer/require-bearer.js';
import type { Actor, UserIdentity } from './actor.js';

/**
 * Options of {@link ServiceAccounts.requireActor}. Only `user` is required.
 *
 * @example
 * ```ts
 * import passport from 'passport'
 * import type { RequireActorOptions } from 'express-service-accounts'
 *
 * interface Hirer { id: string; displayName: string; companyId: string; roles: string[] }
 *
 * const hirers: RequireActorOptions = {
 *   // Requests without a bearer token: the app's own session login.
 *   authenticate: passport.session(),
 *   user: (req) => {
 *     const hirer = req.user as Hirer | undefined
 *     return hirer && { id: hirer.id, name: hirer.displayName, clientAccountId: hirer.companyId, roles: hirer.roles }
 *   },
 *   // A service account acts like a hirer of its client account.
 *   serviceAccountRoles: () => ['hirer'],
 *   // The app's permission middleware reads req.user: give it the same shape for both.
 *   attach: (req, actor) => {
 *     req.user = { id: actor.id, displayName: actor.name, companyId: actor.clientAccountId, roles: actor.roles }
 *   },
 * }
 * app.post('/api/jobs', sa.requireActor({ ...hirers, scope: 'jobs:write' }), (req, res) => res.status(201).json({ by: req.actor?.name }))
 * ```
 */
export interface RequireActorOptions {
  /**
   * Your app's own authentication, run (in order) for a request that presents no bearer token: for
   * example `passport.session()`. Leave it out when it already runs for every request (`app.use`).
   * A middleware may answer the request itself (a redirect to your login page); one that calls
   * `next(err)` passes the error to your error handlers.
   */
  authenticate?: RequestHandler | readonly RequestHandler[];
  /**
   * Who your app's authentication says the person is, or `undefined` (or `null`) when nobody is signed
   * in: then the request is answered 401 with a `Bearer` challenge, as `requireBearer()` answers a
   * request without credentials.
   */
  user: (req: Request) => UserIdentity | null | undefined;
  /**
   * Scope(s) a service account's token needs, exactly as `requireBearer({ scope })`. A person has no
   * scopes: their roles are your app's to check.
   */
  scope?: RequireBearerOptions['scope'];
  /** Your app's roles for a service account (`actor.roles`). @default () => [] */
  serviceAccountRoles?: (principal: ServiceAccountPrincipal) => readonly string[];
  /**
   * Called with every admitted request's actor, before the route runs: put your app's own user shape
   * where your permission middleware looks for it (such as `req.user`). `req.actor` is set either way.
   */
  attach?: (req: Request, actor: Actor) => void;
  /**
   * What to do with a request that presents no bearer token, uses a method other than the safe
   * `GET`, `HEAD`, `OPTIONS` and `TRACE`, and that a browser marks as sent from another origin
   * (`Sec-Fetch-Site` other than `same-origin` or `none`, else an `Origin` that is not this host,
   * see {@link isCrossOriginRequest}): `'refuse'` answers 403 `invalid_request`
   * before your authentication runs, so another site's page (a sibling subdomain included) cannot
   * make a signed-in person's browser change something with their cookie. `'allow'` lets it through,
   * for an app whose own CSRF defence (tokens in forms) already guards these routes. Bearer-token
   * requests are never affected: a browser does not attach a bearer token on its own.
   * @default 'refuse'
   * @example
   * ```ts
   * import type { RequestHandler } from 'express'
   *
   * declare const csrfProtection: RequestHandler // your own CSRF token check on every form post
   * declare const hirers: RequireActorOptions // as in the example above
   * app.post('/jobs/new', csrfProtection, sa.requireActor({ ...hirers, crossOriginWrites: 'allow' }), (req, res) => res.status(201).end())
   * ```
   */
  crossOriginWrites?: 'refuse' | 'allow';
}

type BearerCheck = (options?: RequireBearerOptions) => RequestHandler;

/** RFC 9110 §9.2.1: the methods defined as safe (read-only); anything else may change something. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/** Calls `handlers` in turn as Express would, then `done`; an error (thrown, rejected or passed) goes to `next`. */
function runChain(handlers: readonly RequestHandler[], req: Request, res: Response, next: NextFunction, done: () => void): void {
  const step = (index: number) => (err?: unknown): void => {
    if (err !== undefined && err !== null) return next(err);
    if (index === handlers.length) return done();
    try {
      const result: unknown = handlers[index]!(req, res, step(index + 1));
      if (result instanceof Promise) result.catch(next);
    } catch (error) {
      next(error);
    }
  };
  step(0)();
}

const ACTOR_OPTIONS: ReadonlySet<string> = new Set<keyof RequireActorOptions>(['authenticate', 'user', 'scope', 'serviceAccountRoles', 'attach', 'crossOriginWrites']);

function checkOptions(options: RequireActorOptions): readonly RequestHandler[] {
  const fail = (name: string, problem: string): never => failOption(name, problem, 'requireActor');
  if (typeof options !== 'object' || options === null) fail('user', 'is required (a function reading the signed-in person)');
  checkKnownKeys(options, ACTOR_OPTIONS, 'requireActor');
  if (options.crossOriginWrites !== undefined && options.crossOriginWrites !== 'refuse' && options.crossOriginWrites !== 'allow') {
    fail('crossOriginWrites', "must be 'refuse' or 'allow'");
  }
  if (typeof options.user !== 'function') fail('user', 'must be a function');
  for (const name of ['serviceAccountRoles', 'attach'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') fail(name, 'must be a function');
  }
  const authenticate = options.authenticate === undefined ? [] : Array.isArray(options.authenticate) ? options.authenticate : [options.authenticate];
  if (!authenticate.every((handler) => typeof handler === 'function')) fail('authenticate', 'must be a middleware or a list of middlewares');
  return authenticate as readonly RequestHandler[];
}

/** The actor of a person, from the identity the host's `user()` hook returned. */
function userActor(identity: UserIdentity): Actor {
  if (typeof identity !== 'object' || identity === null || typeof identity.id !== 'string' || typeof identity.name !== 'string') {
    throw new TypeError('requireActor: user() must return { id: string, name: string, ... }, or undefined or null');
  }
  return Object.freeze({
    type: 'user',
    id: identity.id,
    name: identity.name,
    clientAccountId: identity.clientAccountId ?? null,
    roles: Object.freeze([...(identity.roles ?? [])]),
    scopes: null,
  });
}

/** The actor of a service account, from the principal `requireBearer()` admitted. */
function serviceAccountActor(principal: ServiceAccountPrincipal, roles: readonly string[]): Actor {
  return Object.freeze({
    type: 'service_account',
    id: principal.clientId,
    name: principal.name,
    clientAccountId: principal.clientAccountId,
    roles: Object.freeze([...roles]),
    // An unrestricted account's token carries no scope: nothing narrows its roles.
    scopes: principal.scopes.length === 0 ? null : principal.scopes,
  });
}

/**
 * Builds `requireActor` over an instance's `requireBearer`.
 *
 * @example
 * ```ts
 * const requireActor = createRequireActor((options) => sa.requireBearer(options), 'service-accounts') // `dpop`: the challenge that offers DPoP beside Bearer
 * app.get('/api/activity', requireActor({ user: (req) => undefined }), (req, res) => res.json([]))
 * ```
 */
export function createRequireActor(requireBearer: BearerCheck, realm: string, dpop?: DpopChallenge): (options: RequireActorOptions) => RequestHandler {
  return function requireActor(options) {
    const authenticate = checkOptions(options);
    const { user, serviceAccountRoles, attach } = options;
    const refuseCrossOrigin = options.crossOriginWrites !== 'allow';
    const bearer = requireBearer(options.scope === undefined ? {} : { scope: options.scope });

    /** Sets `req.actor` (and the host's shape through `attach`), then passes the request on; a hook's error goes to `next`. */
    const admit = (req: Request, next: NextFunction, actorOf: () => Actor | undefined, refuse: () => void): void => {
      let actor: Actor | undefined;
      try {
        actor = actorOf();
        if (actor !== undefined) {
          req.actor = actor;
          attach?.(req, actor);
        }
      } catch (error) {
        return next(error);
      }
      if (actor === undefined) refuse();
      else next();
    };

    return (req, res, next) => {
      if (presentsBearer(req.rawHeaders)) {
        // The service account path: requireBearer answers every failure itself, as on its own routes.
        bearer(req, res, (err?: unknown) => {
          if (err !== undefined && err !== null) return next(err);
          const principal = req.serviceAccount!;
          admit(req, next, () => serviceAccountActor(principal, serviceAccountRoles?.(principal) ?? []), () => undefined);
        });
        return;
      }
      // The app's own path. A change another origin's page asked for is refused before the session is read.
      if (refuseCrossOrigin && !SAFE_METHODS.has(req.method) && isCrossOriginRequest(req)) {
        return sendOAuthError(res, new InvalidRequestError('This request came from another site; changes are accepted from this site only', { status: 403 }), realm);
      }
      // Nobody signed in gets requireBearer's answer to a request without credentials.
      runChain(authenticate, req, res, next, () => {
        admit(
          req,
          next,
          () => {
            const identity = user(req);
            // Nobody signed in: undefined, or null as passport's req.logout() leaves req.user.
            return identity === undefined || identity === null ? undefined : userActor(identity);
          },
          () => sendOAuthError(res, new MissingTokenError(), realm, dpop),
        );
      });
    };
  };
}
