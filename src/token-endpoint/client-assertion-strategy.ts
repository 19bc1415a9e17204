/**
 * @module client-assertion-strategy
 * A passport strategy for client authentication by signed assertion (`private_key_jwt`, RFC 7523
 * §2.2), the third thin adapter beside passport-http's Basic and passport-oauth2-client-password's body
 * strategies: it hands the request to the verify function, which asks the client authenticator. The
 * assertion itself was read from the body once, by the request's validation; the strategy reads nothing.
 */
import type { Strategy, StrategyCreated } from 'passport';

/** passport's verify callback, as the other two strategies call it: `(err)` or `(null, client)`. */
type Verified = (err: unknown, client?: unknown) => void;

/** The verify function: the request (a view the token endpoint made), two unused fields, and the callback. */
type VerifyAssertion = (req: unknown, clientId: string, secret: string, done: Verified) => void;

/**
 * See the module description. A passport strategy is an object with a `name` and an `authenticate`
 * method that passport runs with its actions (`success`, `fail`, `error`) bound.
 *
 * @example
 * ```ts
 * import { Passport } from 'passport'
 * import type { ClientAuthenticator, PresentedCredentials } from './client-authenticator.js'
 *
 * declare const authenticator: ClientAuthenticator
 * const passport = new Passport()
 * passport.use('client-assertion', clientAssertionStrategy((view, _id, _secret, done) => {
 *   const { credentials, address } = view as { credentials: PresentedCredentials; address: string | undefined }
 *   authenticator.authenticate(credentials, address, done)
 * }))
 * ```
 */
export function clientAssertionStrategy(verify: VerifyAssertion): Strategy {
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
