/**
 * @module assertion-rules
 * The rules every client assertion shares, key-pair assertion and outside issuer's token alike,
 * beyond what `jose` checks (the signature, `exp` passed, `nbf` reached): it is made out to one
 * audience only, it may not live longer than allowed,
 * it may not claim to be issued in the future, and its `jti` is used once, on every instance sharing
 * the store, kept until the assertion could no longer be accepted (a stolen one is of use once at
 * most, and for no longer than its lifetime). A refusal names the rule that
 * failed, for the audit only (the client is answered one `invalid_client` whatever the rule, RFC 7523
 * §3.2). And the keys tried on it are few (the bounded key-try loop, {@link tryCandidateKeys}): a
 * token costs a few signature checks at most, however many keys its signer holds. Framework-free.
 */
import { errors, type JWTPayload } from 'jose';
import type { AssertionRefusal } from '../errors.js';
import type { TokenEndpointAudienceSetting } from '../token-endpoint-audience.js';
import type { CallObserver } from '../runtime/call-store.js';
import { callStore } from '../runtime/call-store.js';
import type { AccountStore } from '../store/account-store.js';

/** What the time rules need: now, the clock tolerance and the longest lifetime accepted, in seconds. */
export interface AssertionTimeRules {
  readonly now: Date;
  readonly clockTolerance: number;
  readonly maxLifetime: number;
}

/**
 * Whether an assertion's `exp` lies at most `maxLifetime` seconds ahead and its `iat`, when present,
 * not in the future (each with the clock tolerance: `maxLifetime + clockTolerance` in all, for a
 * signer whose clock runs ahead; the documented bound). `exp` is required and checked by `jose` first.
 *
 * @example
 * ```ts
 * const now = new Date()
 * const seconds = Math.floor(now.getTime() / 1000)
 * withinAssertionTimes({ exp: seconds + 600, iat: seconds }, { now, clockTolerance: 5, maxLifetime: 3600 }) // true
 * withinAssertionTimes({ exp: seconds + 7200 }, { now, clockTolerance: 5, maxLifetime: 3600 }) // false
 * ```
 */
export function withinAssertionTimes(claims: { readonly exp?: number; readonly iat?: number }, rules: AssertionTimeRules): boolean {
  const now = rules.now.getTime() / 1000;
  if (typeof claims.exp !== 'number' || claims.exp > now + rules.maxLifetime + rules.clockTolerance) return false;
  return claims.iat === undefined || claims.iat <= now + rules.clockTolerance;
}

/**
 * Whether `aud` names exactly one audience, `expected`: a string, or a list of that one string. An
 * assertion made out to other parties too could be replayed here by any of them.
 *
 * @example
 * ```ts
 * hasSoleAudience(['https://api.example.com'], 'https://api.example.com') // true
 * hasSoleAudience(['https://api.example.com', 'https://other.example'], 'https://api.example.com') // false
 * ```
 */
export function hasSoleAudience(aud: unknown, expected: string): boolean {
  const audience = Array.isArray(aud) && aud.length === 1 ? aud[0] : aud;
  return audience === expected;
}

/**
 * The token endpoint URL accepted as an audience on a request to the router mounted at `mountPath`
 * (Express's `req.baseUrl`, such as `/oauth`), or `undefined` when the setting is off. `issuerOrigin`
 * is the issuer identifier's origin (`new URL(issuer).origin`), worked out once: `true` is refused
 * for an issuer with a path, so the origin is all of it.
 *
 * @example
 * ```ts
 * tokenEndpointAudienceOf(true, 'https://api.example.com', '/oauth') // 'https://api.example.com/oauth/token'
 * tokenEndpointAudienceOf('https://example.com/auth/oauth/token', 'https://api.example.com', '/oauth') // 'https://example.com/auth/oauth/token'
 * ```
 */
export function tokenEndpointAudienceOf(setting: TokenEndpointAudienceSetting, issuerOrigin: string, mountPath: string | undefined): string | undefined {
  if (setting === false) return undefined;
  if (typeof setting === 'string') return setting;
  return `${issuerOrigin}${mountPath ?? ''}/token`;
}

/**
 * Whether a JWT's `typ` header types it explicitly as a client authentication assertion:
 * `client-authentication+jwt`, with or without the `application/` prefix, in any case (RFC 7515 §4.1.9).
 *
 * @example
 * ```ts
 * isExplicitlyTyped('client-authentication+jwt') // true
 * isExplicitlyTyped('JWT') // false
 * ```
 */
export function isExplicitlyTyped(typ: unknown): boolean {
  if (typeof typ !== 'string') return false;
  const type = typ.toLowerCase();
  return type === 'client-authentication+jwt' || type === 'application/client-authentication+jwt';
}

/**
 * Whether `aud` (a string or a one-element list) is an audience a key-pair assertion may carry: the
 * issuer identifier; or `tokenEndpoint`, when given, for an assertion not explicitly typed (a typed
 * one was made by a client that knows the issuer is the audience).
 *
 * @example
 * ```ts
 * const rules = { issuer: 'https://api.example.com', tokenEndpoint: 'https://api.example.com/oauth/token' }
 * isAcceptedAudience(['https://api.example.com'], 'JWT', rules) // true
 * isAcceptedAudience('https://api.example.com/oauth/token', undefined, rules) // true
 * isAcceptedAudience('https://api.example.com/oauth/token', 'client-authentication+jwt', rules) // false
 * ```
 */
export function isAcceptedAudience(aud: unknown, typ: unknown, rules: { readonly issuer: string; readonly tokenEndpoint?: string | undefined }): boolean {
  if (hasSoleAudience(aud, rules.issuer)) return true;
  return rules.tokenEndpoint !== undefined && hasSoleAudience(aud, rules.tokenEndpoint) && !isExplicitlyTyped(typ);
}

/** Whether a `jti` claim, when `required` or present, is a non-empty string. */
export function hasUsableJti(jti: unknown, required: boolean): boolean {
  if (jti === undefined) return !required;
  return typeof jti === 'string' && jti.length > 0;
}

/** Where single use is recorded: the store's `consumeAssertionId`, within its timeout. */
export interface AssertionReplayParts {
  readonly store: Pick<AccountStore, 'consumeAssertionId'>;
  readonly storeTimeout: number;
  readonly storeCalls?: CallObserver;
  readonly clockTolerance: number;
}

/**
 * Records a verified assertion's `jti` under `namespace` (the client ID of a key-pair assertion, the
 * issuer of an outside token) until it could no longer be accepted (`exp` plus the clock tolerance):
 * `true` the first time, `false` for a replay on this instance or any other sharing the store.
 * Rejects (503) when the store cannot be reached. A store that cannot record it accepts no assertion.
 *
 * @example
 * ```ts
 * declare const parts: AssertionReplayParts
 * declare const payload: { jti: string; exp: number } // a verified assertion's claims
 * if (!(await firstUse(parts, clientId, payload, new Date()))) console.log('replayed')
 * ```
 */
export function firstUse(parts: AssertionReplayParts, namespace: string, payload: JWTPayload, now: Date): Promise<boolean> {
  const consume = parts.store.consumeAssertionId?.bind(parts.store);
  if (!consume) return Promise.resolve(false);
  const expiresAt = new Date(((payload.exp as number) + parts.clockTolerance) * 1000);
  return callStore(() => consume(namespace, payload.jti as string, expiresAt, now), parts.storeTimeout, 'consumeAssertionId', parts.storeCalls);
}

/**
 * What an error of jose's `jwtVerify`, thrown after the signature verified, says was wrong with the
 * claims: `exp` passed, `nbf` not reached, `aud` not the one required (for an outside token, whose
 * audience jose checks), anything else (a missing `exp` or `jti`, another `iss` or `sub`, a payload
 * that is no JSON object) `invalid_assertion`.
 *
 * @example
 * ```ts
 * import { errors } from 'jose'
 *
 * claimRefusalOf(new errors.JWTExpired('"exp" claim timestamp check failed', {})) // 'expired_assertion'
 * ```
 */
export function claimRefusalOf(error: unknown): AssertionRefusal {
  if (error instanceof errors.JWTExpired) return 'expired_assertion';
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'nbf') return 'assertion_not_yet_valid';
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'aud') return 'wrong_audience';
  return 'invalid_assertion';
}

/**
 * The time rule ({@link withinAssertionTimes}) an assertion breaks, if any: `exp` too far ahead
 * (`assertion_lifetime_too_long`), or `iat` in the future (`assertion_not_yet_valid`).
 *
 * @example
 * ```ts
 * const now = new Date()
 * const seconds = Math.floor(now.getTime() / 1000)
 * timesRefusalOf({ exp: seconds + 7200, iat: seconds }, { now, clockTolerance: 5, maxLifetime: 3600 }) // 'assertion_lifetime_too_long'
 * ```
 */
export function timesRefusalOf(claims: { readonly exp?: number; readonly iat?: number }, rules: AssertionTimeRules): AssertionRefusal | undefined {
  if (withinAssertionTimes(claims, rules)) return undefined;
  const iatAhead = claims.iat !== undefined && claims.iat > rules.now.getTime() / 1000 + rules.clockTolerance;
  return iatAhead ? 'assertion_not_yet_valid' : 'assertion_lifetime_too_long';
}

/**
 * Why no registered key verified an assertion's signature: `bad_signature` when its `kid` names a
 * registered key of its algorithm's type (that key did not verify it: the assertion was altered, or
 * signed with another private key under that name), else `unknown_key` (the signing key is not
 * registered to the account, or is of another type than the algorithm).
 *
 * @example
 * ```ts
 * unverifiedRefusal(true) // 'bad_signature'
 * ```
 */
export function unverifiedRefusal(kidNamesAKey: boolean): AssertionRefusal {
  return kidNamesAKey ? 'bad_signature' : 'unknown_key';
}

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
