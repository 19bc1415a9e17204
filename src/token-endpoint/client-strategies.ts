/**
 * @module client-strategies
 * passport as a thin adapter for client authentication: a private `Passport` instance (never the
 * host's) with passport-http's `BasicStrategy` for HTTP Basic and passport-oauth2-client-password's
 * strategy for credentials in the body (and for none at all), and our own client-assertion strategy
 * for a signed client assertion (RFC 7523 §2.2). Each strategy runs its own control flow
 * and calls our verify function, which hands the request's presented credentials to the
 * {@link ClientAuthenticator}: the decision, the limiter and the audit are all its.
 *
 * The credentials themselves come from the request's validation, decoded once as RFC 6749 §2.3.1 and
 * Appendix B require. passport-http splits Basic credentials at every `:` and decodes no form-encoding,
 * so its own reading could differ: each strategy is shown a fixed stand-in (a well-formed header, or a
 * body with both fields), and the values it reads from it are never used. The host's request is never
 * handed to passport either, so it never gains passport's properties (a host running its own passport
 * is not confused).
 */
import { Passport } from 'passport';
import { BasicStrategy } from 'passport-http';
import { Strategy as ClientPasswordStrategy } from 'passport-oauth2-client-password';
import { callbackFramework, type Attempt } from './passport-framework.js';
import { clientAssertionStrategy } from './client-assertion-strategy.js';
import type { AuthenticatedClient, AuthenticationDone, ClientAuthenticator, PresentedCredentials } from './client-authenticator.js';
import type { Step } from './token-request-context.js';

/** What a strategy sees of a token request: the stand-in it parses, and what verify hands on. */
interface CredentialsView {
  readonly headers: { readonly authorization?: string };
  readonly body: unknown;
  readonly credentials: PresentedCredentials;
  readonly address: string | undefined;
  /** Where the token router is mounted (`req.baseUrl`): the token endpoint URL is derived from it. */
  readonly mountPath: string | undefined;
}

/** Well-formed stand-ins for the strategies to parse; see the module description. */
const BASIC_STAND_IN: CredentialsView['headers'] = Object.freeze({ authorization: `Basic ${Buffer.from('client:secret').toString('base64')}` });
const NO_HEADERS: CredentialsView['headers'] = Object.freeze({});
const BODY_STAND_IN = Object.freeze({ client_id: 'client', client_secret: 'secret' });

/**
 * Returns the client-authentication step: runs the strategy of the request's credential method once,
 * whose verify function asks `authenticator`, and records the client on the request's context (or
 * stops with the authenticator's typed failure).
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
  const basic = passport.authenticate('basic', { session: false }) as unknown as Attempt;
  passport.use('client-assertion', clientAssertionStrategy(verifyView));
  const body = passport.authenticate('oauth2-client-password', { session: false }) as unknown as Attempt;
  const assertion = passport.authenticate('client-assertion', { session: false }) as unknown as Attempt;

  return (context, next) => {
    const { credentials } = context.parameters;
    const address = context.address;
    const mountPath = (context.req as { baseUrl?: string }).baseUrl;
    const done = (err: unknown, client?: unknown): void => {
      // The stand-ins make every strategy call verify, and the authenticator always decides: no client and no error is a wiring bug.
      if (err || !client) return next(err ?? new Error('client authentication ended without a decision'));
      context.client = client as AuthenticatedClient;
      next();
    };
    if (credentials.method === 'basic') basic({ headers: BASIC_STAND_IN, body: undefined, credentials, address, mountPath } satisfies CredentialsView, done);
    else if (credentials.method === 'assertion') assertion({ headers: NO_HEADERS, body: undefined, credentials, address, mountPath } satisfies CredentialsView, done);
    else body({ headers: NO_HEADERS, body: BODY_STAND_IN, credentials, address, mountPath } satisfies CredentialsView, done);
  };
}
