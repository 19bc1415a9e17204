/**
 * @module key-tries
 * The bounded key-try loop, the one home of how many keys a signed token costs: key-pair assertions
 * and outside issuers' tokens alike are tried on a few candidate keys at most
 * ({@link tryCandidateKeys}, {@link MAX_CANDIDATE_KEYS}), however many keys their signer holds, and a
 * token without `kid` is refused untried when more keys than that suit its algorithm. An outside
 * token checked for several federated credentials shares one budget across all their JWK Set URLs
 * ({@link TokenKeyTries}). Framework-free.
 */
import { errors } from 'jose';
import type { KeyObject } from 'node:crypto';

/**
 * The most keys tried on one token. A token without `kid` is refused without any signature check
 * when more keys than this match its algorithm (a signer with that many keys must name one in `kid`).
 *
 * @example
 * ```ts
 * const liveKeysOfItsType = (account.keys ?? []).filter((key) => key.revokedAt === null && key.publicKey.kty === 'EC')
 * const refusedWithoutKid = liveKeysOfItsType.length > MAX_CANDIDATE_KEYS
 * ```
 */
export const MAX_CANDIDATE_KEYS = 3;

/**
 * What one key said of a token: it verified the token (`verified`, with what the caller made of it);
 * it did not make the signature (`'other_key'`: the next candidate is tried); or it made the signature
 * but the token does not hold (`'refused'`: no other key is tried, none could make it hold).
 */
export type KeyAttempt<R> = { readonly verified: R } | 'other_key' | 'refused';

/** Which keys may be tried on a token, and in which order. */
export interface CandidateRules<K> {
  /** The token's `kid` header parameter, as read (a key ID only when it is a string). */
  readonly kid: unknown;
  /** Whether `key` is the one `kid` names. */
  named(key: K, kid: string): boolean;
  /**
   * When `kid` names none of the keys: `true` tries every key (a client may name its key by an ID of
   * its own); `false` tries none (an issuer's token names a key the cached set does not hold).
   */
  readonly unnamedFallsBack: boolean;
  /**
   * Whether a key counts toward {@link MAX_CANDIDATE_KEYS} (by default every key). Keys that do not
   * count (revoked ones, tried only to tell why a token is refused) come after those that do, and are
   * tried while the budget lasts.
   */
  counts?(key: K): boolean;
}

/**
 * What trying the candidate keys gave: the key that verified the token and the caller's result, or
 * why not: `no_key` (no candidate), `too_many_keys` (more candidates than allowed: none was tried), or
 * `not_verified` (the candidates were tried; `signed` says whether one of them made the signature).
 */
export type CandidateOutcome<K, R> =
  | { readonly key: K; readonly verified: R }
  | { readonly failure: 'no_key' | 'too_many_keys' }
  | { readonly failure: 'not_verified'; readonly signed: boolean };

/**
 * The bounded key-try loop, for key-pair assertions and outside issuers' tokens alike: tries `keys` on
 * a token under {@link CandidateRules}, calling `attempt` once per key tried and never more than
 * {@link MAX_CANDIDATE_KEYS} times. The keys tried are those its `kid` names (when it names any), else
 * every key; when more than {@link MAX_CANDIDATE_KEYS} would count, none is tried. A key that made the
 * signature ends the search, whether the claims hold or not. `keys` are those whose type suits the
 * token's algorithm; the caller filters them first.
 *
 * @example
 * ```ts
 * import type { KeyRecord } from '../store/account-store.js'
 *
 * declare const kid: unknown // the token's `kid` header parameter
 * declare function verifies(key: KeyRecord): Promise<boolean> // one signature check
 * const outcome = await tryCandidateKeys(account.keys ?? [], { kid, named: (key, id) => key.id === id, unnamedFallsBack: true }, async (key) =>
 *   (await verifies(key)) ? { verified: key.id } : 'other_key')
 * if ('key' in outcome) console.log(`signed by ${outcome.verified}`)
 * ```
 */
export async function tryCandidateKeys<K, R>(keys: readonly K[], rules: CandidateRules<K>, attempt: (key: K) => Promise<KeyAttempt<R>>): Promise<CandidateOutcome<K, R>> {
  const { kid } = rules;
  const named = typeof kid === 'string' ? keys.filter((key) => rules.named(key, kid)) : [];
  const pool = named.length > 0 || (typeof kid === 'string' && !rules.unnamedFallsBack) ? named : keys;
  const counted = rules.counts === undefined ? pool : pool.filter((key) => rules.counts!(key));
  if (counted.length > MAX_CANDIDATE_KEYS) return { failure: 'too_many_keys' };
  const rest = rules.counts === undefined ? [] : pool.filter((key) => !rules.counts!(key));
  const candidates = [...counted, ...rest].slice(0, MAX_CANDIDATE_KEYS);
  if (candidates.length === 0) return { failure: 'no_key' };
  for (const key of candidates) {
    const outcome = await attempt(key);
    if (outcome === 'refused') return { failure: 'not_verified', signed: true };
    if (outcome !== 'other_key') return { key, verified: outcome.verified };
  }
  return { failure: 'not_verified', signed: false };
}

/**
 * What an error of jose's `jwtVerify` with one key says of that key: `'refused'` when the key made the
 * signature and a claim failed (the signature is checked before the claims), else `'other_key'`.
 *
 * @example
 * ```ts
 * import type { KeyObject } from 'node:crypto'
 * import { jwtVerify, type JWTVerifyResult } from 'jose'
 *
 * const attempt = (key: KeyObject): Promise<KeyAttempt<JWTVerifyResult>> =>
 *   jwtVerify(token, key, { issuer }).then((result) => ({ verified: result }), keyAttemptOf)
 * ```
 */
export function keyAttemptOf(error: unknown): 'other_key' | 'refused' {
  return error instanceof errors.JWTClaimValidationFailed || error instanceof errors.JWTExpired || error instanceof errors.JWTInvalid ? 'refused' : 'other_key';
}

/**
 * The keys tried on one outside token, shared by every credential it is checked for (an account may
 * hold several for one issuer and subject, each with its own audience or JWK Set URL): a key that
 * did not make the signature for one credential is not checked again for another, and, whatever the
 * number of credentials and key sets, at most `MAX_CANDIDATE_KEYS` keys are found not to have made
 * it (twice that once the issuer's keys were fetched again). A key that made the signature is checked
 * again for each credential, whose claims differ: a few at most.
 *
 * @example
 * ```ts
 * const tries = new TokenKeyTries() // one per token, passed to verifyIssuerToken for each of its credentials
 * ```
 */
export class TokenKeyTries {
  readonly #unsigned = new WeakSet<KeyObject>();
  #unsignedCount = 0;
  #allowed = MAX_CANDIDATE_KEYS;

  /** Whether `key` may be checked on the token: not already found not to have made the signature, and within the bound. */
  mayTry(key: KeyObject): boolean {
    return !this.#unsigned.has(key) && this.#unsignedCount < this.#allowed;
  }

  /** `key` did not make the token's signature. */
  unsigned(key: KeyObject): void {
    if (this.#unsigned.has(key)) return;
    this.#unsigned.add(key);
    this.#unsignedCount++;
  }

  /** The issuer's keys were fetched again for this token: as many more keys may be tried. */
  refetched(): void {
    this.#allowed = 2 * MAX_CANDIDATE_KEYS;
  }
}
