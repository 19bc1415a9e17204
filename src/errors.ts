/**
 * @module errors
 * One error hierarchy for everything the token endpoint and `requireBearer()` can answer.
 * Each class is one answer of the token endpoint or `requireBearer()` (docs/errors.md); {@link sendOAuthError} renders them all.
 */
import type { ServerResponse } from 'node:http';
import { formatChallenge } from './challenge.js';

/**
 * The OAuth `error` values this library answers with (RFC 6749 §5.2, RFC 6750 §3.1, RFC 6585).
 *
 * @example
 * ```ts
 * import type { OAuthErrorCode } from 'express-service-accounts'
 *
 * // A client of your API deciding whether a refused token request is worth retrying.
 * const response = await fetch('https://api.example.com/oauth/token', {
 *   method: 'POST',
 *   body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
 * })
 * if (!response.ok) {
 *   const { error } = (await response.json()) as { error: OAuthErrorCode; error_description: string }
 *   if (error === 'too_many_requests' || error === 'temporarily_unavailable') {
 *     console.log(`retry in ${response.headers.get('retry-after') ?? 1} s`)
 *   }
 * }
 * ```
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'invalid_scope'
  | 'invalid_target'
  | 'unauthorized_client'
  | 'unsupported_token_type'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'too_many_requests'
  | 'temporarily_unavailable'
  | 'server_error';

/**
 * Base class of every error the HTTP layer renders. `code` is the OAuth `error` value, `status` the
 * HTTP status. The message is the public `error_description`; never put a secret or internal detail
 * in it (use `cause`, which only the audit hook sees).
 *
 * @example
 * ```ts
 * import { OAuthError } from 'express-service-accounts'
 *
 * if (err instanceof OAuthError) console.log(err.status, err.code, err.toJSON())
 * ```
 */
export abstract class OAuthError extends Error {
  abstract readonly code: OAuthErrorCode;
  abstract readonly status: number;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }

  /** Response headers other than the challenge: `Allow` (405), `Retry-After` (429, 503), `Connection: close` (503 of a full bcrypt queue). */
  get headers(): Readonly<Record<string, string>> {
    return {};
  }

  /**
   * The `WWW-Authenticate` value this answer carries for a protection space (`realm`), or `undefined`
   * for none: a Bearer challenge from `requireBearer()` (RFC 6750 §3), a Basic challenge for a client
   * that authenticated with the `Authorization` header (RFC 6749 §5.2). `dpop` says how the route
   * offers DPoP (RFC 9449 §7.1), when it does.
   */
  challenge(_realm: string, _dpop?: DpopChallenge): string | undefined {
    return undefined;
  }

  /** Mirrors `status` for Express-style error handlers. */
  get statusCode(): number {
    return this.status;
  }

  /** Whether the message may be shown to the client (always true below 500). */
  get expose(): boolean {
    return this.status < 500;
  }

  /** The RFC 6749 §5.2 body. */
  toJSON(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.message };
  }
}

/**
 * 400 `invalid_request`: a malformed request (RFC 6749 §5.2, RFC 6750 §3.1).
 *
 * @example
 * ```ts
 * import { InvalidRequestError } from 'express-service-accounts'
 *
 * // Refuse your own malformed requests with the body the token endpoint and requireBearer() send.
 * app.post('/api/jobs', sa.requireBearer({ scope: 'jobs:write' }), (req, res) => {
 *   if (typeof req.body?.title !== 'string') {
 *     const err = new InvalidRequestError('The parameter title is required')
 *     res.status(err.status).json(err) // {"error":"invalid_request","error_description":"The parameter title is required"}
 *     return
 *   }
 *   res.status(201).json({ title: req.body.title })
 * })
 * ```
 */
export class InvalidRequestError extends OAuthError {
  readonly code = 'invalid_request';
  readonly status: number;
  readonly #bearer: boolean;
  /**
   * @param options - `status` is 400 by default, 413 for a body over the limit, 403 for a change
   * `requireActor()` refuses because another site sent it; `challenge: 'Bearer'` for
   * a malformed request to a protected route (RFC 6750 §3.1); `cause` is for the server only.
   */
  constructor(message: string, options?: { status?: number; challenge?: 'Bearer'; cause?: unknown }) {
    super(message, options);
    this.status = options?.status ?? 400;
    this.#bearer = options?.challenge === 'Bearer';
  }

  override challenge(realm: string, dpop?: DpopChallenge): string | undefined {
    return this.#bearer ? bearerChallenge(realm, this, undefined, dpop) : undefined;
  }
}

/** The one public description shared by every client-authentication failure, so none can be told apart. */
export const INVALID_CLIENT_DESCRIPTION = 'Client authentication failed';

/** The description of a JSON request body that holds no parameters (an array, a number, a string, true, false or null). */
export const NOT_A_JSON_OBJECT_DESCRIPTION = 'The request body must be a JSON object';

/**
 * Why a client assertion was refused: the rule it broke, for a key pair's (`private_key_jwt`) and, for
 * the claim rules, an outside issuer's token. For the audit event and the `debug` line only: the client
 * is answered one `invalid_client` whatever the rule (RFC 7523 §3.2).
 *
 * @example
 * ```ts
 * import { createServiceAccounts, MemoryAccountStore, type AssertionRefusal } from 'express-service-accounts'
 *
 * const clockReasons: readonly AssertionRefusal[] = ['expired_assertion', 'assertion_not_yet_valid']
 * const sa = createServiceAccounts({
 *   store: new MemoryAccountStore(),
 *   issuer: 'https://api.example.com',
 *   signingKeys: [{ alg: 'ES256', key: process.env.TOKEN_SIGNING_KEY! }],
 *   onAudit: (event) => {
 *     if (event.type === 'client.authentication_failed' && (clockReasons as readonly string[]).includes(event.reason)) {
 *       console.warn(`client ${event.clientId}: check the client machine's clock`)
 *     }
 *   },
 * })
 * ```
 */
export type AssertionRefusal =
  /**
   * A client assertion that is malformed or breaks a rule without a reason of its own below: not a JWT,
   * an algorithm refused (`none`, HMAC) or a `crit` header, an `ES256` signature in ASN.1 DER form rather than
   * the JWS form (RFC 7518 §3.4), a `client_id` naming another client, no `jti`,
   * no `exp`, more than 3 live keys of its type and no `kid` naming one; and an outside issuer's token
   * that does not verify (docs/federated-credentials.md).
   */
  | 'invalid_assertion'
  /**
   * A client assertion whose `aud` is not the one required alone: for a key pair, the issuer identifier
   * (or, when allowed, the token endpoint URL); for an outside issuer's token, its credential's audience.
   */
  | 'wrong_audience'
  /** A client assertion whose `exp` lies further ahead than allowed (`maxAssertionLifetime`; `federation.maxTokenLifetime` for an outside token), plus the clock tolerance. */
  | 'assertion_lifetime_too_long'
  /** A client assertion (a key pair's, or an outside issuer's token) whose `exp` has passed, beyond the clock tolerance. */
  | 'expired_assertion'
  /** A client assertion (a key pair's, or an outside issuer's token) whose `nbf` or `iat` lies in the future, beyond the clock tolerance. */
  | 'assertion_not_yet_valid'
  /** A key-pair client assertion that no registered key of its algorithm's type verified, and whose `kid` names none of them. */
  | 'unknown_key'
  /** A key-pair client assertion whose `kid` names a registered key that does not verify its signature. */
  | 'bad_signature'
  /** A client assertion signed by a key that has been revoked. */
  | 'revoked_key';

/**
 * Why client authentication failed. Never sent to the client; only the audit hook sees it.
 *
 * @example
 * ```ts
 * import { createServiceAccounts, type ClientAuthenticationFailure } from 'express-service-accounts'
 *
 * // Warn when a known client keeps using an old secret: the client only ever sees `invalid_client`.
 * const worthAWarning = new Set<ClientAuthenticationFailure>(['revoked_secret', 'disabled_account'])
 * const sa = createServiceAccounts({
 *   store, issuer, signingKeys,
 *   onAudit(event) {
 *     if (event.type === 'client.authentication_failed' && event.reason !== 'rate_limited' && worthAWarning.has(event.reason)) {
 *       console.warn(`${event.name ?? event.clientId} failed to authenticate: ${event.reason}`)
 *     }
 *   },
 * })
 * ```
 */
export type ClientAuthenticationFailure =
  | 'missing_credentials'
  | 'malformed_credentials'
  | 'unknown_client'
  | 'wrong_secret'
  | 'revoked_secret'
  | 'disabled_account'
  /** A client assertion that broke one of its rules: see {@link AssertionRefusal}. */
  | AssertionRefusal
  /** A client assertion whose `jti` was already used (a replay). */
  | 'replayed_assertion'
  /** An outside issuer's token for an issuer and subject that no live federated credential trusts (no key was fetched for it). */
  | 'untrusted_token'
  /** An outside issuer's token whose issuer and subject several accounts trust, sent without a `client_id` to choose one. */
  | 'ambiguous_token'
  /** An outside issuer's token that only a revoked federated credential trusts. */
  | 'revoked_federated_credential'
  /**
   * An outside issuer's token, signed for a federated credential and within its rules, that does not
   * meet one of the credential's claim conditions (a claim missing, or with another value); the audit
   * event's `claim` names the condition.
   */
  | 'claim_condition_failed'
  /**
   * A credential of any kind (a secret, a key that verified the assertion, or every live federated
   * credential trusting the token) past its `expiresAt`: refused like a revoked one (docs/rotation.md).
   */
  | 'expired_credential';

/**
 * 401 `invalid_client`: the four causes (unknown client, wrong secret, revoked secret, disabled account) share one message.
 *
 * @example
 * ```ts
 * import { InvalidClientError } from 'express-service-accounts'
 *
 * // Every cause gets the same status and body, so a caller cannot tell which client IDs exist.
 * const err = new InvalidClientError('unknown_client')
 * err.status   // 401
 * err.toJSON() // { error: 'invalid_client', error_description: 'Client authentication failed' }
 * err.reason   // 'unknown_client': for your audit log only
 * ```
 */
export class InvalidClientError extends OAuthError {
  readonly code = 'invalid_client';
  readonly status = 401;
  readonly #basic: boolean;
  /**
   * @param options - `authorizationHeader`: the request carried an `Authorization` header, whatever it
   * held (malformed, empty or another scheme), so the answer challenges with Basic (RFC 6749 §5.2).
   */
  constructor(
    /** Internal reason, for the audit hook only. */
    readonly reason: ClientAuthenticationFailure,
    options?: { authorizationHeader?: boolean; cause?: unknown },
  ) {
    super(INVALID_CLIENT_DESCRIPTION, options);
    this.#basic = options?.authorizationHeader === true;
  }

  override challenge(realm: string): string | undefined {
    return this.#basic ? formatChallenge('Basic', { realm }) : undefined;
  }
}

/**
 * 400 `invalid_grant`: `grant_type` missing or not `client_credentials` (see docs/errors.md).
 *
 * @example
 * ```ts
 * import { InvalidGrantError } from 'express-service-accounts'
 *
 * // What a client that asks for another grant type gets back.
 * new InvalidGrantError('Only the client_credentials grant type is supported').toJSON()
 * // { error: 'invalid_grant', error_description: 'Only the client_credentials grant type is supported' }
 * ```
 */
export class InvalidGrantError extends OAuthError {
  readonly code = 'invalid_grant';
  readonly status = 400;
}

/**
 * 400 `invalid_scope`: a requested scope is malformed or not allowed for the account.
 *
 * @example
 * ```ts
 * import { InvalidScopeError } from 'express-service-accounts'
 *
 * // What a client gets when it asks for a scope its account was not provisioned with.
 * new InvalidScopeError('A requested scope is not allowed for this client').toJSON()
 * // { error: 'invalid_scope', error_description: 'A requested scope is not allowed for this client' }
 * ```
 */
export class InvalidScopeError extends OAuthError {
  readonly code = 'invalid_scope';
  readonly status = 400;
}

/**
 * 400 `invalid_target` (RFC 8707 §2): the requested resource (`resource`, or `audience`) is not one the
 * account's tokens may be for, or the account has several and the request named none
 * (docs/resources.md).
 *
 * @example
 * ```ts
 * import { InvalidTargetError } from 'express-service-accounts'
 *
 * new InvalidTargetError('This client may not get tokens for the requested resource').toJSON()
 * // { error: 'invalid_target', error_description: 'This client may not get tokens for the requested resource' }
 * ```
 */
export class InvalidTargetError extends OAuthError {
  readonly code = 'invalid_target';
  readonly status = 400;
}

/**
 * 403 `unauthorized_client`: the client authenticated but may not use this endpoint, e.g. token
 * introspection by an account without the scope `token:introspect` (RFC 7662 §2.3; docs/errors.md).
 *
 * @example
 * ```ts
 * import { UnauthorizedClientError } from 'express-service-accounts'
 *
 * new UnauthorizedClientError('This client may not introspect tokens').toJSON()
 * // { error: 'unauthorized_client', error_description: 'This client may not introspect tokens' }
 * ```
 */
export class UnauthorizedClientError extends OAuthError {
  readonly code = 'unauthorized_client';
  readonly status = 403;
}

/**
 * 400 `unsupported_token_type` (RFC 7009 §2.2.1): the server cannot revoke tokens of this kind, which
 * is the case when its account store keeps no token deny-list (docs/errors.md).
 *
 * @example
 * ```ts
 * import { UnsupportedTokenTypeError } from 'express-service-accounts'
 *
 * new UnsupportedTokenTypeError('This server cannot revoke single access tokens').toJSON()
 * // { error: 'unsupported_token_type', error_description: 'This server cannot revoke single access tokens' }
 * ```
 */
export class UnsupportedTokenTypeError extends OAuthError {
  readonly code = 'unsupported_token_type';
  readonly status = 400;
}

/**
 * Why a bearer token was refused. Each maps to one fixed public description.
 *
 * @example
 * ```ts
 * import type { InvalidTokenReason } from 'express-service-accounts'
 *
 * // What the client should do next (docs/errors.md#invalid_token).
 * const nextStep: Record<InvalidTokenReason, string> = {
 *   expired: 'get a new token',
 *   invalid: 'get a new token',
 *   revoked: 'get new credentials',
 *   disabled: 'contact the API owner',
 *   wrong_audience: 'get a token for this API (resource=...)',
 *   dpop_bound: 'send the token with its DPoP proof',
 *   not_dpop_bound: 'send the token as a Bearer token',
 *   dpop_required: 'get a DPoP-bound token',
 * }
 * ```
 */
export type InvalidTokenReason =
  | 'expired'
  | 'revoked'
  | 'disabled'
  | 'invalid'
  | 'wrong_audience'
  /** A DPoP-bound token sent as a Bearer token, or with a proof signed by another key than the one it is bound to (RFC 9449 §7.2). */
  | 'dpop_bound'
  /** A token that is not DPoP-bound sent with the `DPoP` scheme (RFC 9449 §7.2). */
  | 'not_dpop_bound'
  /** A Bearer token sent to a route that requires DPoP (`requireBearer({ dpop: 'required' })`). */
  | 'dpop_required';

const INVALID_TOKEN_DESCRIPTIONS: Record<InvalidTokenReason, string> = {
  expired: 'The access token expired',
  revoked: 'The access token was revoked',
  disabled: 'The service account is disabled',
  invalid: 'The access token is invalid',
  // RFC 8707 §2 / RFC 9068 §4: the token's `aud` names another resource server.
  wrong_audience: 'The access token was issued for another API: request a token for this one',
  dpop_bound: 'The access token is bound to a DPoP key: send it with Authorization: DPoP and a proof signed by that key',
  not_dpop_bound: 'The access token is not DPoP-bound: send it with Authorization: Bearer',
  dpop_required: 'This route requires a DPoP-bound access token, sent with Authorization: DPoP and a proof',
};

/**
 * 401 `invalid_token` (RFC 6750 §3.1).
 *
 * @example
 * ```ts
 * import request from 'supertest'
 * import { expect } from 'vitest'
 * import { InvalidTokenError } from 'express-service-accounts'
 *
 * // In your API's tests: after `sa.admin.revokeSecret(...)`, the tokens issued against it are refused.
 * const res = await request(app).get('/api/whoami').auth(token, { type: 'bearer' })
 * expect(res.status).toBe(401)
 * expect(res.body).toEqual(new InvalidTokenError('revoked').toJSON())
 * // { error: 'invalid_token', error_description: 'The access token was revoked' }
 * ```
 */
export class InvalidTokenError extends OAuthError {
  readonly code = 'invalid_token';
  readonly status = 401;
  constructor(
    readonly reason: InvalidTokenReason,
    options?: { cause?: unknown },
  ) {
    super(INVALID_TOKEN_DESCRIPTIONS[reason], options);
  }

  override challenge(realm: string, dpop?: DpopChallenge): string {
    return bearerChallenge(realm, this, undefined, dpop);
  }
}

/**
 * 401 without an `error` attribute: the request carried no bearer token at all (RFC 6750 §3.1:
 * "the resource server SHOULD NOT include an error code").
 *
 * @example
 * ```ts
 * import { MissingTokenError } from 'express-service-accounts'
 *
 * const err = new MissingTokenError()
 * err.status // 401, with `WWW-Authenticate: Bearer realm="..."` and no `error` attribute
 * err.code   // 'invalid_request', in the JSON body only
 * ```
 */
export class MissingTokenError extends OAuthError {
  readonly code = 'invalid_request';
  readonly status = 401;
  constructor() {
    super('A bearer access token is required');
  }

  override challenge(realm: string, dpop?: DpopChallenge): string {
    // RFC 9449 §7.1: a route that accepts both schemes offers both; one that requires DPoP offers DPoP only.
    if (dpop === undefined) return formatChallenge('Bearer', { realm });
    const offer = formatChallenge('DPoP', { realm, algs: dpop.algs });
    return dpop.mode === 'offered' ? `${formatChallenge('Bearer', { realm })}, ${offer}` : offer;
  }
}

/**
 * 403 `insufficient_scope` (RFC 6750 §3.1), naming the scope the route needs.
 *
 * @example
 * ```ts
 * import { InsufficientScopeError } from 'express-service-accounts'
 *
 * // What `sa.requireBearer({ scope: 'jobs:write' })` answers a token without that scope.
 * const err = new InsufficientScopeError('jobs:write')
 * err.status // 403
 * err.scope  // 'jobs:write', also the `scope` of the `WWW-Authenticate` challenge
 * ```
 */
export class InsufficientScopeError extends OAuthError {
  readonly code = 'insufficient_scope';
  readonly status = 403;
  constructor(readonly scope: string) {
    super(`The access token lacks the scope this route needs: ${scope}`);
  }

  override challenge(realm: string, dpop?: DpopChallenge): string {
    return bearerChallenge(realm, this, this.scope, dpop);
  }
}

/**
 * 405 `invalid_request` with `Allow`.
 *
 * @example
 * ```ts
 * import { MethodNotAllowedError } from 'express-service-accounts'
 *
 * // What `GET /oauth/token` gets.
 * const err = new MethodNotAllowedError('POST')
 * err.status  // 405
 * err.headers // { Allow: 'POST' }
 * ```
 */
export class MethodNotAllowedError extends OAuthError {
  readonly code = 'invalid_request';
  readonly status = 405;
  constructor(readonly allow: string) {
    super(`Method not allowed; use ${allow}`);
  }

  override get headers(): Readonly<Record<string, string>> {
    return { Allow: this.allow };
  }
}

/**
 * 429 `too_many_requests` with `Retry-After` (seconds): a client past the `failureLimit`, or, on the
 * token router's paths, a 429 of the host's own rate limiter mounted before it.
 *
 * @example
 * ```ts
 * import { TooManyRequestsError } from 'express-service-accounts'
 *
 * // A client past the failureLimit, 42.5 s before its window ends.
 * const err = new TooManyRequestsError(42.5)
 * err.status  // 429
 * err.headers // { 'Retry-After': '43' }: whole seconds, at least 1
 * ```
 */
export class TooManyRequestsError extends OAuthError {
  readonly code = 'too_many_requests';
  readonly status = 429;
  /**
   * @param retryAfterSeconds how long the client should wait (rounded up to whole seconds, at least 1)
   * @param description the `error_description`; by default, too many failed client authentications
   */
  constructor(
    readonly retryAfterSeconds: number,
    description = 'Too many failed client authentications; retry later',
  ) {
    super(description);
  }

  override get headers(): Readonly<Record<string, string>> {
    return { 'Retry-After': retryAfter(this.retryAfterSeconds) };
  }
}

/**
 * 503 `temporarily_unavailable`: the account store (or the limiter's store) failed or timed out; or,
 * at the token endpoint, too many secret checks are waiting (then with `Retry-After: 1` and
 * `Connection: close`: the client retries over a new connection, see docs/security.md), or an outside
 * issuer's keys cannot be fetched.
 *
 * @example
 * ```ts
 * import { TemporarilyUnavailableError } from 'express-service-accounts'
 *
 * // The store did not answer: nothing is issued and no request gets through (fail closed).
 * const err = new TemporarilyUnavailableError({ cause: new Error('connect ECONNREFUSED 10.0.0.5:5432') })
 * err.toJSON() // { error: 'temporarily_unavailable', error_description: 'The service is temporarily unavailable; retry later' }
 * err.cause    // the store's error, for your logs only
 * ```
 */
export class TemporarilyUnavailableError extends OAuthError {
  readonly code = 'temporarily_unavailable';
  readonly status = 503;
  /** Seconds after which a retry may succeed, sent as `Retry-After`; `undefined` when unknown. */
  readonly retryAfterSeconds: number | undefined;
  constructor(options?: { retryAfterSeconds?: number; cause?: unknown }) {
    super('The service is temporarily unavailable; retry later', options);
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }

  override get headers(): Readonly<Record<string, string>> {
    const headers: Record<string, string> = this.retryAfterSeconds === undefined ? {} : { 'Retry-After': retryAfter(this.retryAfterSeconds) };
    // Refused by the bcrypt gate (a flood holds its queue): the connection is closed after the answer
    // (RFC 9112 §9.6), so the refused client's next attempt waits in the server's line of new
    // connections, the one a newcomer waits in, instead of being read again at every turn of the event
    // loop (docs/security.md, "Fair shares under a flood").
    return this.cause instanceof SecretChecksBusyError ? { ...headers, Connection: 'close' } : headers;
  }
}

/**
 * 500 `server_error`: an unexpected failure. Its detail stays in `cause`, never in the response.
 *
 * @example
 * ```ts
 * import { ServerError } from 'express-service-accounts'
 *
 * const err = new ServerError({ cause: new TypeError("Cannot read properties of undefined (reading 'scopes')") })
 * err.toJSON() // { error: 'server_error', error_description: 'The server encountered an unexpected error' }
 * err.expose   // false, as for every 5xx: only the generic description above is sent
 * ```
 */
export class ServerError extends OAuthError {
  readonly code = 'server_error';
  readonly status = 500;
  constructor(options?: { cause?: unknown }) {
    super('The server encountered an unexpected error', options);
  }
}

/** `Retry-After` in whole seconds, at least 1 (RFC 9110 §10.2.3). */
function retryAfter(seconds: number): string {
  return String(Math.max(1, Math.ceil(seconds)));
}

/**
 * How a protected route offers DPoP (RFC 9449 §7.1), for its challenges: `offered` beside Bearer (a
 * Bearer request's refusal keeps its Bearer challenge), `required` (DPoP only), or `used` (the request
 * came with the DPoP scheme: its refusals carry the DPoP challenge). `algs` is the proof algorithms,
 * space-separated.
 *
 * @example
 * ```ts
 * import { MissingTokenError, type DpopChallenge } from 'express-service-accounts'
 *
 * const offered: DpopChallenge = { algs: 'ES256 PS256', mode: 'offered' }
 * new MissingTokenError().challenge('api', offered)
 * // 'Bearer realm="api", DPoP realm="api", algs="ES256 PS256"'
 * ```
 */
export interface DpopChallenge {
  readonly algs: string;
  readonly mode: 'offered' | 'required' | 'used';
}

/** A challenge naming the error: Bearer (RFC 6750 §3), or DPoP (RFC 9449 §7.1) for a DPoP request or route. */
function bearerChallenge(realm: string, err: OAuthError, scope?: string, dpop?: DpopChallenge): string {
  if (dpop !== undefined && dpop.mode !== 'offered') {
    return formatChallenge('DPoP', { realm, algs: dpop.algs, error: err.code, error_description: err.message, scope });
  }
  return formatChallenge('Bearer', { realm, error: err.code, error_description: err.message, scope });
}

/**
 * 400 `invalid_dpop_proof` at the token endpoint, 401 with a DPoP challenge at a protected route
 * (RFC 9449 §5, §7.1): the `DPoP` proof is missing where the account requires one, malformed, signed
 * with an algorithm not accepted, for another method or URL, too old or from the future, replayed, or
 * not for the token sent with it. The description says which.
 *
 * @example
 * ```ts
 * import { InvalidDpopProofError } from 'express-service-accounts'
 *
 * const err = new InvalidDpopProofError('The DPoP proof is for another URL')
 * err.status   // 400 (401 when a protected route refuses it)
 * err.toJSON() // { error: 'invalid_dpop_proof', error_description: 'The DPoP proof is for another URL' }
 * ```
 */
export class InvalidDpopProofError extends OAuthError {
  readonly code = 'invalid_dpop_proof';
  readonly status: 400 | 401;
  constructor(message: string, options?: { status?: 400 | 401; cause?: unknown }) {
    super(message, options);
    this.status = options?.status ?? 400;
  }

  override challenge(realm: string, dpop?: DpopChallenge): string | undefined {
    return this.status === 401 ? formatChallenge('DPoP', { realm, algs: dpop?.algs, error: this.code, error_description: this.message }) : undefined;
  }
}

/**
 * 400 `use_dpop_nonce` at the token endpoint, 401 with `WWW-Authenticate: DPoP error="use_dpop_nonce"`
 * at a protected route (RFC 9449 §8, §9): the proof carries no nonce, or a stale one. The answer's
 * `DPoP-Nonce` header holds the nonce to put in a new proof.
 *
 * @example
 * ```ts
 * import { UseDpopNonceError } from 'express-service-accounts'
 *
 * const err = new UseDpopNonceError('eyJ7S_zG.eyJH0-Z.HX4w-7v', { status: 401 })
 * err.headers // { 'DPoP-Nonce': 'eyJ7S_zG.eyJH0-Z.HX4w-7v' }
 * ```
 */
export class UseDpopNonceError extends OAuthError {
  readonly code = 'use_dpop_nonce';
  readonly status: 400 | 401;
  constructor(
    /** The nonce the client is to use. */
    readonly nonce: string,
    options?: { status?: 400 | 401 },
  ) {
    super('Resend the request with a DPoP proof that carries the nonce of the DPoP-Nonce header');
    this.status = options?.status ?? 400;
  }

  override get headers(): Readonly<Record<string, string>> {
    return { 'DPoP-Nonce': this.nonce };
  }

  override challenge(realm: string, dpop?: DpopChallenge): string | undefined {
    return this.status === 401 ? formatChallenge('DPoP', { realm, algs: dpop?.algs, error: this.code, error_description: this.message }) : undefined;
  }
}

/**
 * Every concrete error class, so `switch (err.code)` narrows.
 *
 * @example
 * ```ts
 * import type { AnyOAuthError } from 'express-service-accounts'
 *
 * function explain(err: AnyOAuthError): string {
 *   switch (err.code) {
 *     case 'insufficient_scope':
 *       return `the token lacks ${err.scope}` // err is an InsufficientScopeError here
 *     case 'too_many_requests':
 *       return `retry in ${err.retryAfterSeconds} s` // a TooManyRequestsError
 *     case 'invalid_token':
 *       return `token refused: ${err.reason}` // an InvalidTokenError
 *     default:
 *       return `${err.status} ${err.code}: ${err.message}`
 *   }
 * }
 * ```
 */
export type AnyOAuthError =
  | InvalidRequestError
  | InvalidClientError
  | InvalidGrantError
  | InvalidScopeError
  | InvalidTargetError
  | UnauthorizedClientError
  | UnsupportedTokenTypeError
  | InvalidDpopProofError
  | UseDpopNonceError
  | InvalidTokenError
  | MissingTokenError
  | InsufficientScopeError
  | MethodNotAllowedError
  | TooManyRequestsError
  | TemporarilyUnavailableError
  | ServerError;

/** Thrown by store calls that failed or timed out; rendered as 503. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * Thrown by store calls that did not answer within their deadline; a {@link StoreUnavailableError}
 * (503) like any other outage, and named like one in events (`StoreUnavailableError: Store call
 * findAccount timed out after 2000 ms`). Its class tells the `timeout` error type of the metrics.
 */
export class StoreTimeoutError extends StoreUnavailableError {
  constructor(what: string, timeoutMs: number) {
    super(`Store call ${what} timed out after ${timeoutMs} ms`);
  }
}

/**
 * Thrown when a client secret cannot be checked now: every bcrypt slot is busy and the queue, or the
 * share of the client's address or client ID, is full (docs/security.md); rendered as 503 with `Retry-After`.
 */
export class SecretChecksBusyError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('Every secret check slot is busy and the queue is full');
    this.name = 'SecretChecksBusyError';
  }
}

/**
 * Thrown when an outside issuer's keys are needed to check a token and cannot be fetched (the issuer
 * is unreachable, slow, or answers with something that is not a valid key set); rendered as 503 with
 * `Retry-After`. Its message names the issuer and the cause, never a token.
 */
export class FederatedKeysUnavailableError extends Error {
  constructor(
    readonly issuer: string,
    message: string,
    readonly retryAfterSeconds: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'FederatedKeysUnavailableError';
  }
}

/**
 * Maps anything thrown to an {@link OAuthError}: OAuth errors pass through, store outages, a full
 * secret-check queue and an outside issuer whose keys cannot be fetched become 503, everything else becomes a 500 that hides its detail.
 */
export function toOAuthError(err: unknown): OAuthError {
  if (err instanceof OAuthError) return err;
  if (err instanceof StoreUnavailableError) return new TemporarilyUnavailableError({ cause: err });
  if (err instanceof SecretChecksBusyError || err instanceof FederatedKeysUnavailableError) {
    return new TemporarilyUnavailableError({ retryAfterSeconds: err.retryAfterSeconds, cause: err });
  }
  return new ServerError({ cause: err });
}

/**
 * Writes an OAuth error as JSON with its headers and its challenge for `realm`. The single renderer of
 * the token endpoint and `requireBearer()`; framework-free, so it works the same under Express 4 and 5.
 */
export function sendOAuthError(res: ServerResponse, err: OAuthError, realm: string, dpop?: DpopChallenge): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify(err.toJSON());
  res.statusCode = err.status;
  const { headers } = err;
  for (const name in headers) res.setHeader(name, headers[name]!);
  const challenge = err.challenge(realm, dpop);
  if (challenge !== undefined) res.setHeader('WWW-Authenticate', challenge);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
