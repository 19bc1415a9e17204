/**
 * The error hierarchy (src/errors.ts): each class is one row of CONTRACT §2/§3, with its status, its
 * OAuth `error` code, its RFC 6749 §5.2 body and its extra headers.
 */
import { describe, expect, it } from 'vitest';
import {
  InsufficientScopeError,
  InvalidClientError,
  InvalidGrantError,
  InvalidRequestError,
  InvalidScopeError,
  InvalidTokenError,
  MethodNotAllowedError,
  MissingTokenError,
  OAuthError,
  ServerError,
  TemporarilyUnavailableError,
  TooManyRequestsError,
} from '../../src/index.js';
import { INVALID_CLIENT_DESCRIPTION, SecretChecksBusyError, sendOAuthError, StoreUnavailableError, toOAuthError } from '../../src/errors.js';
import { ServerResponse, IncomingMessage } from 'node:http';
import { Socket } from 'node:net';

describe('OAuth errors', () => {
  // RFC 6749 §5.2: the error response holds "error" (REQUIRED) and "error_description" (OPTIONAL); the
  // contract makes both required strings.
  it.each([
    [new InvalidRequestError('bad body'), 400, 'invalid_request'],
    [new InvalidRequestError('too big', { status: 413 }), 413, 'invalid_request'],
    [new InvalidClientError('wrong_secret'), 401, 'invalid_client'],
    [new InvalidGrantError('no grant'), 400, 'invalid_grant'],
    [new InvalidScopeError('no scope'), 400, 'invalid_scope'],
    [new InvalidTokenError('expired'), 401, 'invalid_token'],
    [new MissingTokenError(), 401, 'invalid_request'],
    [new InsufficientScopeError('jobs:write'), 403, 'insufficient_scope'],
    [new MethodNotAllowedError('POST'), 405, 'invalid_request'],
    [new TooManyRequestsError(30), 429, 'too_many_requests'],
    [new TemporarilyUnavailableError(), 503, 'temporarily_unavailable'],
    [new ServerError(), 500, 'server_error'],
  ] as const)('%s: status %i, error %s, body exactly {error, error_description}', (err, status, code) => {
    expect(err).toBeInstanceOf(OAuthError);
    expect(err).toBeInstanceOf(Error);
    expect(err.status).toBe(status);
    expect(err.statusCode).toBe(status);
    expect(err.code).toBe(code);
    expect(err.toJSON()).toEqual({ error: code, error_description: err.message });
    expect(JSON.parse(JSON.stringify(err))).toEqual({ error: code, error_description: expect.any(String) });
    expect(err.message.length).toBeGreaterThan(0);
    expect(err.expose).toBe(status < 500);
    expect(err.name).toBe(err.constructor.name);
  });

  // CONTRACT §2: "unknown client ID, wrong secret, revoked secret, disabled account ... indistinguishable in body".
  it('every invalid_client cause has the same public description; the reason stays internal', () => {
    const reasons = ['unknown_client', 'wrong_secret', 'revoked_secret', 'disabled_account', 'missing_credentials', 'malformed_credentials'] as const;
    const bodies = reasons.map((r) => JSON.stringify(new InvalidClientError(r)));
    expect(new Set(bodies).size).toBe(1);
    expect(bodies[0]).toBe(JSON.stringify({ error: 'invalid_client', error_description: INVALID_CLIENT_DESCRIPTION }));
    expect(bodies[0]).not.toMatch(/unknown|wrong|revoked|disabled/);
    expect(new InvalidClientError('revoked_secret').reason).toBe('revoked_secret');
  });

  // CONTRACT §3: "error_description="The access token expired"" and "saying revoked / disabled".
  it('invalid_token descriptions per reason', () => {
    expect(new InvalidTokenError('expired').message).toBe('The access token expired');
    expect(new InvalidTokenError('revoked').message).toMatch(/revoked/);
    expect(new InvalidTokenError('disabled').message).toMatch(/disabled/);
    expect(new InvalidTokenError('invalid').message).toBe('The access token is invalid');
  });

  // CONTRACT §2: "any method but POST | 405 | ... with `Allow: POST`"; "429 ... with `Retry-After`".
  it('carries Allow and Retry-After headers', () => {
    expect(new MethodNotAllowedError('POST').headers).toEqual({ Allow: 'POST' });
    expect(new TooManyRequestsError(30).headers).toEqual({ 'Retry-After': '30' });
    expect(new TooManyRequestsError(0.2).headers['Retry-After']).toBe('1');
    expect(new TooManyRequestsError(12.1).headers['Retry-After']).toBe('13');
    expect(new InvalidGrantError('x').headers).toEqual({});
  });

  // RFC 6750 §3: every refusal of a protected resource challenges with Bearer; RFC 6749 §5.2: a client
  // that used the Authorization header gets a Basic challenge with its 401.
  it('each error builds its own WWW-Authenticate challenge from the realm', () => {
    const realm = 'api "v1"';
    expect(new MissingTokenError().challenge(realm)).toBe('Bearer realm="api \\"v1\\""');
    expect(new InvalidTokenError('revoked').challenge('api')).toBe(
      'Bearer realm="api", error="invalid_token", error_description="The access token was revoked"',
    );
    expect(new InsufficientScopeError('jobs:write').challenge('api')).toBe(
      'Bearer realm="api", error="insufficient_scope", error_description="The access token lacks the scope this route needs: jobs:write", scope="jobs:write"',
    );
    expect(new InvalidRequestError('two headers', { challenge: 'Bearer' }).challenge('api')).toBe(
      'Bearer realm="api", error="invalid_request", error_description="two headers"',
    );
    expect(new InvalidRequestError('bad body').challenge('api')).toBeUndefined();
    expect(new InvalidClientError('wrong_secret', { authorizationHeader: true }).challenge('api')).toBe('Basic realm="api"');
    expect(new InvalidClientError('wrong_secret').challenge('api')).toBeUndefined();
    expect(new TemporarilyUnavailableError().challenge('api')).toBeUndefined();
  });

  it('sendOAuthError writes the status, the headers, the challenge and the JSON body', () => {
    const res = new ServerResponse(new IncomingMessage(new Socket()));
    const written: unknown[] = [];
    res.end = ((chunk: unknown) => {
      written.push(chunk);
      return res;
    }) as typeof res.end;
    sendOAuthError(res, new InsufficientScopeError('jobs:write'), 'api');
    expect(res.statusCode).toBe(403);
    expect(res.getHeader('www-authenticate')).toMatch(/^Bearer realm="api", error="insufficient_scope"/);
    expect(res.getHeader('content-type')).toBe('application/json; charset=utf-8');
    expect(JSON.parse(String(written[0]))).toEqual({ error: 'insufficient_scope', error_description: expect.any(String) });
  });

  it('InsufficientScopeError names the scope', () => {
    const err = new InsufficientScopeError('jobs:write');
    expect(err.scope).toBe('jobs:write');
    expect(err.message).toContain('jobs:write');
  });

  // CONTRACT §2/§3: "the store is unreachable | 503"; anything else hides its detail behind a 500.
  it('toOAuthError: OAuth errors pass through, store outages become 503, anything else a detail-free 500', () => {
    const scope = new InvalidScopeError('x');
    expect(toOAuthError(scope)).toBe(scope);
    const outage = toOAuthError(new StoreUnavailableError('findAccount timed out'));
    expect(outage).toBeInstanceOf(TemporarilyUnavailableError);
    expect(outage.message).not.toContain('findAccount');
    const crash = toOAuthError(new Error('secret esas_xyz in stack'));
    expect(crash).toBeInstanceOf(ServerError);
    expect(JSON.stringify(crash)).not.toContain('esas_xyz');
    expect(toOAuthError('a string').status).toBe(500);
  });

  // docs/security.md: a full secret-check queue is answered 503 with Retry-After: 1.
  // docs/security.md, "Fair shares under a flood": the refused client retries over a new connection (RFC 9112 §9.6).
  it('toOAuthError: a full secret-check queue becomes 503 with Retry-After, closing the connection', () => {
    const busy = toOAuthError(new SecretChecksBusyError(1));
    expect(busy).toBeInstanceOf(TemporarilyUnavailableError);
    expect(busy.headers).toEqual({ 'Retry-After': '1', Connection: 'close' });
    expect(new TemporarilyUnavailableError({ retryAfterSeconds: 1, cause: new Error('store') }).headers).toEqual({ 'Retry-After': '1' });
    expect(new TemporarilyUnavailableError().headers).toEqual({});
  });
});
