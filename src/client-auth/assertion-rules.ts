/**
 * @module assertion-rules
 * The rules every client assertion shares, key-pair assertion and outside issuer's token alike,
 * beyond what `jose` checks (the signature, `exp` passed, `nbf` reached): it is made out to one
 * audience only, it may not live longer than allowed (a stolen one is of use for minutes at most),
 * it may not claim to be issued in the future, and its `jti` is used once, on every instance sharing
 * the store, kept until the assertion could no longer be accepted. Which keys are tried on it is the
 * rule of keys/candidate-keys.ts. Framework-free.
 */
import type { JWTPayload } from 'jose';
import type { CallObserver } from '../observability/dependency-monitor.js';
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
