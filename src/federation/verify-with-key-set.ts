/**
 * @module verify-with-key-set
 * One verification of an outside token with one key set: which algorithms it may be signed with
 * (asymmetric ones only, whatever the caller asks), and every key matching its header tried in turn,
 * which jose 5's `jwtVerify` does not do itself. Where the key set comes from, and when it is fetched
 * again, is issuer-key-sets.ts's.
 */
import { decodeProtectedHeader, errors, jwtVerify, type JWTVerifyGetKey, type JWTVerifyOptions, type JWTVerifyResult } from 'jose';

/** The only algorithms an outside token may be signed with, whatever the caller asks: asymmetric ones. */
export const FEDERATED_ALGORITHMS: readonly string[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/**
 * The algorithms `token` may be verified with: those of `requested` (by default all) that are
 * asymmetric. `undefined` when the token's header names none of them, or cannot be read: such a
 * token could never verify, so no key is fetched for it.
 *
 * @example
 * ```ts
 * const algorithms = verifiableAlgorithms(token, ['RS256', 'HS256']) // ['RS256'], or undefined for an HS256 token
 * ```
 */
export function verifiableAlgorithms(token: string, requested?: readonly string[]): string[] | undefined {
  const algorithms = requested === undefined ? [...FEDERATED_ALGORITHMS] : requested.filter((alg) => FEDERATED_ALGORITHMS.includes(alg));
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(token).alg;
  } catch {
    return undefined;
  }
  return typeof alg === 'string' && algorithms.includes(alg) ? algorithms : undefined;
}

/**
 * What one verification with a key set gave: the verified token, or `undefined` with whether that
 * is because no key of the set matched the token's header (the issuer may have rotated its keys).
 */
export interface KeySetVerification {
  readonly result: JWTVerifyResult | undefined;
  readonly noMatchingKey: boolean;
}

/**
 * Verifies `token` with a key set. jose 5's `jwtVerify` does not try several keys itself: when more
 * than one key matches the token's header (a `kid` served twice, or no `kid`), it throws
 * `JWKSMultipleMatchingKeys`, which iterates over the candidates; the first that verifies wins.
 * Never rejects: a bad signature or claim, or a key jose cannot use, is a token that is not valid.
 *
 * @example
 * ```ts
 * import { createLocalJWKSet } from 'jose'
 *
 * const getKey = createLocalJWKSet({ keys: [] })
 * const { result, noMatchingKey } = await verifyWithKeySet(token, getKey, { issuer, algorithms: ['RS256'] })
 * if (noMatchingKey) console.log('refetch the keys: the issuer may have rotated them')
 * console.log(result?.payload.sub)
 * ```
 */
export async function verifyWithKeySet(token: string, getKey: JWTVerifyGetKey, options: JWTVerifyOptions): Promise<KeySetVerification> {
  try {
    return { result: await jwtVerify(token, getKey, options), noMatchingKey: false };
  } catch (error) {
    if (error instanceof errors.JWKSNoMatchingKey) return { result: undefined, noMatchingKey: true };
    if (error instanceof errors.JWKSMultipleMatchingKeys) {
      for await (const candidate of error) {
        try {
          return { result: await jwtVerify(token, candidate, options), noMatchingKey: false };
        } catch {
          // Not this one: the next candidate.
        }
      }
    }
    return { result: undefined, noMatchingKey: false };
  }
}
