/**
 * The example's HTTP server, with time limits that suit machine-to-machine clients (docs/deployment.md,
 * "HTTP server time limits"). Node's defaults let a client hold a connection for about 5 minutes by
 * sending its body a byte at a time (`requestTimeout` 300 s, checked every 30 s): a few hundred such
 * clients would hold every socket the host can open. A token request is a few hundred bytes, so:
 *
 * - `headersTimeout` 10 s: the request line and headers must have arrived by then;
 * - `requestTimeout` 15 s: the whole request, body included (a JSON body of /api/jobs is 16 KB at most);
 * - `keepAliveTimeout` 5 s: how long an idle keep-alive connection is kept; clients are told
 *   `Keep-Alive: timeout=5`, and Node closes the connection about a second after the 5 s, so that a
 *   client that honours the header closes it first (behind a load balancer, set it above the
 *   balancer's own idle timeout, such as 65 s behind one that waits 60 s);
 * - `connectionsCheckingInterval` 1 s: how often Node looks for requests past those limits, so a
 *   trickled request is answered 408 and closed within about 16 s, not 310.
 */
import { createServer, type Server } from 'node:http';

/** The limits, in milliseconds. */
export interface HttpTimeouts {
  readonly headersTimeout: number;
  readonly requestTimeout: number;
  readonly keepAliveTimeout: number;
  readonly connectionsCheckingInterval: number;
}

/** The example server's limits (docs/deployment.md). */
export const HTTP_TIMEOUTS: HttpTimeouts = Object.freeze({
  headersTimeout: 10_000,
  requestTimeout: 15_000,
  keepAliveTimeout: 5_000,
  connectionsCheckingInterval: 1_000,
});

/** An HTTP server with `timeouts` (the example's by default); the app is attached as a 'request' listener. */
export function createHttpServer(timeouts: HttpTimeouts = HTTP_TIMEOUTS): Server {
  const { headersTimeout, requestTimeout, keepAliveTimeout, connectionsCheckingInterval } = timeouts;
  const server = createServer({ headersTimeout, requestTimeout, connectionsCheckingInterval });
  server.keepAliveTimeout = keepAliveTimeout;
  return server;
}
