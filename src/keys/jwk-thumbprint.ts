/**
 * @module jwk-thumbprint
 * The one RFC 7638 JWK thumbprint of this library (SHA-256, base64url), for the public keys it
 * accepts: EC, RSA and OKP (Ed25519, RFC 8037 §2). Synchronous, because the signing keyring derives
 * its key IDs while options are resolved, and `resolveConfig()` is synchronous; it gives the same
 * value as jose's `calculateJwkThumbprint(jwk, 'sha256')`. Framework-free.
 */
import { createHash } from 'node:crypto';

/** The public JWK members a thumbprint may read (Node's `JsonWebKey` and `PublicKeyJwk` both fit). */
export interface ThumbprintJwk {
  readonly kty?: string | undefined;
  readonly crv?: string | undefined;
  readonly x?: string | undefined;
  readonly y?: string | undefined;
  readonly e?: string | undefined;
  readonly n?: string | undefined;
}

/**
 * RFC 7638 §3: the key type's required members, in lexicographic order, as JSON without whitespace,
 * hashed with SHA-256 and base64url-encoded.
 * @throws {TypeError} a key type other than EC, RSA or OKP, or a required member missing
 * @example
 * ```ts
 * // RFC 7638 §3.1
 * jwkThumbprint({ kty: 'RSA', e: 'AQAB', n: '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4...' })
 * ```
 */
export function jwkThumbprint(jwk: ThumbprintJwk): string {
  let members: Record<string, string | undefined>;
  if (jwk.kty === 'EC') members = { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y };
  else if (jwk.kty === 'RSA') members = { e: jwk.e, kty: jwk.kty, n: jwk.n };
  else if (jwk.kty === 'OKP') members = { crv: jwk.crv, kty: jwk.kty, x: jwk.x };
  else throw new TypeError('A JWK thumbprint needs an EC, RSA or OKP key');
  for (const [name, value] of Object.entries(members)) {
    if (typeof value !== 'string' || value === '') throw new TypeError(`A JWK thumbprint needs the "${name}" member`);
  }
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}
