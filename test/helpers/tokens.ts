/**
 * Token helpers for the HTTP tests: RFC 6749 App. B form encoding for HTTP Basic, a token request
 * that must succeed, a JSON request with repeated credentials, and hand-made JWTs for forged / tampered / wrong-claim tokens.
 */
import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { expect } from 'vitest';
import type { Express } from 'express';
import type { CreatedAccount } from '../../src/index.js';
import { TEST_HS256_KEY, TEST_ISSUER } from './create-app.js';

/** application/x-www-form-urlencoded encoding of one value (RFC 6749 Appendix B): space is '+'. */
export function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+').replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * A JSON token request that names `client_id` and `client_secret` twice, `first`'s then `last`'s: a
 * repeated parameter (RFC 6749 §3.2) that JSON.parse would silently resolve to `last`.
 */
export function duplicateCredentialsJson(first: CreatedAccount, last: CreatedAccount): string {
  return (
    `{"grant_type":"client_credentials","client_id":"${first.clientId}","client_secret":"${first.secret.value}",` +
    `"client_id":"${last.clientId}","client_secret":"${last.secret.value}"}`
  );
}

/** `Authorization: Basic base64(urlencode(id) ":" urlencode(secret))` (RFC 6749 §2.3.1). */
export function basicHeader(clientId: string, secret: string, encode = true): string {
  const pair = encode ? `${formEncode(clientId)}:${formEncode(secret)}` : `${clientId}:${secret}`;
  return `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
}

/** POSTs a client_credentials request with the credentials in the form body and returns the access token. */
export async function issueToken(app: Express, clientId: string, secret: string, scope?: string): Promise<string> {
  const res = await request(app)
    .post('/oauth/token')
    .type('form')
    .send({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret, ...(scope !== undefined ? { scope } : {}) });
  expect(res.status, res.text).toBe(200);
  return (res.body as { access_token: string }).access_token;
}

/** The claims our tokens carry, for hand-signed variants. */
export function claimsFor(clientId: string, secretId: string, nowSeconds: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss: TEST_ISSUER,
    sub: clientId,
    client_id: clientId,
    aud: TEST_ISSUER,
    iat: nowSeconds,
    exp: nowSeconds + 3600,
    jti: randomUUID(),
    secret_id: secretId,
    ...overrides,
  };
}

/** Signs claims with HS256 directly with jsonwebtoken (defaults: the test app's key, typ at+jwt). */
export function signHs256(claims: Record<string, unknown>, kid: string, key: string = TEST_HS256_KEY): string {
  return jwt.sign(claims, key, { algorithm: 'HS256', header: { alg: 'HS256', typ: 'at+jwt', kid } });
}

/** An unsigned JWT (`alg: none`), built by hand. */
export function unsignedToken(claims: Record<string, unknown>, kid: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'at+jwt', kid })}.${part(claims)}.`;
}

/** Decodes a JWT's header and payload without verifying. */
export function decodeToken(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const decoded = jwt.decode(token, { complete: true });
  if (!decoded || typeof decoded.payload === 'string') throw new Error('not a JWT');
  return { header: decoded.header as unknown as Record<string, unknown>, payload: decoded.payload as Record<string, unknown> };
}

/** The same value with its last character replaced by a different one (never equal to the input). */
export function withLastCharChanged(value: string): string {
  return value.slice(0, -1) + (value.endsWith('A') ? 'B' : 'A');
}
