/**
 * @module create-console-router
 * `createConsoleRouter(options)`: the self-service page as one framework-free middleware (Express 4
 * and 5), mounted by the host behind its login (`app.use('/console', router)`). It serves the page
 * (`/`: HTML, `console.js`, `console.css`, all from the package: no CDN, no third-party request) and,
 * under `/api`, the admin router the page talks to, created with the same `authorize`. Every answer
 * carries a strict Content-Security-Policy (no inline script or style, no framing).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import { createAdminRouter } from '../admin-router/create-admin-router.js';
import { AdminProblem, sendProblem } from '../admin-router/admin-problem.js';
import { authorizeRequest } from '../admin-router/authorize-request.js';
import { resolveAdminRouterOptions, type ResolvedAdminRouterOptions } from '../admin-router/admin-router-options.js';
import { isCrossOriginRequest } from '../cross-origin-request.js';
import { loadConsoleAssets, type ConsoleAsset } from './console-assets.js';
import { renderConsoleNotice, renderConsolePage } from './console-html.js';
import { resolveConsoleRouterOptions, type CreateConsoleRouterOptions, type ResolvedConsoleRouterOptions } from './console-router-options.js';

/** The request as Express hands it to a mounted middleware (only what is read here). */
type MountedRequest = IncomingMessage & { baseUrl?: string; originalUrl?: string };

/**
 * The page's policy: its own script and stylesheet only, JSON calls to its own origin, no plugin, no
 * `<base>`, no framing (clickjacking), and Trusted Types so no string ever becomes HTML.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy': CONSOLE_CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
});

const API_PREFIX = '/api';

function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.end(html);
}

function sendAsset(req: IncomingMessage, res: ServerResponse, asset: ConsoleAsset): void {
  res.setHeader('Content-Type', asset.type);
  // Revalidated on every load: a new version of the package is picked up at once.
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('ETag', asset.etag);
  res.setHeader('Vary', 'Accept-Encoding');
  if (req.headers['if-none-match'] === asset.etag) {
    res.statusCode = 304;
    res.end();
    return;
  }
  const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  const body = gzip ? asset.gzip : asset.body;
  if (gzip) res.setHeader('Content-Encoding', 'gzip');
  res.setHeader('Content-Length', String(body.length));
  res.statusCode = 200;
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** The page itself: the signed-in person's console, or the notice saying why not. */
async function sendPage(options: ResolvedConsoleRouterOptions, who: ResolvedAdminRouterOptions, req: MountedRequest, res: ServerResponse): Promise<void> {
  try {
    const principal = await authorizeRequest(who, req as Request);
    sendHtml(res, 200, renderConsolePage(options, principal));
  } catch (err) {
    const problem = err instanceof AdminProblem ? err.problem : 'server-error';
    if (problem === 'server-error') reportError(options, err instanceof AdminProblem && err.cause !== undefined ? err.cause : err, req);
    const [status, notice] = problem === 'unauthorized' ? ([401, 'sign-in'] as const) : problem === 'forbidden' ? ([403, 'forbidden'] as const) : ([500, 'error'] as const);
    sendHtml(res, status, renderConsoleNotice(options, notice));
  }
}

function reportError(options: ResolvedConsoleRouterOptions, error: unknown, req: unknown): void {
  try {
    options.onError?.(error, req as Request);
  } catch {
    // The answer is a 500 either way.
  }
}

/**
 * Whether a change has neither a media type nor the page's `X-Requested-With` header: the one request
 * a `no-cors` fetch of another site sends without a CORS preflight (OWASP, "Employing custom request
 * headers"). A change with a media type is the admin router's to check: anything but JSON is 415.
 */
function unmarkedWithoutBody(req: IncomingMessage): boolean {
  return req.headers['content-type'] === undefined && req.headers['x-requested-with'] === undefined;
}

/**
 * Creates the self-service page over an admin API: a signed-in client account administrator lists
 * their service accounts, creates one (its secret shown once), adds and revokes secrets, public keys
 * and federated credentials, and disables and enables accounts. Every change goes through the admin
 * router (mounted under `/api` of the page) with the same `authorize`, so it is limited to that
 * person's client account and audited with them as actor. Mount it behind your login, on its own
 * path, and open it with a trailing slash (`/console/`). See docs/console.md.
 *
 * @example
 * ```ts
 * import express from 'express'
 * import { createAdminApi, createConsoleRouter } from 'express-service-accounts'
 *
 * // Your own login, which ran before: the signed-in user of a request, if any.
 * declare function currentUser(req: express.Request): { id: string; name: string; tenant: string } | undefined
 *
 * const app = express()
 * app.use(
 *   '/console',
 *   createConsoleRouter({
 *     admin: createAdminApi({ store }),
 *     authorize: (req) => {
 *       const user = currentUser(req)
 *       return user && { actor: { id: user.id, name: user.name }, clientAccountId: user.tenant }
 *     },
 *     signInUrl: '/login',
 *   }),
 * )
 * ```
 */
export function createConsoleRouter(options: CreateConsoleRouterOptions): RequestHandler {
  const resolved = resolveConsoleRouterOptions(options);
  const api = createAdminRouter({
    admin: resolved.admin,
    authorize: resolved.authorize,
    ...(resolved.onError !== undefined && { onError: resolved.onError }),
    ...(resolved.operatorOnlyScopes !== undefined && { operatorOnlyScopes: resolved.operatorOnlyScopes }),
  }) as unknown as (req: MountedRequest, res: ServerResponse, next: (err?: unknown) => void) => void;
  const who = resolveAdminRouterOptions({ admin: resolved.admin, authorize: resolved.authorize });
  const assets = loadConsoleAssets();

  const router = (req: MountedRequest, res: ServerResponse, next: (err?: unknown) => void): void => {
    const url = req.url ?? '/';
    const pathname = url.split('?', 1)[0]!;
    if (pathname === API_PREFIX || pathname.startsWith(`${API_PREFIX}/`)) {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
      // Changes come from the page itself only: whatever its media type, a request another site's page
      // made is refused before the person's session is read (the cookie is sent all the same). So is a
      // change without a body that lacks the page's header: the one check that holds in a browser
      // sending neither Fetch Metadata nor a telling Origin.
      if (!['GET', 'HEAD', 'OPTIONS'].includes(req.method ?? 'GET') && (isCrossOriginRequest(req) || unmarkedWithoutBody(req))) {
        res.setHeader('Cache-Control', 'no-store');
        return sendProblem(res, new AdminProblem('cross-origin-request', 'Changes are accepted from this page only: this request came from another site, or without the page’s header'));
      }
      const baseUrl = req.baseUrl;
      req.url = url.slice(API_PREFIX.length) || '/';
      req.baseUrl = `${baseUrl ?? ''}${API_PREFIX}`;
      return api(req, res, (err?: unknown) => {
        req.url = url;
        req.baseUrl = baseUrl;
        next(err);
      });
    }
    const isPage = pathname === '/' || pathname === '';
    const asset = isPage ? undefined : assets.get(pathname.slice(1));
    if (!isPage && !asset) return next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.statusCode = 405;
      res.setHeader('Allow', 'GET, HEAD');
      res.end();
      return;
    }
    if (asset) return sendAsset(req, res, asset);
    // The page's own files are relative to it: `/console` goes on to `/console/`.
    const original = (req.originalUrl ?? url).split('?', 1)[0]!;
    if (!original.endsWith('/')) {
      const last = original.slice(original.lastIndexOf('/') + 1);
      res.statusCode = 301;
      res.setHeader('Location', `./${last}/`);
      res.end();
      return;
    }
    void sendPage(resolved, who, req, res);
  };
  return router as unknown as RequestHandler;
}

