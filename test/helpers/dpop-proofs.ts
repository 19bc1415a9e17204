/**
 * DPoP proofs for the HTTP tests (RFC 9449 §4.2), made with jose: a client key pair, and proofs for a
 * method and URL, with the access token's hash, a nonce, or any header or claim changed.
 */
import { createHash, createPublicKey, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK, type KeyLike } from 'jose';

export interface ProofOptions {
  readonly htm?: string;
  readonly htu: string;
  /** The access token sent with the proof: `ath` is its hash. */
  readonly accessToken?: string;
  /** Seconds since the epoch; the test clock's now by default. */
  readonly iat: number;
  readonly jti?: string;
  readonly nonce?: string;
  /** Claims to add or replace (`undefined` removes one). */
  readonly claims?: Record<string, unknown>;
  /** Header members to add or replace. */
  readonly header?: Record<string, unknown>;
}

export class DpopKey {
  private constructor(
    readonly alg: string,
    readonly privateKey: KeyLike,
    readonly publicJwk: JWK,
    readonly jkt: string,
  ) {}

  static async create(alg = 'ES256'): Promise<DpopKey> {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    return new DpopKey(alg, privateKey, publicJwk, await calculateJwkThumbprint(publicJwk, 'sha256'));
  }

  async proof(options: ProofOptions): Promise<string> {
    const claims: Record<string, unknown> = {
      htm: options.htm ?? 'POST',
      htu: options.htu,
      iat: options.iat,
      jti: options.jti ?? randomUUID(),
      ...(options.accessToken !== undefined ? { ath: createHash('sha256').update(options.accessToken).digest('base64url') } : {}),
      ...(options.nonce !== undefined ? { nonce: options.nonce } : {}),
      ...options.claims,
    };
    for (const name of Object.keys(claims)) if (claims[name] === undefined) delete claims[name];
    return new SignJWT(claims).setProtectedHeader({ typ: 'dpop+jwt', alg: this.alg, jwk: this.publicJwk, ...options.header } as never).sign(this.privateKey);
  }
}

/** The raw bytes of a public JWK's key, as an attacker would use them for an HS256 "signature" (key confusion). */
export function publicKeyPem(jwk: JWK): string {
  return createPublicKey({ key: jwk as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();
}

/** An unsigned JWT (`alg: none`) with the given header and claims. */
export function unsignedJwt(header: Record<string, unknown>, claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part(header)}.${part(claims)}.`;
}
