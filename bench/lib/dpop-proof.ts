/**
 * @module dpop-proof
 * DPoP proofs (RFC 9449 §4.2) for the bench's client side: an ES256 key pair, and a fresh proof for
 * each request (a random UUID as `jti`, so every proof has the same length), with the access token's
 * hash. Signed by the driver process, whose instructions are not counted.
 */
import { createHash, createPrivateKey, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';

/** A DPoP client: its key and the request its proofs are for. */
export interface DpopClient {
  /** PKCS #8 PEM of the EC P-256 private key. */
  readonly pkcs8: string;
  /** The public key as a JWK (the proof header's `jwk`). */
  readonly jwk: Readonly<Record<string, string>>;
  readonly htm: 'GET' | 'POST';
  readonly htu: string;
  /** The access token sent with the proofs (`ath`), for resource requests. */
  readonly accessToken?: string;
}

const b64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');
const keys = new Map<string, KeyObject>();

/** A new ES256 key pair, as a client creates once per process. */
export function newDpopKey(): Pick<DpopClient, 'pkcs8' | 'jwk'> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
  return { pkcs8: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), jwk: { kty: kty!, crv: crv!, x: x!, y: y! } };
}

/** A fresh proof for the client's request. */
export function dpopProof(client: DpopClient): string {
  let key = keys.get(client.pkcs8);
  if (!key) keys.set(client.pkcs8, (key = createPrivateKey(client.pkcs8)));
  const header = b64url(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk: client.jwk }));
  const ath = client.accessToken === undefined ? undefined : createHash('sha256').update(client.accessToken).digest('base64url');
  const claims = b64url(JSON.stringify({ jti: randomUUID(), htm: client.htm, htu: client.htu, iat: Math.floor(Date.now() / 1000), ...(ath && { ath }) }));
  return `${header}.${claims}.${b64url(sign('sha256', Buffer.from(`${header}.${claims}`), { key, dsaEncoding: 'ieee-p1363' }))}`;
}
