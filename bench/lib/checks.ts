/**
 * @module checks
 * Before a server is loaded it must answer correctly: the protected route admits the token with the
 * expected body and refuses a missing or forged token with 401; the token endpoint issues a token
 * response of the RFC 6749 §5.1 shape and refuses a wrong secret. A server that fails is not measured.
 */
import { assertionBody } from './assertion-body.js';
import type { LoadRequest } from './load.js';
import { deepStrictEqual } from 'node:assert';
import { PROTECTED_PATH, RESOURCE, TOKEN_PATH } from './fixtures.js';

const base = (port: number): string => `http://127.0.0.1:${port}`;

export function basicAuth(clientId: string, secret: string): string {
  // RFC 6749 App. B: form-urlencode each part before base64.
  const enc = (s: string): string => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(clientId)}:${enc(secret)}`).toString('base64')}`;
}

export const TOKEN_BODY = 'grant_type=client_credentials';
export const FORM = 'application/x-www-form-urlencoded';

async function expectStatus(response: Response, status: number | number[], what: string): Promise<unknown> {
  const text = await response.text();
  const allowed = Array.isArray(status) ? status : [status];
  if (!allowed.includes(response.status)) {
    throw new Error(`${what}: expected ${allowed.join('/')} but got ${response.status} ${text.slice(0, 300)}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${what}: body is not JSON: ${text.slice(0, 300)}`);
  }
}

/** The protected route: 200 + the resource with the token; 401 without one and with a forged one. */
export async function checkProtected(port: number, token: string, { refuses = true } = {}): Promise<void> {
  const ok = await fetch(base(port) + PROTECTED_PATH, { headers: { authorization: `Bearer ${token}` } });
  deepStrictEqual(await expectStatus(ok, 200, 'GET with a valid token'), RESOURCE);
  if (!refuses) return;
  const missing = await fetch(base(port) + PROTECTED_PATH);
  await expectStatus(missing, [400, 401], 'GET without a token');
  if (missing.status !== 401) throw new Error(`GET without a token: expected 401, got ${missing.status}`);
  const forged = `${token.slice(0, -4)}${token.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
  const bad = await fetch(base(port) + PROTECTED_PATH, { headers: { authorization: `Bearer ${forged}` } });
  await expectStatus(bad, 401, 'GET with a forged token');
}

/** The token endpoint: a token response for the client; `invalid_client` (400/401) for a wrong secret. */
export async function checkTokenEndpoint(port: number, client: { clientId: string; secret: string } | undefined): Promise<string> {
  const headers: Record<string, string> = { 'content-type': FORM };
  if (client) headers.authorization = basicAuth(client.clientId, client.secret);
  const ok = await fetch(base(port) + TOKEN_PATH, { method: 'POST', headers, body: TOKEN_BODY });
  const body = (await expectStatus(ok, 200, 'POST /oauth/token')) as Record<string, unknown>;
  if (typeof body.access_token !== 'string' || body.access_token.split('.').length !== 3) {
    throw new Error(`POST /oauth/token: access_token is not a JWT: ${JSON.stringify(body)}`);
  }
  if (typeof body.token_type !== 'string' || body.token_type.toLowerCase() !== 'bearer') {
    throw new Error(`POST /oauth/token: token_type is not Bearer: ${JSON.stringify(body)}`);
  }
  if (typeof body.expires_in !== 'number') throw new Error(`POST /oauth/token: expires_in is not a number`);
  if (client) {
    const wrong = await fetch(base(port) + TOKEN_PATH, {
      method: 'POST',
      headers: { ...headers, authorization: basicAuth(client.clientId, client.secret.slice(0, -1) + (client.secret.endsWith('A') ? 'B' : 'A')) },
      body: TOKEN_BODY,
    });
    const refused = (await expectStatus(wrong, [400, 401], 'POST /oauth/token with a wrong secret')) as Record<string, unknown>;
    if (refused.error !== 'invalid_client' && refused.error !== 'InvalidClientError') {
      throw new Error(`POST /oauth/token with a wrong secret: expected invalid_client, got ${JSON.stringify(refused)}`);
    }
  }
  return body.access_token;
}

/**
 * The token endpoint with a client that sends a client assertion (a key-pair or a federated client):
 * a token for a fresh assertion, and `invalid_client` for the same assertion sent again (a replay).
 */
export async function checkAssertionClient(port: number, load: LoadRequest): Promise<void> {
  if (!load.assertion) throw new Error('not a client assertion request');
  const body = assertionBody(load.assertion);
  const post = () => fetch(base(port) + TOKEN_PATH, { method: 'POST', headers: { 'content-type': FORM }, body });
  await expectStatus(await post(), 200, 'POST /oauth/token with a client assertion');
  await expectStatus(await post(), 401, 'POST /oauth/token with the same client assertion again');
}

/** Path of the library's introspection endpoint (RFC 7662), next to its token endpoint. */
export const INTROSPECT_PATH = TOKEN_PATH.replace(/token$/, 'introspect');

/** The introspection endpoint: `active: true` for the token, `{active: false}` for a forged one. */
export async function checkIntrospection(port: number, client: { clientId: string; secret: string }, token: string): Promise<void> {
  const ask = (value: string) =>
    fetch(base(port) + INTROSPECT_PATH, {
      method: 'POST',
      headers: { 'content-type': FORM, authorization: basicAuth(client.clientId, client.secret) },
      body: new URLSearchParams({ token: value }).toString(),
    });
  const active = (await expectStatus(await ask(token), 200, 'POST /oauth/introspect')) as Record<string, unknown>;
  if (active.active !== true) throw new Error(`POST /oauth/introspect: expected an active token, got ${JSON.stringify(active)}`);
  const forged = `${token.slice(0, -4)}${token.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
  deepStrictEqual(await expectStatus(await ask(forged), 200, 'POST /oauth/introspect with a forged token'), { active: false });
}
