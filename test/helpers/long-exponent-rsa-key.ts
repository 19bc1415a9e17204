/**
 * An RSA public key as JWK members whose public exponent is one bit shorter than its 3072-bit modulus:
 * valid by RFC 8017 §3.1, but a verify with it costs a modular exponentiation by that exponent, over a
 * hundred times a usual check's work. For tests that such a key is refused before any signature check.
 * The modulus is random (no signature ever verifies with this key, so it need not be a product of primes).
 */
import { randomBytes } from 'node:crypto';

export function longExponentRsaKey(): { readonly n: string; readonly e: string } {
  const modulus = randomBytes(384);
  modulus[0]! |= 0x80; // 3072 bits exactly
  modulus[383]! |= 1;
  const exponent = Buffer.from(modulus);
  exponent[0] = (exponent[0]! >> 1) | 0x40; // one bit shorter than the modulus
  return { n: modulus.toString('base64url'), e: exponent.toString('base64url') };
}
