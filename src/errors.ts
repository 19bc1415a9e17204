/**
 * @module errors
 * One error hierarchy for everything the token endpoint and `requireBearer()` can answer.
 * Each class is one row of the contract tables; {@link sendOAuthError} renders them all.
 */
import type { ServerResponse } from 'node:http';

/** The OAuth `error` values this library answers with (RFC 6749 §5.2, RFC 6750 §3.1, RFC 6585). */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'invalid_scope'
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
 * if (err instanceof OAuthError) console.log(err.status, err.code)
 * ```
 */
export abstract class OAuthError extends Error {
  abstract readonly code: OAuthErrorCode;
  abstract readonly status: number;
  /** Extra response headers: `WWW-Authenticate`, `Allow`, `Retry-After`. */
  readonly headers: Record<string, string> = {};

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
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

/** 400 `invalid_request`: a malformed request (RFC 6749 §5.2, RFC 6750 §3.1). */
export class InvalidRequestError extends OAuthError {
  readonly code = 'invalid_request';
  readonly status: number;
  /** @param status 400 by default; 413 for a body over the limit. */
  constructor(message: string, options?: { status?: number; cause?: unknown }) {
    super(message, options);
    this.status = options?.status ?? 400;
  }
}

/** The one public description shared by every client-authentication failure, so none can be told apart. */
export const INVALID_CLIENT_DESCRIPTION = 'Client authentication failed';

/** Why client authentication failed. Never sent to the client; only the audit hook sees it. */
export type ClientAuthenticationFailure =
  | 'missing_credentials'
  | 'malformed_credentials'
  | 'unknown_client'
  | 'wrong_secret'
  | 'revoked_secret'
  | 'disabled_account';

/** 401 `invalid_client`: the four causes (unknown client, wrong secret, revoked secret, disabled account) share one message. */
export class InvalidClientError extends OAuthError {
  readonly code = 'invalid_client';
  readonly status = 401;
  constructor(
    /** Internal reason, for the audit hook only. */
    readonly reason: ClientAuthenticationFailure,
    options?: { cause?: unknown },
  ) {
    super(INVALID_CLIENT_DESCRIPTION, options);
  }
}

/** 400 `invalid_grant`: `grant_type` missing or not `client_credentials` (SPEC §4.1 rule 1). */
export class InvalidGrantError extends OAuthError {
  readonly code = 'invalid_grant';
  readonly status = 400;
}

/** 400 `invalid_scope`: a requested scope is malformed or not allowed for the account. */
export class InvalidScopeError extends OAuthError {
  readonly code = 'invalid_scope';
  readonly status = 400;
}

/** Why a bearer token was refused. Each maps to one fixed public description. */
export type InvalidTokenReason = 'expired' | 'revoked' | 'disabled' | 'invalid';

const INVALID_TOKEN_DESCRIPTIONS: Record<InvalidTokenReason, string> = {
  expired: 'The access token expired',
  revoked: 'The access token was revoked',
  disabled: 'The service account is disabled',
  invalid: 'The access token is invalid',
};

/** 401 `invalid_token` (RFC 6750 §3.1). */
export class InvalidTokenError extends OAuthError {
  readonly code = 'invalid_token';
  readonly status = 401;
  constructor(
    readonly reason: InvalidTokenReason,
    options?: { cause?: unknown },
  ) {
    super(INVALID_TOKEN_DESCRIPTIONS[reason], options);
  }
}

/**
 * 401 without an `error` attribute: the request carried no bearer token at all (RFC 6750 §3.1:
 * "the resource server SHOULD NOT include an error code").
 */
export class MissingTokenError extends OAuthError {
  readonly code = 'invalid_request';
  readonly status = 401;
  constructor() {
    super('A bearer access token is required');
  }
}

/** 403 `insufficient_scope` (RFC 6750 §3.1), naming the scope the route needs. */
export class InsufficientScopeError extends OAuthError {
  readonly code = 'insufficient_scope';
  readonly status = 403;
  constructor(readonly scope: string) {
    super(`The access token lacks the scope this route needs: ${scope}`);
  }
}

/** 405 `invalid_request` with `Allow`. */
export class MethodNotAllowedError extends OAuthError {
  readonly code = 'invalid_request';
  readonly status = 405;
  constructor(allow: string) {
    super(`Method not allowed; use ${allow}`);
    this.headers.Allow = allow;
  }
}

/** 429 `too_many_requests` with `Retry-After` (seconds). */
export class TooManyRequestsError extends OAuthError {
  readonly code = 'too_many_requests';
  readonly status = 429;
  constructor(readonly retryAfterSeconds: number) {
    super('Too many failed client authentications; retry later');
    this.headers['Retry-After'] = String(Math.max(1, Math.ceil(retryAfterSeconds)));
  }
}

/** 503 `temporarily_unavailable`: the account store (or the limiter's store) failed or timed out. */
export class TemporarilyUnavailableError extends OAuthError {
  readonly code = 'temporarily_unavailable';
  readonly status = 503;
  constructor(options?: { cause?: unknown }) {
    super('The service is temporarily unavailable; retry later', options);
  }
}

/** 500 `server_error`: an unexpected failure. Its detail stays in `cause`, never in the response. */
export class ServerError extends OAuthError {
  readonly code = 'server_error';
  readonly status = 500;
  constructor(options?: { cause?: unknown }) {
    super('The server encountered an unexpected error', options);
  }
}

/** Every concrete error class, so `switch (err.code)` narrows. */
export type AnyOAuthError =
  | InvalidRequestError
  | InvalidClientError
  | InvalidGrantError
  | InvalidScopeError
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
 * Maps anything thrown to an {@link OAuthError}: OAuth errors pass through, store outages become 503,
 * everything else becomes a 500 that hides its detail.
 */
export function toOAuthError(err: unknown): OAuthError {
  if (err instanceof OAuthError) return err;
  if (err instanceof StoreUnavailableError) return new TemporarilyUnavailableError({ cause: err });
  return new ServerError({ cause: err });
}

/**
 * Writes an OAuth error as JSON with its headers. The single renderer of the token endpoint and
 * `requireBearer()`; framework-free, so it works the same under Express 4 and 5.
 */
export function sendOAuthError(res: ServerResponse, err: OAuthError, extraHeaders: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify(err.toJSON());
  res.statusCode = err.status;
  for (const [name, value] of Object.entries({ ...err.headers, ...extraHeaders })) res.setHeader(name, value);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
