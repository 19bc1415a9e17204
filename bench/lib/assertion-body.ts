/**
 * @module assertion-body
 * Token request bodies of a `private_key_jwt` client, for the bench's client side.
 */
import { createPrivateKey, randomUUID, sign, type KeyObject } from 'node:crypto';
import type { AssertionClient } from './load.js';

const b64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');
const signingKeys = new Map<string, KeyObject>();

/**
 * A token request body with a new client assertion (ES256, a random UUID as `jti`, so every body has
 * the same length): what a `private_key_jwt` client sends each time. Signed by the client side (the
 * instruction bench's driver, whose instructions are not counted).
 */
export function assertionBody(client: AssertionClient): string {
  let key = signingKeys.get(client.pkcs8);
  if (!key) signingKeys.set(client.pkcs8, (key = createPrivateKey(client.pkcs8)));
  const now = Math.floor(Date.now() / 1000);
  const header = b64url(JSON.stringify({ alg: 'ES256', typ: 'JWT' }));
  const claims = b64url(JSON.stringify({ iss: client.clientId, sub: client.clientId, aud: client.audience, iat: now, exp: now + 60, jti: randomUUID() }));
  const signature = b64url(sign('sha256', Buffer.from(`${header}.${claims}`), { key, dsaEncoding: 'ieee-p1363' }));
  return `grant_type=client_credentials&client_assertion_type=${encodeURIComponent('urn:ietf:params:oauth:client-assertion-type:jwt-bearer')}&client_assertion=${header}.${claims}.${signature}`;
}
