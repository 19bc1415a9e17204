/**
 * @module assertion-rules
 * The rules every client assertion shares, key-pair assertion and outside issuer's token alike,
 * beyond what `jose` checks (the signature, `exp` passed, `nbf` reached): it is made out to one
 * audience only, it may not live longer than allowed,
 * it may not claim to be issued in the future, and its `jti` is used once, on every instance sharing
 * the store, kept until the assertion could no longer be accepted (a stolen one is of use once at
 * most, and for no longer than its lifetime). A refusal names the rule that
 * failed, for the audit only (the client is answered one `invalid_client` whatever the rule, RFC 7523
 * §3.2). How many keys are tried on it is key-tries.ts's (the bounded key-try loop). Framework-free.
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
