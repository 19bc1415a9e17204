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
 * `Host` (`Origin: null` included), or a plain `http:` one for a request that came over HTTPS. A
 * request that carries neither, from a backend client or `curl`, is not cross-origin. Use it to
 * refuse cross-site changes on your own routes, such as a login form.
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
    const from = new URL(origin);
    if (from.host !== req.headers.host) return true;
    // RFC 6454 §4: the scheme is part of the origin. A plain-http page of the same host is another
    // origin of a request known to have come over TLS: on this socket, or so Express says (`req.protocol`,
    // which trusts a proxy's X-Forwarded-Proto only under `trust proxy`). Behind a proxy Express does
    // not trust, the request's scheme is unknown and only the host is compared.
    return from.protocol === 'http:' && arrivedOverTls(req);
  } catch {
    return true; // `Origin: null` (a sandboxed or opaque origin) and anything unparseable
  }
}

function arrivedOverTls(req: IncomingMessage): boolean {
  if ((req.socket as { encrypted?: boolean } | undefined)?.encrypted === true) return true;
  return (req as { protocol?: unknown }).protocol === 'https';
}
