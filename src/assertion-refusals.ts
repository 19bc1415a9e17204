/**
 * @module assertion-refusals
 * Which rule a key-pair client assertion (`private_key_jwt`) broke, for the audit reason only: the
 * client is answered the same `invalid_client` whatever the rule (RFC 7523 §3.2). Framework-free.
 */
import { errors } from 'jose';
import type { ClientAuthenticationFailure } from './errors.js';
import { withinAssertionTimes, type AssertionTimeRules } from './assertion-times.js';

/** The audit reasons of a refused key-pair assertion (see `ClientAuthenticationFailure`). */
export type AssertionRefusal = Extract<
  ClientAuthenticationFailure,
  | 'invalid_assertion'
  | 'wrong_audience'
  | 'assertion_lifetime_too_long'
  | 'expired_assertion'
  | 'assertion_not_yet_valid'
  | 'unknown_key'
  | 'bad_signature'
  | 'revoked_key'
>;

/**
 * What an error of jose's `jwtVerify`, thrown after the signature verified, says was wrong with the
 * claims: `exp` passed, `nbf` not reached, anything else (a missing `exp` or `jti`, another `iss` or
 * `sub`, a payload that is no JSON object) `invalid_assertion`.
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
  return 'invalid_assertion';
}

/**
 * The time rule of assertion-times.ts an assertion breaks, if any: `exp` too far ahead
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
