/**
 * @module token-router
 * `POST {mount}/token`: body parsers → guards → client authentication → grant check → oauth2orize
 * exchange → the one error renderer. Framework-free middleware, so the same function mounts in
 * Express 4 and Express 5 (`app.use('/oauth', tokenRouter)`).
 */
import type { ServerResponse } from 'node:http';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { InvalidClientError, sendOAuthError, toOAuthError } from '../errors.js';
import type { Runtime } from '../runtime.js';
import { createClientAuthentication } from './client-authentication.js';
import { createClientCredentialsExchange, requireClientCredentialsGrant } from './client-credentials-exchange.js';
import { createBrowserGuard, noStore, requirePost, validateTokenRequest } from './request-guards.js';
import { createTokenBodyParser, isBodyParserError, toBodyError } from './token-request-body.js';
import type { Middleware, TokenHttpRequest } from './token-request.js';

/** Runs middlewares in order; the first error skips to `onError`. */
function chain(steps: readonly Middleware[], onError: (err: unknown, req: TokenHttpRequest, res: ServerResponse) => void): Middleware {
  return (req, res, done) => {
    let index = 0;
    const next = (err?: unknown): void => {
      if (err !== undefined && err !== null) return onError(err, req, res);
      const step = steps[index++];
      if (!step) return done();
      try {
        step(req, res, next);
      } catch (e) {
        onError(e, req, res);
      }
    };
    next();
  };
}

/** Only `{mount}/token` (and `{mount}/token/`) is ours; everything else passes to the host. */
function isTokenPath(url: string | undefined): boolean {
  const path = (url ?? '').split('?')[0];
  return path === '/token' || path === '/token/';
}

/** An error-handling middleware (four arguments, so Express routes errors to it). */
export type ErrorMiddleware = (err: unknown, req: TokenHttpRequest, res: ServerResponse, next: (err?: unknown) => void) => void;

/**
 * Returns the token endpoint as a pair of middlewares to mount where the host likes. The second one
 * catches errors raised before us on `{mount}/token`, such as a malformed body rejected by the host's
 * own global `express.json()`, and renders them as RFC 6749 JSON instead of Express's HTML page.
 *
 * @example
 * ```ts
 * app.use('/oauth', serviceAccounts.tokenRouter) // serves POST /oauth/token
 * ```
 */
export function createTokenRouter(runtime: Runtime): readonly [Middleware, ErrorMiddleware] {
  const ready: Middleware = (_req, _res, next) => {
    if (runtime.isReady()) return next();
    runtime.ready().then(() => next(), next);
  };
  const { telemetry } = runtime;
  const render = (err: unknown, _req: TokenHttpRequest, res: ServerResponse): void => {
    const error = toOAuthError(err);
    telemetry.tokenRequestRefused(error.code, error instanceof InvalidClientError ? error.reason : undefined);
    if (error.code === 'too_many_requests') telemetry.limiterRefused();
    sendOAuthError(res, error);
  };
  const handle = chain(
    [
      noStore,
      requirePost,
      createBrowserGuard(runtime.config.allowBrowserRequests),
      createTokenBodyParser(runtime.config.bodyLimit),
      validateTokenRequest,
      ready,
      createClientAuthentication(runtime),
      requireClientCredentialsGrant,
      createClientCredentialsExchange(runtime),
    ],
    render,
  );

  const endpoint: Middleware = (req, res, next) => {
    if (!isTokenPath(req.url)) return next();
    const span = telemetry.tracer.startSpan('service_accounts.token_request');
    // Without an OpenTelemetry SDK (or when not sampled) the span records nothing: skip its bookkeeping.
    if (!span.isRecording()) return handle(req, res, () => next());
    res.once('close', () => {
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    // Store calls made for this request become children of its span, also those made from the body
    // stream's events (bound to the span's context, as they would otherwise run in the socket's).
    const active = trace.setSpan(context.active(), span);
    context.with(active, () => handle(context.bind(active, req), res, () => next()));
  };
  const hostErrors: ErrorMiddleware = (err, req, res, next) => {
    if (!isTokenPath(req.url)) return next(err);
    noStore(req, res, () => render(isBodyParserError(err) ? toBodyError(err) : err, req, res));
  };
  return [endpoint, hostErrors];
}
