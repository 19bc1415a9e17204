/**
 * @module token-post
 * One token request over a keep-alive agent, answered with its status only: what the flood case sends,
 * both for the flood of wrong secrets and for the legitimate first requests it measures.
 */
import http from 'node:http';
import { basicAuth, FORM, TOKEN_BODY } from './checks.js';
import { TOKEN_PATH } from './fixtures.js';

export interface TokenPost {
  readonly clientId: string;
  readonly secret: string;
  /** Sent as `X-Forwarded-For` (the flood server trusts the proxy): the address the library sees. */
  readonly address: string;
}

/** POSTs a client credentials request with HTTP Basic; resolves with the status, or 0 on a socket error or after `timeoutMs`. */
export function postToken(agent: http.Agent, port: number, request: TokenPost, timeoutMs: number): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: TOKEN_PATH,
        method: 'POST',
        agent,
        timeout: timeoutMs,
        headers: {
          authorization: basicAuth(request.clientId, request.secret),
          'content-type': FORM,
          'content-length': Buffer.byteLength(TOKEN_BODY),
          'x-forwarded-for': request.address,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end(TOKEN_BODY);
  });
}
