/**
 * @module create-admin-router
 * `createAdminRouter(options)`: the admin HTTP API as one framework-free middleware, so the same
 * function mounts in Express 4 and Express 5 (`app.use('/admin', router)`). Per request, in order:
 * match the path (anything else passes to the host), answer `OPTIONS` (never with CORS headers) and
 * 405, refuse non-JSON bodies (415) and unmarked cross-origin requests (403), ask the host who is acting
 * (401/403), read and validate the body and query (400/413), then run the operation through the
 * admin API scoped to that person. Every answer is JSON with `Cache-Control: no-store`; every error is
 * an RFC 9457 problem, rendered by {@link sendProblem}.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import { buildAdminOpenApiDocument, allowHeader, DOCUMENT_ALLOW } from './admin-openapi.js';
import { AdminProblem, sendProblem, toAdminProblem } from './admin-problem.js';
import { checkMediaType, readJsonBody, validate } from './admin-request.js';
import { resolveAdminRouterOptions, type CreateAdminRouterOptions, type ResolvedAdminRouterOptions } from './admin-router-options.js';
import type { AdminRoute, RouteResult } from './admin-route.js';
import { matchRoutes } from './admin-routes.js';
import { EmptyBodySchema } from './admin-schemas.js';
import { authorizeRequest } from './authorize-request.js';
import { scopeAdminApi } from './tenant-scope.js';

/** The request as Express hands it to a mounted middleware (only what is read here). */
type MountedRequest = IncomingMessage & { baseUrl?: string; originalUrl?: string; body?: unknown };

const OPENAPI_PATH = '/openapi.json';

function sendJsonText(res: ServerResponse, text: string, status = 200, headers: Record<string, string> = {}): void {
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(text);
}

/** The query as an object; a repeated parameter is refused, `limit` becomes a number when it is one. */
function parseQuery(search: string): Record<string, unknown> {
  const query: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [name, value] of new URLSearchParams(search)) {
    if (name in query) {
      throw new AdminProblem('invalid-request', 'A query parameter is repeated', { errors: [{ pointer: `/${name}`, detail: 'Give it once' }] });
    }
    query[name] = name === 'limit' && /^\d{1,6}$/.test(value) ? Number(value) : value;
  }
  return { ...query };
}

/** One operation, from the media type check to the handler's result; any refusal rejects with a problem. */
async function runOperation(
  options: ResolvedAdminRouterOptions,
  route: AdminRoute,
  req: MountedRequest,
  params: Record<string, string>,
  search: string,
): Promise<RouteResult> {
  // Media type first: a form another site posts is refused before the host's login is even asked.
  const json = route.method !== 'GET' && checkMediaType(req);
  const principal = await authorizeRequest(options, req as Request);
  const query = route.query ? validate(route.query, parseQuery(search), 'The query') : undefined;
  const raw = json ? await readJsonBody(req) : undefined;
  const body = route.body ? (raw === undefined && route.bodyOptional ? undefined : validate(route.body, raw, 'The request body')) : raw === undefined ? undefined : validate(EmptyBodySchema, raw, 'The request body');
  const path = (req.originalUrl ?? req.url ?? '/').split('?')[0]!;
  return route.handle({ admin: scopeAdminApi(options.admin, principal, options.operatorOnlyScopes), params, body, query, path });
}

/**
 * Creates the admin router over an admin API: list, create and get service accounts, add and revoke
 * secrets, disable and enable, each limited to the client account of the person `authorize` names,
 * plus `GET /openapi.json`. Mount it behind your login, on its own path. Options are checked once; a
 * bad one throws a `TypeError`. See docs/admin-api.md.
 *
 * @example
 * ```ts
 * import express from 'express'
 * import { createAdminApi, createAdminRouter } from 'express-service-accounts'
 *
 * // Your own login, which ran before: the signed-in user of a request, if any.
 * declare function currentUser(req: express.Request): { id: string; name: string; tenant: string } | undefined
 *
 * const app = express()
 * app.use(
 *   '/admin',
 *   createAdminRouter({
 *     admin: createAdminApi({ store }),
 *     authorize: (req) => {
 *       const user = currentUser(req)
 *       return user && { actor: { id: user.id, name: user.name }, clientAccountId: user.tenant }
 *     },
 *   }),
 * )
 * ```
 */
export function createAdminRouter(options: CreateAdminRouterOptions): RequestHandler {
  const resolved = resolveAdminRouterOptions(options);
  const documents = new Map<string, string>();
  const documentFor = (mountPath: string): string => {
    let text = documents.get(mountPath);
    if (text === undefined) {
      text = JSON.stringify(buildAdminOpenApiDocument({ mountPath }));
      if (documents.size < 16) documents.set(mountPath, text);
    }
    return text;
  };

  const router = (req: MountedRequest, res: ServerResponse, next: (err?: unknown) => void): void => {
    const [pathname = '/', search = ''] = (req.url ?? '/').split(/\?(.*)/s, 2);
    const isDocument = pathname === OPENAPI_PATH;
    const match = isDocument ? undefined : matchRoutes(pathname);
    if (!isDocument && !match) return next();
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const allow = match ? allowHeader(match.routes) : DOCUMENT_ALLOW;
    // Preflights get the methods and nothing else: no Access-Control-* header lets another origin in.
    if (req.method === 'OPTIONS') {
      res.statusCode = 204;
      res.setHeader('Allow', allow);
      res.end();
      return;
    }
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const route = match?.routes.find((candidate) => candidate.method === method);
    if (!match || !route) {
      if (isDocument && method === 'GET') return sendJsonText(res, documentFor(req.baseUrl ?? ''));
      return sendProblem(res, new AdminProblem('method-not-allowed', `This address takes ${allow}`, { headers: { Allow: allow } }));
    }
    runOperation(resolved, route, req, match.params, search).then(
      (result) => sendJsonText(res, JSON.stringify(result.body), result.status, result.headers),
      (err: unknown) => {
        const problem = toAdminProblem(err);
        // The host's own error, not the problem it was wrapped in for the answer.
        if (problem.problem === 'server-error') reportError(resolved.onError, err instanceof AdminProblem && err.cause !== undefined ? err.cause : err, req);
        if (!res.headersSent) sendProblem(res, problem);
      },
    );
  };
  return router as unknown as RequestHandler;
}

/** Hands the cause of a 500 to the host's `onError`, if any; a hook that throws is ignored. */
function reportError(onError: ((error: unknown, req: Request) => void) | undefined, error: unknown, req: unknown): void {
  if (!onError) return;
  try {
    onError(error, req as Request);
  } catch {
    // The answer is a 500 either way; the hook's own failure must not change it.
  }
}
