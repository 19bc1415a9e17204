/**
 * @module outside-issuer
 * The outside issuer of the federated token case: an RS256 key pair (what a Kubernetes cluster signs
 * its service-account tokens with) and an HTTP server on 127.0.0.1 that serves its OpenID Connect
 * discovery document and JWK Set, nothing else. It runs inside the library server's process; the
 * library fetches its keys once, before the counted requests, and keeps them (the server sets
 * `federation.minCacheSeconds` beyond a run's length), so during the window it serves nothing.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OutsideIssuer {
  /** `http://127.0.0.1:PORT`: the issuer identifier, and where its discovery document is. */
  readonly issuer: string;
  /** The `kid` of its one key. */
  readonly kid: string;
  /** Its private key, PKCS #8 PEM, for the driver that signs its tokens. */
  readonly pkcs8: string;
}

const KID = 'bench-rs256';

/** Generates the key pair and listens on a free port of 127.0.0.1. */
export function startOutsideIssuer(): Promise<OutsideIssuer> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwks = JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: KID, alg: 'RS256', use: 'sig' }] });
  let discovery = '';
  const server = createServer((req, res) => {
    const body = req.url === '/.well-known/openid-configuration' ? discovery : req.url === '/jwks' ? jwks : undefined;
    res.statusCode = body === undefined ? 404 : 200;
    res.setHeader('content-type', 'application/json');
    res.end(body ?? '{}');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      discovery = JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks`, response_types_supported: ['id_token'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'] });
      resolve({ issuer, kid: KID, pkcs8: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() });
    });
  });
}
