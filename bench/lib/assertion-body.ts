/**
 * @module assertion-body
 * Token request bodies of clients that authenticate with a signed JWT, for the bench's client side:
 * a `private_key_jwt` client's own assertion, and a Kubernetes service-account token sent by a
 * federated client.
 */
import { createPrivateKey, randomUUID, sign, type KeyObject } from 'node:crypto';
import type { ServerReady } from './fixtures.js';
import type { AssertionClient } from './load.js';

const b64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');
const signingKeys = new Map<string, KeyObject>();

/** A key-pair client's assertions (ES256, 60 seconds): it names itself as `iss` and `sub`. */
export function keyClientAssertions(client: NonNullable<ServerReady['keyClient']>, audience: string): AssertionClient {
  return {
    header: { alg: 'ES256', typ: 'JWT' },
    pkcs8: client.pkcs8,
    claims: { iss: client.clientId, sub: client.clientId, aud: audience },
    lifetime: 60,
  };
}

/**
 * A Kubernetes projected service-account token of the federated client's outside issuer (RS256 with
 * the issuer's `kid`, `aud` a list, `nbf`, the `kubernetes.io` claim, 10 minutes), for `audience`.
 */
export function kubernetesTokens(client: NonNullable<ServerReady['federatedClient']>, audience: string): AssertionClient {
  const [, , namespace, name] = client.subject.split(':');
  return {
    header: { alg: 'RS256', kid: client.kid },
    pkcs8: client.pkcs8,
    claims: {
      aud: [audience],
      iss: client.issuer,
      sub: client.subject,
      'kubernetes.io': {
        namespace,
        node: { name: 'bench-node', uid: '1f0e7c2a-4b5d-4e6f-8a9b-0c1d2e3f4a5b' },
        pod: { name: `${name}-7d9f8b6c5-x2k4q`, uid: '2a1b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d' },
        serviceaccount: { name, uid: '3b2c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e' },
      },
    },
    lifetime: 600,
    notBefore: true,
  };
}

/**
 * A token request body with a new client assertion (a random UUID as `jti`, so every body has the
 * same length), without `client_id`. Signed by the client side (the instruction bench's driver, whose
 * instructions are not counted).
 */
export function assertionBody(client: AssertionClient): string {
  let key = signingKeys.get(client.pkcs8);
  if (!key) signingKeys.set(client.pkcs8, (key = createPrivateKey(client.pkcs8)));
  const now = Math.floor(Date.now() / 1000);
  const header = b64url(JSON.stringify(client.header));
  const claims = b64url(JSON.stringify({ ...client.claims, iat: now, ...(client.notBefore && { nbf: now }), exp: now + client.lifetime, jti: randomUUID() }));
  // ES256 signatures are r‖s (RFC 7518 §3.4), not DER; RS256 ignores dsaEncoding.
  const signature = b64url(sign('sha256', Buffer.from(`${header}.${claims}`), { key, dsaEncoding: 'ieee-p1363' }));
  return `grant_type=client_credentials&client_assertion_type=${encodeURIComponent('urn:ietf:params:oauth:client-assertion-type:jwt-bearer')}&client_assertion=${header}.${claims}.${signature}`;
}
