/**
 * @module token-router
 * `POST {mount}/token` (and `/revoke`, `/introspect`) as framework-free middleware, so the same function mounts in Express 4 and
 * Express 5 (`app.use('/oauth', tokenRouter)`): one {@link TokenRequestContext} per request, handed to
 * each step in order; the first error skips to the one renderer, {@link sendOAuthError}.
 */
import type { ServerResponse } from 'node:http';
import { context as otelContext, trace } from '@opentelemetry/api';
import { InvalidClientError, sendOAuthError, toOAuthError } from '../errors.js';
import { RequestSpan } from '../observability/telemetry.js';
import type { Telemetry } from '../observability/telemetry.js';
import { setNoStore } from './request-guards.js';
import { isBodyParserError, toBodyError } from './token-request-body.js';
import { TokenRequestContext, type Step, type TokenHttpRequest } from './token-request-context.js';

/** A framework-free middleware. */
export type Middleware = (req: TokenHttpRequest, res: ServerResponse, next: (err?: unknown) => void) => void;

/** An error-handling middleware (four arguments, so Express routes errors to it). */
export type ErrorMiddleware = (err: unknown, req: TokenHttpRequest, res: ServerResponse, next: (err?: unknown) => void) => void;

/**
 * The steps of each endpoint, by path below the mount: `/token`, and `/revoke` and `/introspect`.
 * Each path also matches with a trailing slash.
 */
export type TokenRoutes = Readonly<Record<string, readonly Step[]>>;

/** The steps of the route a URL names, or `undefined`: that path passes to the host. */
function routeOf(routes: TokenRoutes, url: string | undefined): readonly Step[] | undefined {
  let path = (url ?? '').split('?')[0] ?? '';
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return Object.prototype.hasOwnProperty.call(routes, path) ? routes[path] : undefined;
}

/** What the router needs besides its steps. */
export interface TokenRouterOptions {
  readonly realm: string;
  readonly telemetry: Pick<Telemetry, 'tracer' | 'tokenRequestRefused'>;
}

/**
 * Returns the token endpoint as a pair of middlewares to mount where the host likes. The second one
 * catches errors raised before us on `{mount}/token`, such as a malformed body rejected by the host's
 * own global `express.json()`, and renders them as RFC 6749 JSON instead of Express's HTML page.
 */
export function createTokenRouter(routes: TokenRoutes, options: TokenRouterOptions): readonly [Middleware, ErrorMiddleware] {
  const { realm, telemetry } = options;
  const render = (err: unknown, res: ServerResponse): void => {
    const error = toOAuthError(err);
    telemetry.tokenRequestRefused(error.code, error instanceof InvalidClientError ? error.reason : undefined);
    sendOAuthError(res, error, realm);
  };

  /** Runs the steps in order on one context; the first error renders the answer. The last step answers. */
  const handle = (steps: readonly Step[], context: TokenRequestContext, passOn: () => void): void => {
    let index = 0;
    const next = (err?: unknown): void => {
      if (err !== undefined && err !== null) return render(err, context.res);
      const step = steps[index++];
      if (!step) return passOn(); // only if a step let the request through unanswered
      try {
        step(context, next);
      } catch (e) {
        render(e, context.res);
      }
    };
    next();
  };

  const endpoint: Middleware = (req, res, next) => {
    const steps = routeOf(routes, req.url);
    if (!steps) return next();
    setNoStore(res);
    const span = RequestSpan.start(telemetry.tracer, 'service_accounts.token_request', res);
    if (!span) return handle(steps, new TokenRequestContext(req, res), next);
    // Store calls made for this request become children of its span, also those made from the body
    // stream's events (bound to the span's context, as they would otherwise run in the socket's).
    const active = trace.setSpan(otelContext.active(), span.span);
    otelContext.with(active, () => handle(steps, new TokenRequestContext(otelContext.bind(active, req), res), next));
  };
  const hostErrors: ErrorMiddleware = (err, req, res, next) => {
    if (!routeOf(routes, req.url)) return next(err);
    setNoStore(res);
    render(isBodyParserError(err) ? toBodyError(err) : err, res);
  };
  return [endpoint, hostErrors];
}
