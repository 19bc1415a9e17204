/**
 * @module cross-origin-request
 * Whether a browser marks a request as sent from another origin, written once for every route that a
 * browser's ambient credentials (a session cookie) could reach: the admin router and `requireActor()`'s
 * session path. Framework-free.
 */
import type { IncomingMessage } from 'node:http';

/**
 * Whether a browser marks the request as sent from another site or origin: Fetch Metadata
 * (`Sec-Fetch-Site` other than `same-origin` or `none`; `same-site`, a sibling subdomain, counts as
 * another origin) or, from a browser that sends none, an `Origin` whose host is not the request's
 * `Host` (`Origin: null` included). A request that carries neither, from a backend client or `curl`,
 * is not cross-origin. Use it to refuse cross-site changes on your own routes, such as a login form.
 *
 * @example
 * ```ts
 * import { isCrossOriginRequest } from 'express-service-accounts'
 *
 * app.post('/login', (req, res, next) => {
 *   if (isCrossOriginRequest(req)) return res.status(403).json({ error: 'forbidden', error_description: 'Sign in from this site only' })
 *   next()
 * })
 * ```
 */
export function isCrossOriginRequest(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string') return site !== 'same-origin' && site !== 'none';
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  try {
    return new URL(origin).host !== req.headers.host;
  } catch {
    return true; // `Origin: null` (a sandboxed or opaque origin) and anything unparseable
  }
}
