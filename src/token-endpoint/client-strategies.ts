/**
 * @module client-strategies
 * passport as a thin adapter for client authentication: a private `Passport` instance (never the
 * host's) with passport-http's `BasicStrategy` for HTTP Basic and passport-oauth2-client-password's
 * strategy for credentials in the body. Each strategy runs its own control flow and calls our verify
 * function with the token request's context; the decision is {@link ClientCredentialsCheck}'s.
 *
 * The credentials themselves come from the context, decoded once by the validation step as RFC 6749
 * §2.3.1 and Appendix B require. passport-http splits Basic credentials at every `:` and decodes no
 * form-encoding, so its own reading could differ: it is shown a fixed stand-in header, and the values it
 * reads from it are never used. The host's request is never handed to passport either, so it never gains
 * passport's properties (a host running its own passport is not confused).
 */
import { Passport } from 'passport';
import { BasicStrategy } from 'passport-http';
import { Strategy as ClientPasswordStrategy } from 'passport-oauth2-client-password';
import { callbackFramework, type Attempt, type StrategyCallback } from './passport-framework.js';
import type { AuthenticatedClient } from './client-credentials-check.js';
import type { TokenRequestContext } from './token-request-context.js';

/** What a strategy sees of a token request: the headers and body it reads, and the context for verify. */
interface CredentialsView {
  readonly headers: { readonly authorization?: string };
  readonly body: unknown;
  readonly context: TokenRequestContext;
}

/** A well-formed Basic header for passport-http to parse; see the module description. */
const BASIC_STAND_IN: CredentialsView['headers'] = Object.freeze({ authorization: `Basic ${Buffer.from('client:secret').toString('base64')}` });
const NO_HEADERS: CredentialsView['headers'] = Object.freeze({});

/** Decides a request's client from its context: the client, `false` when authentication failed, or an error. */
export type VerifyClient = (context: TokenRequestContext, done: (err: unknown, client?: AuthenticatedClient | false) => void) => void;

/**
 * Runs the strategy of the request's credential method (Basic or body) once, reporting to `done`: an
 * error, or the client that {@link VerifyClient} gave (`false` when authentication failed).
 */
export type RunClientStrategy = (context: TokenRequestContext, done: StrategyCallback) => void;

/** Builds the two strategies around `verify`. */
export function createClientStrategies(verify: VerifyClient): RunClientStrategy {
  const passport = new Passport().framework(callbackFramework());
  const verifyView = (view: unknown, _clientId: string, _secret: string, done: (err: unknown, client?: AuthenticatedClient | false) => void): void =>
    verify((view as CredentialsView).context, done);
  passport.use('basic', new BasicStrategy({ passReqToCallback: true }, verifyView));
  passport.use('oauth2-client-password', new ClientPasswordStrategy({ passReqToCallback: true }, verifyView));
  const basic = passport.authenticate('basic', { session: false }) as unknown as Attempt;
  const body = passport.authenticate('oauth2-client-password', { session: false }) as unknown as Attempt;

  return (context, done) => {
    if (context.parameters.credentials.method === 'basic') basic({ headers: BASIC_STAND_IN, body: undefined, context } satisfies CredentialsView, done);
    else body({ headers: NO_HEADERS, body: context.body, context } satisfies CredentialsView, done);
  };
}
