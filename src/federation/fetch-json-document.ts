/**
 * @module fetch-json-document
 * One GET of an outside issuer's discovery document or JWK Set, under the rules that keep a slow,
 * broken or hostile issuer from hurting the server: the URL policy (address-policy.ts: https; plain http only on a
 * loopback host and only when allowed), the addresses it may connect to (address-policy.ts too: no
 * loopback, private or link-local address unless allowed, checked on the address connected to), one
 * deadline over connecting, the headers and the body, a size limit, no redirect to another origin,
 * 200 only, and a JSON object as the body.
 *
 * A failed fetch is answered no sooner than one second after it began (or at its deadline, when that
 * is sooner), not when it fails: a refused address, a closed port, a port that resets the connection,
 * a failed TLS handshake and an error answer all take the same time, so the time of an answer does
 * not tell what is listening where. Only a server that never answers takes longer (the deadline);
 * the first token request for an issuer that is down waits one second, not the whole timeout.
 *
 * Written on node:http and node:https rather than the global `fetch`, so that no global dispatcher an
 * application installs (a proxy, a mock) changes where keys come from, and so that every outcome (a
 * document, a redirect, a failure, the byte limit, the deadline) closes the socket itself.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type Socket } from 'node:net';
import { addressProblem, checkedLookup, fetchPolicyProblem, REFUSED_ADDRESS_CODE, refusedAddressError, type AddressReach } from './address-policy.js';

/** What one fetch is allowed: the caller's resolved federation settings, in the fetch's own terms. */
export interface FetchJsonDocumentOptions {
  /** Milliseconds the whole exchange may take, redirects included: connecting, the headers, the body. */
  readonly timeout: number;
  /**
   * When the `timeout` began, in `Date.now()` milliseconds: fetches that make up one load (a
   * discovery document, then the JWK Set it names) pass the same start to share one `timeout`.
   * @default the call's start
   */
  readonly startedAt?: number;
  /** Largest body accepted, in bytes. */
  readonly maxBytes: number;
  /** Whether loopback addresses may be fetched, plain http included (tests, local development). */
  readonly allowHttpLoopback: boolean;
  /** Whether private network addresses (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) may be fetched. */
  readonly allowPrivateNetworks: boolean;
  /** The `Accept` header. @default 'application/json' */
  readonly accept?: string;
}

/** A fetched JSON document and how long its server lets it be cached. */
export interface JsonDocument {
  /** The parsed body: always a JSON object. */
  readonly body: Readonly<Record<string, unknown>>;
  /**
   * Seconds from `Cache-Control: max-age`; 0 with `no-store` or `no-cache`; `undefined` without
   * either (the caller picks its default).
   */
  readonly maxAge: number | undefined;
}

/** A same-origin redirect is followed at most this many times. */
const MAX_REDIRECTS = 2;

/**
 * The seconds a response may be cached, from its `Cache-Control` header: `no-store` and `no-cache`
 * give 0, `max-age=N` gives N, anything else `undefined`.
 *
 * @example
 * ```ts
 * cacheMaxAge('public, max-age=600') // 600
 * cacheMaxAge('no-store') // 0
 * cacheMaxAge(undefined) // undefined
 * ```
 */
export function cacheMaxAge(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  let maxAge: number | undefined;
  for (const directive of header.split(',')) {
    const [name = '', value] = directive.trim().split('=', 2);
    const key = name.trim().toLowerCase();
    if (key === 'no-store' || key === 'no-cache') return 0;
    if (key === 'max-age' && value !== undefined) {
      const seconds = /^"?(\d{1,10})"?$/.exec(value.trim())?.[1];
      if (seconds !== undefined && maxAge === undefined) maxAge = Number(seconds);
    }
  }
  return maxAge;
}

/**
 * GETs the JSON object at `url`. Throws a plain `Error` with a short message naming the URL when the
 * URL breaks the policy, its host is or resolves to an address that may not be fetched (no
 * connection is made), the server cannot be reached, takes longer than `timeout` (counted from
 * `startedAt`; no request is made once it has run out), answers anything
 * but 200 (a redirect to the same origin is followed, at most twice), sends more than `maxBytes`,
 * or a body that is not a JSON object. Once a request may have been attempted, it throws no sooner
 * than `startedAt` + 1 s (or the deadline, `startedAt` + `timeout`, when sooner), however early the
 * failure was known.
 *
 * @example
 * ```ts
 * const { body, maxAge } = await fetchJsonDocument('https://token.actions.githubusercontent.com/.well-known/openid-configuration', {
 *   timeout: 5000,
 *   maxBytes: 262144,
 *   allowHttpLoopback: false,
 *   allowPrivateNetworks: false,
 * })
 * console.log(body.jwks_uri, maxAge)
 * ```
 */
export async function fetchJsonDocument(url: string, options: FetchJsonDocumentOptions): Promise<JsonDocument> {
  const problem = fetchPolicyProblem(url, options.allowHttpLoopback);
  if (problem !== undefined) throw new Error(`${url} ${problem}`);
  const startedAt = options.startedAt ?? Date.now();
  const deadline = startedAt + options.timeout;
  if (Date.now() >= deadline) throw new Error(`${url} was not fetched: the ${options.timeout} ms were spent`);
  try {
    let current = new URL(url);
    for (let hop = 0; ; hop++) {
      const result = await getOnce(current, deadline, options, url);
      if ('body' in result) return result;
      // A redirect: only to the same origin (scheme, host and port), and only a few times.
      const next = result.location;
      if (next.origin !== current.origin) throw new Error(`${url} redirects to another host`);
      if (hop >= MAX_REDIRECTS) throw new Error(`${url} redirects too many times`);
      const nextProblem = fetchPolicyProblem(next.href, options.allowHttpLoopback);
      if (nextProblem !== undefined) throw new Error(`${url} redirects to a URL that ${nextProblem}`);
      current = next;
    }
  } catch (error) {
    // One time shape: every failure known early is answered at the same moment, so a refused address,
    // a closed port, a reset and a TLS failure cannot be told apart by when the answer comes.
    await untilDeadline(Math.min(deadline, startedAt + FAILURE_ANSWER_MS));
    throw error;
  }
}

/**
 * How long after its start a failed fetch is answered, at the soonest. One second hides the
 * milliseconds that tell a closed port from an open one, and keeps the first token request for an
 * issuer that is down from waiting the whole `fetchTimeout`.
 */
const FAILURE_ANSWER_MS = 1000;

/** Resolves at `deadline` (`Date.now()` milliseconds), at once when it has passed. */
function untilDeadline(deadline: number): Promise<void> {
  const remaining = deadline - Date.now();
  return remaining <= 0 ? Promise.resolve() : new Promise((done) => setTimeout(done, remaining));
}

/** The failure of a request that could not reach its server: one message shape for every cause. */
function unreachable(named: string, error: Error): Error {
  const code = (error as NodeJS.ErrnoException).code;
  // A refused address names itself and why (for the operator's logs): `10.1.2.3 is a private network address ...`.
  return new Error(`${named} could not be fetched: ${code === REFUSED_ADDRESS_CODE || code === undefined ? error.message : code}`);
}

/** One request: the document, a redirect to follow, or an error. */
function getOnce(url: URL, deadline: number, options: FetchJsonDocumentOptions, named: string): Promise<JsonDocument | { location: URL }> {
  return new Promise((resolve, reject) => {
    let done = false;
    let response: IncomingMessage | undefined;
    let req: ClientRequest | undefined;
    // Every outcome closes the connection: a document, a redirect (whose body is never read), a
    // failure, the size limit or the deadline. Nothing keeps reading, or holds a socket, once the
    // fetch has settled, whatever the server goes on sending.
    const finish = (error: Error | undefined, value?: JsonDocument | { location: URL }): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      response?.destroy();
      req?.destroy();
      if (error !== undefined) reject(error);
      else resolve(value!);
    };
    const remaining = Math.max(deadline - Date.now(), 0);
    const timer = setTimeout(() => finish(new Error(`${named} did not answer within ${options.timeout} ms`)), remaining);
    const reach: AddressReach = { allowLoopback: options.allowHttpLoopback, allowPrivateNetworks: options.allowPrivateNetworks };
    // A literal IP address is never looked up: it is checked here, before any connection.
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const literalProblem = isIP(host) === 0 ? undefined : addressProblem(host, reach);
    if (literalProblem !== undefined) {
      finish(unreachable(named, refusedAddressError(host, literalProblem)));
      return;
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, {
      method: 'GET',
      headers: { accept: options.accept ?? 'application/json', 'user-agent': 'express-service-accounts' },
      // A fresh connection each time: fetches are rare (cached keys), and a pooled socket would
      // outlive the deadline's bookkeeping.
      agent: false,
      // The host name is resolved once, here, and refused before any connection when it resolves to
      // an address that may not be fetched; the socket connects to exactly the addresses checked.
      lookup: checkedLookup(reach),
    });
    req = request;
    request.on('error', (error) => finish(unreachable(named, error)));
    // And the address actually connected to is checked again, whatever resolved it.
    request.on('socket', (socket: Socket) => {
      socket.once('connect', () => {
        const problem = addressProblem(socket.remoteAddress ?? '', reach);
        if (problem !== undefined) finish(unreachable(named, refusedAddressError(socket.remoteAddress ?? 'an unknown address', problem)));
      });
    });
    request.on('response', (res: IncomingMessage) => {
      response = res;
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && [301, 302, 303, 307, 308].includes(status) && typeof res.headers.location === 'string') {
        let location: URL;
        try {
          location = new URL(res.headers.location, url);
        } catch {
          finish(new Error(`${named} redirects to an invalid URL`));
          return;
        }
        finish(undefined, { location });
        return;
      }
      if (status !== 200) {
        finish(new Error(`${named} answered HTTP ${status}`));
        return;
      }
      const announced = Number(res.headers['content-length']);
      if (Number.isFinite(announced) && announced > options.maxBytes) {
        finish(new Error(`${named} is larger than ${options.maxBytes} bytes`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) {
          finish(new Error(`${named} is larger than ${options.maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', (error) => finish(new Error(`${named} could not be read: ${error.message}`)));
      res.on('close', () => {
        if (!res.complete) finish(new Error(`${named} could not be read: the connection closed early`));
      });
      res.on('end', () => {
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          finish(new Error(`${named} is not valid JSON`));
          return;
        }
        if (typeof body !== 'object' || body === null || Array.isArray(body)) {
          finish(new Error(`${named} is not a JSON object`));
          return;
        }
        const header = res.headers['cache-control'];
        finish(undefined, { body: body as Record<string, unknown>, maxAge: cacheMaxAge(Array.isArray(header) ? header.join(',') : header) });
      });
    });
    request.end();
  });
}
