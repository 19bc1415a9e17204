/**
 * @module passport-framework
 * The passport framework adapter of the token endpoint (`passport.framework()`, passport's documented
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
import type { Framework, Strategy } from 'passport';

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
