/**
 * An RSA public key as JWK members whose public exponent is one bit shorter than its 3072-bit modulus:
 * valid by RFC 8017 §3.1, but a verify with it costs a modular exponentiation by that exponent, over a
 * hundred times a usual check's work. For tests that such a key is refused before any signature check.
 */
import { generateKeyPairSync } from 'node:crypto';

export function longExponentRsaKey(): { readonly n: string; readonly e: string } {
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 3072 });
  const { n } = publicKey.export({ format: 'jwk' }) as { n: string };
  const exponent = Buffer.from(n, 'base64url');
  exponent[0] = (exponent[0]! >> 1) | 0x40; // one bit shorter than the modulus
  exponent[exponent.length - 1]! |= 1; // odd
  return { n, e: exponent.toString('base64url') };
}
