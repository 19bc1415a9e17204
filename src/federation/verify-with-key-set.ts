/**
 * @module verify-with-key-set
 * One verification of an outside token with one key set: which algorithms it may be signed with
 * (asymmetric ones only, whatever the caller asks), and which of the set's keys are tried on it,
 * under the rule of candidate-keys.ts (a few at most: a token without `kid` is refused untried when
 * more keys than that suit its algorithm). Where the key set comes from, and when it is fetched
 * again, is issuer-key-sets.ts's.
 */
import { decodeProtectedHeader, jwtVerify, type JWTVerifyOptions, type JWTVerifyResult } from 'jose';
import { keyAttemptOf, tryCandidateKeys } from '../keys/candidate-keys.js';
import type { KeySet } from './key-set.js';

/**
 * The only algorithms an outside token may be signed with, whatever the caller asks: asymmetric ones.
 * `Ed25519` is the fully specified name of EdDSA with an Ed25519 key (RFC 9864 §2).
 */
export const FEDERATED_ALGORITHMS: readonly string[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

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
 * What one verification with a key set gave: the verified token, or `undefined` with whether the
 * issuer may have rotated its keys since the set was fetched: no key of the set has the token's
 * `kid`, or, for a token without `kid`, none of the keys tried made its signature.
 */
export interface KeySetVerification {
  readonly result: JWTVerifyResult | undefined;
  readonly mayBeRotated: boolean;
}

/**
 * Verifies `token` with a key set, trying the keys candidate-keys.ts allows: those with the token's
 * `kid`, or without one every key suiting its algorithm, when there are at most `MAX_CANDIDATE_KEYS`
 * of them; the first that verifies wins. `options.algorithms` must hold the token's algorithm (see
 * {@link verifiableAlgorithms}). Never rejects: a bad signature or claim, or a key that cannot be
 * used, is a token that is not valid. `onRefused` gets jose's error when a key made the signature but
 * a claim failed (which claim, for the audit reason).
 *
 * @example
 * ```ts
 * import { KeySet } from './key-set.js'
 *
 * const keySet = new KeySet({ keys: [] })
 * const { result, mayBeRotated } = await verifyWithKeySet(token, keySet, { issuer, algorithms: ['RS256'] })
 * if (mayBeRotated) console.log('refetch the keys: the issuer may have rotated them')
 * console.log(result?.payload.sub)
 * ```
 */
export async function verifyWithKeySet(
  token: string,
  keySet: KeySet,
  options: JWTVerifyOptions,
  onRefused?: (error: unknown) => void,
): Promise<KeySetVerification> {
  let alg: unknown;
  let kid: unknown;
  try {
    ({ alg, kid } = decodeProtectedHeader(token));
  } catch {
    return { result: undefined, mayBeRotated: false };
  }
  if (typeof alg !== 'string') return { result: undefined, mayBeRotated: false };
  const outcome = await tryCandidateKeys(keySet.keysFor(alg), { kid, named: (key, id) => key.kid === id, unnamedFallsBack: false }, async (key) => {
    const keyObject = keySet.keyObject(key);
    if (keyObject === undefined) return 'other_key';
    try {
      return { verified: await jwtVerify(token, keyObject, options) };
    } catch (error) {
      const attempt = keyAttemptOf(error);
      if (attempt === 'refused') onRefused?.(error);
      return attempt;
    }
  });
  if ('key' in outcome) return { result: outcome.verified, mayBeRotated: false };
  const mayBeRotated = outcome.failure === 'no_key' || (outcome.failure === 'not_verified' && !outcome.signed && typeof kid !== 'string');
  return { result: undefined, mayBeRotated };
}
