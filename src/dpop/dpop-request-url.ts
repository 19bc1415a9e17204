/**
 * @module dpop-request-url
 * The URL a DPoP proof's `htu` is compared with (RFC 9449 §4.3 step 9): the origin the client
 * addressed (the `dpop.origins` option, else the request's protocol and host as Express's `trust
 * proxy` setting resolves them), the path it requested (`req.originalUrl`), through the optional
 * `dpop.requestUrl` hook; both sides normalised as RFC 3986 §6.2.2 (case, percent-encoding, dot
 * segments) and §6.2.3 (default port, empty path) say, without query and fragment. Works on Express 4
 * and 5 alike (it reads only `req.protocol`, the app's `trust proxy fn` and headers).
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { ResolvedDpopConfig } from './dpop-options.js';

/** A Host value: a registered name or IPv4 address, or a bracketed IPv6 address, with an optional port. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
const UNRESERVED = /^[A-Za-z0-9._~-]$/;
/**
 * A path that normalising would rewrite but Express routes as written: a dot segment (`.` or `..`, also
 * percent-encoded), a backslash (WHATWG URL reads `\` as `/` in http(s) URLs), or a percent-encoded
 * unreserved character (RFC 3986 §6.2.2.2 decodes it; Express matches routes on the path undecoded, so
 * `/a/pr%65view` reaches `/a/:id`, not `/a/preview`). Normalised, such a path names another URL than
 * the route that answers it, so it matches no proof.
 */
const PATH_REWRITTEN_BY_PARSING = /\\|(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)|%(?:[46][1-9a-f]|[57][0-9a]|3[0-9]|2[de]|5f|7e)/i;

/** RFC 3986 §6.2.2.2: percent-encodings in upper case, unreserved characters decoded. */
function normalizePercentEncoding(path: string): string {
  return path.includes('%')
    ? path.replace(/%[0-9A-Fa-f]{2}/g, (triplet) => {
        const char = String.fromCharCode(parseInt(triplet.slice(1), 16));
        return UNRESERVED.test(char) ? char : triplet.toUpperCase();
      })
    : path;
}

/**
 * An http(s) URL normalised for comparison, without query and fragment; `undefined` when it is not
 * one. WHATWG URL parsing lower-cases scheme and host, drops the default port, removes dot segments
 * and makes an empty path `/`; percent-encodings are normalised here.
 *
 * @example
 * ```ts
 * normalizeHtu('HTTPS://API.example.com:443/a/./b/%7euser?x=1') // 'https://api.example.com/a/b/~user'
 * ```
 */
export function normalizeHtu(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  return `${url.origin}${normalizePercentEncoding(url.pathname)}`;
}

type ExpressLikeRequest = IncomingMessage & {
  readonly protocol?: unknown;
  readonly originalUrl?: unknown;
  readonly app?: { get(name: string): unknown };
};

/** The origin the request was sent to, as Express's `trust proxy` setting resolves it; `undefined` for a malformed Host. */
function requestOrigin(req: ExpressLikeRequest): string | undefined {
  const own = (req.socket as TLSSocket | undefined)?.encrypted ? 'https' : 'http';
  // Without X-Forwarded-Proto, Express's req.protocol is the socket's whatever `trust proxy` says: skip its getter.
  // Node's header object, read once (`req.headers` is a getter).
  const headers = req.headers;
  const protocol = headers['x-forwarded-proto'] !== undefined && typeof req.protocol === 'string' ? req.protocol : own;
  let host = headers.host;
  // As Express 5's req.host: X-Forwarded-Host only from a trusted proxy, its first value.
  const forwarded = headers['x-forwarded-host'];
  if (typeof forwarded === 'string' && forwarded !== '') {
    const trust = typeof req.app?.get === 'function' ? req.app.get('trust proxy fn') : undefined;
    if (typeof trust === 'function' && trust(req.socket?.remoteAddress, 0) === true) host = forwarded.split(',')[0]!.trim();
  }
  // A malformed Host must never make a proof for another URL match (express-oauth2-jwt-bearer 1.9.1).
  if (host === undefined || !isHost(host)) return undefined;
  return `${protocol}://${host}`;
}

/** The last Host value found well-formed: a server is mostly addressed by one name. */
let lastHost = '';

function isHost(host: string): boolean {
  if (host === lastHost) return true;
  if (!HOST.test(host)) return false;
  lastHost = host;
  return true;
}

/** The request's path as the client sent it (before any router stripped a mount path), without query. */
function requestPath(req: ExpressLikeRequest): string {
  const url = typeof req.originalUrl === 'string' ? req.originalUrl : (req.url ?? '/');
  // Up to the first '?' or '#': two string searches cost less than a regular expression's.
  const query = url.indexOf('?');
  const fragment = url.indexOf('#');
  const end = query < 0 ? fragment : fragment < 0 ? query : Math.min(query, fragment);
  return end < 0 ? url : url.slice(0, end);
}

/**
 * Whether a proof's `htu` names the URL of `req` (see the module description).
 *
 * @example
 * ```ts
 * declare const req: import('node:http').IncomingMessage
 * htuMatches(req, 'https://api.example.com/api/whoami', { origins: ['https://api.example.com'], requestUrl: undefined })
 * ```
 */
export function htuMatches(req: IncomingMessage, htu: string, settings: Pick<ResolvedDpopConfig, 'origins' | 'requestUrl'>): boolean {
  const path = requestPath(req);
  // RFC 9449 §11.1: a proof for /a must not reach the handler of /b/../a or /%61 (Express neither removes dot segments nor decodes the path it routes).
  if ((path.includes('.') || path.includes('%') || path.includes('\\')) && PATH_REWRITTEN_BY_PARSING.test(path)) return false;
  // Fast path: the proof names the URL exactly as the request reached us (what clients send): equal
  // strings normalise alike, so no parsing is needed.
  if (settings.requestUrl === undefined) {
    if (settings.origins === undefined) {
      const origin = requestOrigin(req);
      if (origin === undefined) return false;
      if (htu.length === origin.length + path.length && htu.startsWith(origin) && htu.endsWith(path)) return true;
    } else {
      for (const origin of settings.origins) if (htu.length === origin.length + path.length && htu.startsWith(origin) && htu.endsWith(path)) return true;
    }
  }
  const claimed = normalizeHtu(htu);
  if (claimed === undefined) return false;
  let origin: string | undefined;
  if (settings.origins !== undefined) {
    const claimedOrigin = new URL(claimed).origin;
    origin = settings.origins.includes(claimedOrigin) ? claimedOrigin : settings.origins[0];
  } else {
    origin = requestOrigin(req);
  }
  if (origin === undefined) return false;
  let expected = `${origin}${path}`;
  if (settings.requestUrl !== undefined) expected = settings.requestUrl(req, expected);
  return normalizeHtu(expected) === claimed;
}
