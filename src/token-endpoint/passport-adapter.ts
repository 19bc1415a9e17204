/**
 * @module passport-adapter
 * passport as the thin adapter of client authentication at the edge of the token endpoint, in one
 * file: a private `Passport` instance (never the host's) with passport-http's `BasicStrategy` for HTTP
 * Basic, passport-oauth2-client-password's strategy for credentials in the body (and for none at
 * all), and a client-assertion strategy for a signed client assertion (RFC 7523 §2.2). Each strategy
 * runs its own control flow and calls our verify function, which hands the request's presented
 * credentials to the client authenticator (client-auth/client-authenticator.ts): the decision, the
 * limiter and the audit are all its.
 *
 * The credentials themselves come from the request's validation, decoded once as RFC 6749 §2.3.1 and
 * Appendix B require. passport-http splits Basic credentials at every `:` and decodes no form-encoding,
 * so its own reading could differ: each strategy is shown a fixed stand-in (a well-formed header, or a
 * body with both fields), and the values it reads from it are never used. The host's request is never
 * handed to passport either, so it never gains passport's properties (a host running its own passport
 * is not confused).
 *
 * The framework adapter of the token endpoint (`passport.framework()`, passport's documented
 * extension point for non-Connect callers): `passport.authenticate(name, options)`, called once, returns
 * a function of a request and a callback that runs the named strategy once and reports its outcome to
 * the callback, as passport's own Connect adapter does with a custom callback (no session, no
 * `req.login`, no response). It looks strategies up with passport's `_strategy()`, which is not public
 * API: package.json pins passport to the 0.7 minor versions for that reason.
 *
 * Why not passport's Connect adapter: it builds each attempt by creating an object from the strategy and
 * then assigning five new closures to it (`success`, `fail`, `error`, `pass`, `redirect`). Under load on
 * Node 20, that per-request pattern roughly doubles the young-generation garbage collection time of the
 * whole request (measured 28 → 15 µs of GC per token request); here each attempt is one object literal
 * with the strategy as its prototype and its actions as properties, which V8 handles without that cost.
 * See docs/performance.md, "The token endpoint, per request".
 */
import { Passport, type Framework, type Strategy, type StrategyCreated } from 'passport';
import { BasicStrategy } from 'passport-http';
import { Strategy as ClientPasswordStrategy } from 'passport-oauth2-client-password';
import type { AuthenticatedClient, AuthenticationDone, PresentedCredentials } from '../client-auth/presented-credentials.js';
import type { ClientAuthenticator } from '../client-auth/client-authenticator.js';
import type { Step } from './request-guards.js';

/** What a strategy reports: an error, or the user (`false` when authentication failed) plus details. */
export type StrategyCallback = (err: unknown, user?: unknown, challenge?: unknown, status?: number) => void;

/**
 * `passport.authenticate()` as this adapter returns it: run the strategy on this request, once, and
 * report to `callback`. (@types/passport types the return value of `authenticate()` as the framework's
 * `AuthenticateRet`, not as the function the framework returns, hence the cast at the call.)
 */
export type Attempt = (req: object, callback: StrategyCallback) => void;

/** A strategy run for one request: the strategy as prototype, its actions as own properties. */
interface StrategyAttempt {
  authenticate(req: object, options?: unknown): void;
}

/** The part of passport's `Authenticator` a framework adapter uses: the strategies registered by name. */
interface StrategyRegistry {
  _strategy(name: string): Strategy | undefined;
}

/**
 * Returns the adapter, to install with `passport.framework(callbackFramework())` on a private
 * `Passport` instance. Only single strategy names are supported (what the token endpoint uses); a
 * strategy that redirects or passes is reported as an error or a failure.
 *
 * @example
 * ```ts
 * import { Passport } from 'passport'
 * import { BasicStrategy } from 'passport-http'
 *
 * const passport = new Passport()
 * passport.framework(callbackFramework())
 * passport.use('basic', new BasicStrategy((id, secret, done) => done(null, false)))
 * const attempt = passport.authenticate('basic', { session: false }) as unknown as Attempt
 * attempt(req, (err, user) => console.log(err ?? user))
 * ```
 */
export function callbackFramework(): Framework<never, void> {
  return {
    initialize() {
      return () => {
        throw new Error('express-service-accounts: passport.initialize() is not used by the token endpoint');
      };
    },
    authenticate(passport: unknown, name: string, options?: unknown): Attempt {
      if (typeof name !== 'string') throw new TypeError('express-service-accounts: one strategy name is required');
      return (req, callback) => {
        const strategy = (passport as unknown as StrategyRegistry)._strategy(name);
        if (!strategy) {
          callback(new Error(`Unknown authentication strategy "${name}"`));
          return;
        }
        // The strategy's actions, as passport's Connect adapter defines them for a custom callback, given in
        // the literal that creates the attempt (not assigned afterwards: see the module comment).
        const attempt: StrategyAttempt = {
          __proto__: strategy,
          success: (user: unknown, info?: unknown) => callback(null, user, info),
          fail: (challenge?: unknown, status?: number) =>
            typeof challenge === 'number' ? callback(null, false, undefined, challenge) : callback(null, false, challenge, status),
          error: (err: unknown) => callback(err),
          pass: () => callback(null, false),
          redirect: () => callback(new Error('express-service-accounts: a client authentication strategy may not redirect')),
        } as unknown as StrategyAttempt;
        attempt.authenticate(req, options);
      };
    },
  };
}

/** passport's verify callback, as the strategies call it: `(err)` or `(null, client)`. */
type Verified = (err: unknown, client?: unknown) => void;

/** The verify function: the request (a view the token endpoint made), two unused fields, and the callback. */
type VerifyView = (req: unknown, clientId: string, secret: string, done: Verified) => void;

/**
 * A passport strategy for client authentication by signed assertion (`private_key_jwt`, RFC 7523
 * §2.2), the third thin adapter beside passport-http's Basic and passport-oauth2-client-password's
 * body strategies: it hands the request to the verify function. The assertion itself was read from the
 * body once, by the request's validation; the strategy reads nothing. A passport strategy is an object
 * with a `name` and an `authenticate` method that passport runs with its actions bound.
 *
 * @example
 * ```ts
 * import { Passport } from 'passport'
 *
 * const passport = new Passport()
 * passport.use('client-assertion', clientAssertionStrategy((view, _id, _secret, done) => done(null, false)))
 * ```
 */
export function clientAssertionStrategy(verify: VerifyView): Strategy {
  return {
    name: 'client-assertion',
    authenticate(this: StrategyCreated<Strategy>, req: unknown): void {
      verify(req, '', '', (err, client) => {
        if (err) return this.error(err);
        if (!client) return this.fail();
        this.success(client);
      });
    },
  } as Strategy;
}

/** What a strategy sees of a token request: the stand-in it parses, and what verify hands on. */
interface CredentialsView {
  readonly headers: { readonly authorization?: string };
  readonly body: unknown;
  readonly credentials: PresentedCredentials;
  readonly address: string | undefined;
  /** Where the token router is mounted (`req.baseUrl`), read for client assertions only: the token endpoint URL is derived from it. */
  readonly mountPath: string | undefined;
}

/** Well-formed stand-ins for the strategies to parse; see the module description. */
const BASIC_STAND_IN: CredentialsView['headers'] = Object.freeze({ authorization: `Basic ${Buffer.from('client:secret').toString('base64')}` });
const NO_HEADERS: CredentialsView['headers'] = Object.freeze({});
const BODY_STAND_IN = Object.freeze({ client_id: 'client', client_secret: 'secret' });

/**
 * Returns the client-authentication step: runs the strategy of the way the request's credentials
 * travelled once, whose verify function asks `authenticator`, and records the client on the request's
 * context (or stops with the authenticator's typed failure).
 *
 * @example
 * ```ts
 * import type { ClientAuthenticator } from '../client-auth/client-authenticator.js'
 *
 * declare const authenticator: ClientAuthenticator
 * const authenticate = createClientAuthentication(authenticator) // a step of every token router endpoint
 * ```
 */
export function createClientAuthentication(authenticator: ClientAuthenticator): Step {
  const passport = new Passport().framework(callbackFramework());
  // passport's verify callback has the authenticator's signature: (err) or (null, client).
  const verifyView = (view: unknown, _clientId: string, _secret: string, done: AuthenticationDone): void => {
    const { credentials, address, mountPath } = view as CredentialsView;
    authenticator.authenticate(credentials, address, done, mountPath);
  };
  passport.use('basic', new BasicStrategy({ passReqToCallback: true }, verifyView));
  passport.use('oauth2-client-password', new ClientPasswordStrategy({ passReqToCallback: true }, verifyView));
  passport.use('client-assertion', clientAssertionStrategy(verifyView));
  const basic = passport.authenticate('basic', { session: false }) as unknown as Attempt;
  const body = passport.authenticate('oauth2-client-password', { session: false }) as unknown as Attempt;
  const assertion = passport.authenticate('client-assertion', { session: false }) as unknown as Attempt;

  return (context, next) => {
    const { credentials } = context.parameters;
    const address = context.address;
    const done = (err: unknown, client?: unknown): void => {
      // The stand-ins make every strategy call verify, and the authenticator always decides: no client and no error is a wiring bug.
      if (err || !client) return next(err ?? new Error('client authentication ended without a decision'));
      context.client = client as AuthenticatedClient;
      next();
    };
    if (credentials.method === 'basic') basic({ headers: BASIC_STAND_IN, body: undefined, credentials, address, mountPath: undefined } satisfies CredentialsView, done);
    else if (credentials.method === 'assertion') {
      const mountPath = (context.req as { baseUrl?: string }).baseUrl;
      assertion({ headers: NO_HEADERS, body: undefined, credentials, address, mountPath } satisfies CredentialsView, done);
    } else body({ headers: NO_HEADERS, body: BODY_STAND_IN, credentials, address, mountPath: undefined } satisfies CredentialsView, done);
  };
}
