/**
 * @module client-authentication
 * Authenticates the client of a token request with passport (an instance of our own, never the
 * host's global one): passport-http for HTTP Basic, passport-oauth2-client-password for the body.
 * Credentials come from the guards' {@link TokenRequest}, already decoded per RFC 6749 App. B.
 *
 * Unknown client, wrong secret, revoked secret and disabled account give one error, one message and
 * one timing path: exactly one bcrypt compare each (against a dummy hash when nothing matches).
 */
import { Passport } from 'passport';
import { BasicStrategy } from 'passport-http';
import { Strategy as ClientPasswordStrategy } from 'passport-oauth2-client-password';
import type { IncomingMessage } from 'node:http';
import { formatChallenge } from '../challenge.js';
import { InvalidClientError, TooManyRequestsError, type ClientAuthenticationFailure, type TemporarilyUnavailableError } from '../errors.js';
import type { AccountRecord, SecretRecord } from '../store/account-store.js';
import { parseSecret } from '../secrets/generate-credentials.js';
import { redactSecrets } from '../secrets/redact-secrets.js';
import type { Runtime } from '../runtime.js';
import { singleSpaceAfterScheme } from './basic-credentials.js';
import type { AttemptReservation } from './failure-limiter.js';
import { DEFAULT_IPV6_PREFIX, limiterAddress } from './limiter-address.js';
import { getTokenRequest, type Middleware, type TokenHttpRequest } from './token-request.js';
import { callbackFramework, type Attempt } from './passport-framework.js';

/** The authenticated client, handed to the exchange. */
export interface AuthenticatedClient {
  readonly account: AccountRecord;
  readonly secret: SecretRecord;
}

const authenticatedClients = new WeakMap<IncomingMessage, AuthenticatedClient>();

/** The client that authenticated this request; throws if client authentication did not run (a wiring bug). */
export function getAuthenticatedClient(req: IncomingMessage): AuthenticatedClient {
  const client = authenticatedClients.get(req);
  if (!client) throw new Error('client authentication did not run');
  return client;
}

const MAX_CLIENT_ID_LENGTH = 256;

type Outcome = { ok: true; client: AuthenticatedClient } | { ok: false; reason: ClientAuthenticationFailure; account?: AccountRecord };

const isLive = (account: AccountRecord | undefined, secret: SecretRecord | undefined): account is AccountRecord =>
  account !== undefined && account.enabled && secret !== undefined && secret.revokedAt === null;

/**
 * The fast path of a repeat client: the account is in the cache, the secret is live and this exact
 * value passed bcrypt here recently. Synchronous; `undefined` when it cannot decide, and then
 * {@link verifyClientCredentials} decides. It never answers a failure, so every failure keeps the
 * timing of one bcrypt compare.
 */
export function verifyRememberedClient(runtime: Runtime, clientId: string, secretValue: string): AuthenticatedClient | undefined {
  const parsed = parseSecret(secretValue);
  if (!parsed) return undefined;
  const account = runtime.accounts.peek(clientId)?.account;
  const secret = account?.secrets.find((s) => s.id === parsed.secretId);
  if (!isLive(account, secret) || !runtime.secrets.isRemembered(secretValue, secret!.hash)) return undefined;
  return { account, secret: secret! };
}

/** The parsed secret when the pair could be ours (so checking it costs a bcrypt compare), else undefined. */
function parseWellFormed(clientId: string, secretValue: string): ReturnType<typeof parseSecret> | undefined {
  return clientId.length > MAX_CLIENT_ID_LENGTH ? undefined : parseSecret(secretValue);
}

/**
 * The 503 that {@link verifyClientCredentials} would meet in the bcrypt gate now, or undefined. Asked
 * before passport and the store read, so a flooding address or client ID whose share of the queue is
 * full is refused with the least work: no store query, no account cache entry.
 */
function gateRefusal(runtime: Runtime, clientId: string, secretValue: string, address: string | undefined): TemporarilyUnavailableError | undefined {
  return parseWellFormed(clientId, secretValue) ? runtime.secrets.refusal({ address, clientId }) : undefined;
}

/**
 * Checks one client ID + secret pair against the store. `address` is the client's address, for the
 * bcrypt gate's fair share per address and per client ID. Throws on a store failure, or when the gate
 * is full for this address or client ID (→ 503).
 */
export async function verifyClientCredentials(runtime: Runtime, clientId: string, secretValue: string, address: string | undefined): Promise<Outcome> {
  // A value that fails its own format or checksum cannot be ours: refused before any store or bcrypt work.
  const parsed = parseWellFormed(clientId, secretValue);
  if (!parsed) return { ok: false, reason: 'malformed_credentials' };
  const account = await runtime.accounts.get(clientId);
  const secret = account?.secrets.find((s) => s.id === parsed.secretId);
  const live = isLive(account, secret);
  const matches = await runtime.secrets.verify(secretValue, secret?.hash, live, { address, clientId });
  if (!account) return { ok: false, reason: 'unknown_client' };
  if (!secret || !matches) return { ok: false, reason: 'wrong_secret', account };
  if (secret.revokedAt !== null) return { ok: false, reason: 'revoked_secret', account };
  if (!account.enabled) return { ok: false, reason: 'disabled_account', account };
  return { ok: true, client: { account, secret } };
}

/**
 * What passport's strategies see of a token request: the headers and parsed body they read, and the
 * request itself for our verify callback. The host's request is never handed to passport, so it never
 * gains passport's properties (a host running its own passport is not confused) and keeps its shape.
 */
interface CredentialsView {
  readonly headers: IncomingMessage['headers'];
  readonly body: unknown;
  readonly request: TokenHttpRequest;
  /** A repeat client recognised before passport ran (verified without bcrypt), handed to verify. */
  readonly remembered: AuthenticatedClient | undefined;
  /** The client's address as the bcrypt gate keys it (IPv4-mapped as IPv4, IPv6 by prefix). */
  readonly gateAddress: string | undefined;
  /** What verify decided, for the failure's audit reason. */
  outcome: Outcome | undefined;
}

function credentialsView(req: TokenHttpRequest, remembered: AuthenticatedClient | undefined, gateAddress: string | undefined): CredentialsView {
  const { authorization } = req.headers;
  // passport-http splits the header at each single space; RFC 7235 §2.1 allows several after the scheme.
  const spaced = authorization === undefined ? authorization : singleSpaceAfterScheme(authorization);
  const headers = spaced === authorization ? req.headers : { ...req.headers, authorization: spaced };
  return { headers, body: req.body, request: req, remembered, gateAddress, outcome: undefined };
}

function clientAddress(req: TokenHttpRequest): string | undefined {
  return typeof req.ip === 'string' ? req.ip : req.socket?.remoteAddress;
}

/**
 * Returns the client-authentication middleware: failure limiter (a repeat client is checked, any other
 * attempt counted in advance and given back on success), the bcrypt gate's refusal of a key whose share is
 * full (503 before any store read), passport, then
 * the client recorded for {@link getAuthenticatedClient} on success, or 401 `invalid_client` (with a Basic challenge when the request has an `Authorization` header).
 */
export function createClientAuthentication(runtime: Runtime): Middleware {
  const { config, limiter } = runtime;
  // With our adapter, passport.authenticate() returns a function of the request that runs the strategy once.
  const passport = new Passport().framework(callbackFramework());

  const verify = (view: CredentialsView, done: (err: unknown, user?: AuthenticatedClient | false) => void): void => {
    const req = view.request;
    const { credentials } = getTokenRequest(req);
    if (!('secret' in credentials)) {
      done(null, false);
      return;
    }
    if (view.remembered) {
      done(null, view.remembered);
      return;
    }
    verifyClientCredentials(runtime, credentials.clientId, credentials.secret, view.gateAddress).then((outcome) => {
      view.outcome = outcome;
      done(null, outcome.ok ? outcome.client : false);
    }, done);
  };
  // The strategies' own split of the credentials is ignored: passport-http splits Basic at every `:` and
  // does not URL-decode (RFC 6749 2.3.1); the guards already decoded them.
  passport.use('basic', new BasicStrategy({ passReqToCallback: true }, (view, _id, _secret, done) => verify(view as unknown as CredentialsView, done)));
  passport.use(
    'oauth2-client-password',
    new ClientPasswordStrategy({ passReqToCallback: true }, (view, _id, _secret, done) => verify(view as unknown as CredentialsView, done)),
  );

  const basicChallenge = formatChallenge('Basic', { realm: config.realm });
  // The bcrypt gate keys addresses as the limiter does, so one IPv6 prefix gets one turn and one share.
  const ipv6Prefix = config.failureLimit ? config.failureLimit.ipv6Prefix : DEFAULT_IPV6_PREFIX;

  return (req, res, next) => {
    const { credentials } = getTokenRequest(req);
    const keys = { clientId: 'clientId' in credentials ? credentials.clientId : undefined, address: clientAddress(req) };
    const gateAddress = keys.address === undefined ? undefined : limiterAddress(keys.address, ipv6Prefix);
    // The client ID for the audit log, computed on failure only; a client that put its secret in the
    // client ID field must not find it there.
    const clientIdField = (): { clientId?: string } => (keys.clientId === undefined ? {} : { clientId: redactSecrets(keys.clientId) });
    let reservation: AttemptReservation | undefined;

    const fail = (reason: ClientAuthenticationFailure, account?: AccountRecord): void => {
      runtime.audit({
        type: 'client.authentication_failed',
        reason,
        ...clientIdField(),
        ...(account ? { name: account.name } : {}),
        ...(keys.address !== undefined ? { address: keys.address } : {}),
      });
      const error = new InvalidClientError(reason);
      // RFC 6749 §5.2: a client that "attempted to authenticate via the Authorization request header field"
      // gets a challenge back, whatever that header held (malformed, empty or another scheme): Basic is ours.
      if (req.headers.authorization !== undefined) error.headers['WWW-Authenticate'] = basicChallenge;
      // A counted attempt that failed keeps its count; a failure that was not counted in advance is counted now.
      if (reservation || !limiter) return next(error);
      limiter.reserve(keys).then((counted) => next(counted.retryAfter > 0 ? new TooManyRequestsError(counted.retryAfter) : error), next);
    };

    const authenticate = (): void => {
      if (credentials.method === 'none') return fail('missing_credentials');
      if (!('secret' in credentials)) return fail('malformed_credentials');
      const busy = remembered ? undefined : gateRefusal(runtime, credentials.clientId, credentials.secret, gateAddress);
      if (busy) {
        reservation?.release(); // undecided (503): not a failure
        return next(busy);
      }
      const strategy = credentials.method === 'basic' ? 'basic' : 'oauth2-client-password';
      const view = credentialsView(req, remembered, gateAddress);
      const attempt = passport.authenticate(strategy, { session: false }, (err: unknown, client: AuthenticatedClient | false) => {
        if (err) {
          reservation?.release(); // undecided (503): not a failure
          return next(err);
        }
        if (!client) {
          const { outcome } = view;
          return fail(outcome && !outcome.ok ? outcome.reason : 'malformed_credentials', outcome && !outcome.ok ? outcome.account : undefined);
        }
        reservation?.release();
        runtime.secretUse.record(client.account.clientId, client.secret.id, config.now());
        authenticatedClients.set(req, client);
        next();
      }) as unknown as Attempt;
      attempt(view);
    };

    const refuse = (retryAfter: number): void => {
      runtime.audit({
        type: 'client.authentication_failed',
        reason: 'rate_limited',
        ...clientIdField(),
        ...(keys.address !== undefined ? { address: keys.address } : {}),
      });
      next(new TooManyRequestsError(retryAfter));
    };

    const remembered = 'secret' in credentials ? verifyRememberedClient(runtime, credentials.clientId, credentials.secret) : undefined;
    if (!limiter) return authenticate();
    if (remembered) {
      // A repeat client's exact secret, verified without bcrypt: not a guess, so only checked, not counted.
      const limited = limiter.check(keys);
      if (limited === 0) return authenticate(); // nothing on record for either key: no store call, no wait
      limited.then((retryAfter) => (retryAfter > 0 ? refuse(retryAfter) : authenticate()), next);
      return;
    }
    // Counted before any bcrypt work, so a burst cannot pass the limit all at once (docs/security.md).
    limiter.reserve(keys).then((counted) => {
      if (counted.retryAfter > 0) return refuse(counted.retryAfter);
      reservation = counted;
      authenticate();
    }, next);
  };
}
