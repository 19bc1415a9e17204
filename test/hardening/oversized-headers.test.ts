/**
 * Request headers around Node's limit on the request head (`http.maxHeaderSize`, 16 KB by default), at
 * the token endpoint (docs/token-endpoint.md, "Oversized request headers"). Over the limit Node answers
 * 431 itself before any middleware runs; under it, the endpoint answers as for any other header.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/create-app.js';
import { listen, tokenRequest, type LiveServer } from './helpers.js';

/** A Basic header of `size` characters whose credentials decode to "AAA…" (no colon: malformed). */
const basicOfSize = (size: number): string => `Basic ${'QUFB'.repeat(Math.ceil((size - 6) / 4))}`;

describe('oversized request headers at the token endpoint', () => {
  const t = createTestApp({ failureLimit: false });
  let server: LiveServer;
  let account: { clientId: string; secret: { value: string } };
  beforeAll(async () => {
    account = await t.sa.admin.createAccount({ name: 'oversized-headers' });
    server = await listen(t.app);
  });
  afterAll(async () => {
    await server?.close();
    await t.sa.close();
  });

  // RFC 6585 §5: "The 431 status code indicates that the server is unwilling to process the request
  // because its header fields are too large." Node sends it itself, with no body, and closes the connection.
  it("gets Node's own 431 with no body past the limit, and the server keeps serving", async () => {
    expect(http.maxHeaderSize).toBe(16 * 1024);
    const res = await tokenRequest(server, { grant_type: 'client_credentials' }, { authorization: basicOfSize(20 * 1024) });
    expect(res.status).toBe(431);
    expect(res.text).toBe('');
    expect(res.headers['content-type']).toBeUndefined();
    const next = await tokenRequest(server, { grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value });
    expect(next.status).toBe(200);
  });

  // RFC 6749 §5.2: "If the client attempted to authenticate via the "Authorization" request header
  // field, the authorization server MUST respond with an HTTP 401 ... and include the "WWW-Authenticate"
  // response header field".
  it('answers a large header under the limit itself: 401 invalid_client with the Basic challenge', async () => {
    const res = await tokenRequest(server, { grant_type: 'client_credentials' }, { authorization: basicOfSize(15 * 1024) });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Basic realm="[^"]*"$/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(JSON.parse(res.text)).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
  });
});
