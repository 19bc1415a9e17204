/**
 * @module hash-secret
 * bcrypt hashing of client secrets. bcrypt reads only 72 bytes and stops at a NUL byte, so it is fed
 * a fixed-length SHA-256 digest of the secret (44 base64 characters), never the raw value.
 */
import { createHash } from 'node:crypto';
import bcrypt from 'bcrypt';

function prehash(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64');
}

/**
 * Hashes a secret for storage.
 * @example
 * ```ts
 * const hash = await hashSecret(value, 10)
 * ```
 */
export function hashSecret(value: string, rounds: number): Promise<string> {
  return bcrypt.hash(prehash(value), rounds);
}

/**
 * Compares a presented secret with a stored hash, in bcrypt's constant time.
 * @example
 * ```ts
 * const presented = clientSecret
 * const matches = await verifySecretHash(presented, account.secrets[0]!.hash)
 * ```
 */
export async function verifySecretHash(value: string, hash: string): Promise<boolean> {
  try {
    return await bcrypt.compare(prehash(value), hash);
  } catch {
    return false;
  }
}
