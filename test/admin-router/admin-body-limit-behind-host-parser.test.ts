/**
 * docs/admin-api.md: the router refuses a body over 16 KiB with 413 `payload-too-large`, with or
 * without the host's own express.json() before it, also when the body comes in chunks without a
 * Content-Length (the host's parser, whose own limit is larger, has read it by then).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createAdminRouterApp } from '../helpers/admin-router-app.js';

/** POSTs a JSON body in two chunks (Transfer-Encoding: chunked, no Content-Length). */
function postChunked(port: number, path: string, body: string): Promise<{ status: number; type: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { port, path, method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer operator' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], text }));
      },
    );
    req.on('error', reject);
    req.write(body.slice(0, 10));
    req.end(body.slice(10));
  });
}

describe.each([5, 4] as const)('admin router body limit on Express %i', (version) => {
  it.each([false, true])('answers 413 to a chunked body over 16 KiB (host parsers: %s), registering nothing', async (hostParsers) => {
    const { app, admin } = createAdminRouterApp({ express: version, hostParsers });
    const { clientId } = await admin.createAccount({ name: 'billing-sync' });
    const server = app.listen(0);
    try {
      await new Promise((ready) => server.once('listening', ready));
      const { port } = server.address() as AddressInfo;
      // Valid as far as the schema goes: a JWK object may carry members of its own.
      const body = JSON.stringify({ publicKey: { kty: 'EC', crv: 'P-256', x: 'a', y: 'b', note: 'z'.repeat(20 * 1024) } });
      const res = await postChunked(port, `/admin/service-accounts/${clientId}/keys`, body);
      expect(res.status).toBe(413);
      expect(res.type).toBe('application/problem+json');
      expect(JSON.parse(res.text)).toMatchObject({ status: 413, type: expect.stringMatching(/#admin-payload-too-large$/) });
      expect((await admin.getAccount(clientId))?.keys).toEqual([]);
    } finally {
      await new Promise((closed) => server.close(closed));
    }
  });
});
