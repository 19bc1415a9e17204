/**
 * @module operational-events
 * The typed events given to the `onEvent` hook: what an operator must be told the moment it happens
 * (the store became unreachable or recovered, the change feed lost or regained its push connection,
 * the limiter's Redis failed, the secret-check queue filled up, a client revoked tokens up to its
 * cap). Events mark changes of state, so an
 * outage gives a handful of events, not one per request. No event ever carries a secret, a token or
 * a hash: errors are reduced to their class name and message.
 */
import { redactSecrets } from '../credentials/redact-secrets.js';
import type { EventInput } from './telemetry.js';
import type { ChangeFeedState } from '../store/account-store.js';

import type { ExtraClaimsRefusal } from '../extra-token-claims.js';

interface OperationalBase {
  /** When it happened (the configured clock). */
  readonly at: Date;
}

/**
 * A dependency stopped answering: a call failed or timed out. Emitted once per outage.
 *
 * @example
 * ```ts
 * import type { DependencyUnavailableEvent } from 'express-service-accounts'
 *
 * const page = (event: DependencyUnavailableEvent): void =>
 *   console.error(`${event.dependency} unavailable since ${event.at.toISOString()} (${event.operation}): ${event.error}`)
 * ```
 */
export interface DependencyUnavailableEvent extends OperationalBase {
  readonly type: 'store.unavailable' | 'limiter.unavailable';
  /** `store` (the account store) or `limiter` (the failure limiter's Redis). */
  readonly dependency: 'store' | 'limiter';
  /** The call that failed first, such as `findAccount`. */
  readonly operation: string;
  /** The error's name and message, such as `StoreUnavailableError: Store call findAccount timed out after 2000 ms`. */
  readonly error: string;
  /**
   * For the limiter: what the token endpoint does meanwhile. Always `closed`: attempts are answered
   * 503 rather than let through uncounted (see docs/observability.md).
   */
  readonly failMode?: 'closed';
}

/**
 * A dependency answers again after an outage.
 *
 * @example
 * ```ts
 * import type { DependencyRecoveredEvent } from 'express-service-accounts'
 *
 * const resolve = (event: DependencyRecoveredEvent): void =>
 *   console.info(`${event.dependency} back after ${Math.round(event.downtimeMs / 1000)} s`)
 * ```
 */
export interface DependencyRecoveredEvent extends OperationalBase {
  readonly type: 'store.recovered' | 'limiter.recovered';
  readonly dependency: 'store' | 'limiter';
  /** Milliseconds since the matching `*.unavailable` event. */
  readonly downtimeMs: number;
}

/**
 * The store's change feed changed state.
 *
 * @example
 * ```ts
 * import type { ChangeFeedEvent } from 'express-service-accounts'
 *
 * const log = (event: ChangeFeedEvent): void => console.warn(`change feed: ${event.previous} -> ${event.state}`)
 * ```
 */
export interface ChangeFeedEvent extends OperationalBase {
  readonly type: 'change_feed.state_changed';
  readonly state: ChangeFeedState;
  readonly previous: ChangeFeedState | undefined;
}

/**
 * A token request was refused 503 `temporarily_unavailable` because the secret-check queue was full, or
 * the share of it one client address or client ID may hold was (a flood of wrong secrets). At most one
 * event every 10 seconds.
 *
 * @example
 * ```ts
 * import type { SecretChecksSaturatedEvent } from 'express-service-accounts'
 *
 * const warn = (event: SecretChecksSaturatedEvent): void => console.warn(`bcrypt queue full (${event.queued} waiting)`)
 * ```
 */
export interface SecretChecksSaturatedEvent extends OperationalBase {
  readonly type: 'secret_checks.saturated';
  /** Checks waiting when it happened. */
  readonly queued: number;
}

/**
 * An outside issuer's keys could not be fetched (`federation.issuer_unavailable`: unreachable, too
 * slow, an answer that is no valid key set), or can again (`federation.issuer_recovered`). Reported
 * once per outage of each issuer, never per request. Meanwhile its cached keys still verify its
 * tokens; a token that needs keys not cached is answered 503.
 *
 * @example
 * ```ts
 * import type { FederatedIssuerEvent } from 'express-service-accounts'
 *
 * const report = (event: FederatedIssuerEvent): void =>
 *   console.warn(event.type === 'federation.issuer_unavailable' ? `keys of ${event.issuer}: ${event.error}` : `${event.issuer} is back after ${event.downtimeMs} ms`)
 * ```
 */
export type FederatedIssuerEvent =
  | (OperationalBase & {
      readonly type: 'federation.issuer_unavailable';
      /** The issuer identifier, as federated credentials name it. */
      readonly issuer: string;
      /** What failed, such as `Error: https://issuer.example/.well-known/openid-configuration did not answer within 5000 ms`. */
      readonly error: string;
    })
  | (OperationalBase & {
      readonly type: 'federation.issuer_recovered';
      readonly issuer: string;
      /** Milliseconds since the matching `federation.issuer_unavailable` event. */
      readonly downtimeMs: number;
    });

/**
 * A client asked to revoke one more of its tokens while `maxRevokedTokensPerClient` of them are on
 * the deny-list and not yet expired: the request was answered 400 `invalid_request`, telling it to
 * revoke its credential instead. At most one event per client a minute on each instance.
 *
 * @example
 * ```ts
 * import type { RevocationLimitReachedEvent } from 'express-service-accounts'
 *
 * const warn = (event: RevocationLimitReachedEvent): void =>
 *   console.warn(`${event.clientId} keeps ${event.limit} revoked tokens: look at how it uses its tokens`)
 * ```
 */
export interface RevocationLimitReachedEvent extends OperationalBase {
  readonly type: 'token_revocations.limit_reached';
  /** The client whose revocation was refused. */
  readonly clientId: string;
  /** The cap it reached (`maxRevokedTokensPerClient`). */
  readonly limit: number;
}

/**
 * The host's `extraTokenClaims` hook threw, or returned something refused: not a plain object, a
 * registered claim (`claim` names it), a value JSON cannot hold, or more than 1024 bytes of JSON. The
 * token request was answered 500 `server_error`; nothing of the hook's result reached the client.
 * One event per refused request: the host's bug, to be fixed (docs/account-policy.md).
 *
 * @example
 * ```ts
 * import type { ExtraClaimsRefusedEvent } from 'express-service-accounts'
 *
 * const warn = (event: ExtraClaimsRefusedEvent): void =>
 *   console.error(`extraTokenClaims refused for ${event.clientId}: ${event.reason}${event.claim ? ` (${event.claim})` : ''}`)
 * ```
 */
export interface ExtraClaimsRefusedEvent extends OperationalBase {
  readonly type: 'extra_claims.refused';
  /** The client whose token request failed. */
  readonly clientId: string;
  readonly reason: ExtraClaimsRefusal;
  /** The registered claim the hook tried to set (reason `registered_claim`). */
  readonly claim?: string;
}

/**
 * A credential obtained a token while it expires within 14 days (`CREDENTIAL_EXPIRING_LEAD_TIME`):
 * time to rotate it (docs/rotation.md). At most once per credential on each instance, raised by the
 * token request that used it; a credential nobody uses raises none (list those with the admin API's
 * `listStaleCredentials`, or the CLI's `credentials stale`).
 *
 * @example
 * ```ts
 * import type { CredentialExpiringEvent } from 'express-service-accounts'
 *
 * const remind = (event: CredentialExpiringEvent): void =>
 *   console.warn(`${event.name}: ${event.kind} ${event.credentialId} expires ${event.expiresAt.toISOString()}: rotate it`)
 * ```
 */
export interface CredentialExpiringEvent extends OperationalBase {
  readonly type: 'credential.expiring';
  readonly clientId: string;
  /** The account's name. */
  readonly name: string;
  /** `secret`, `key` or `federated`. */
  readonly kind: 'secret' | 'key' | 'federated';
  readonly credentialId: string;
  readonly expiresAt: Date;
}

/**
 * The in-memory DPoP replay cache could not record a proof: it holds `dpop.maxReplayEntries` live
 * proofs, or one client holds its share of them (a tenth; a client is a client account, or a service
 * account without one). The request was answered 503; no live entry is
 * ever evicted, since that would let its proof be replayed. Once per filling, until a proof is recorded again.
 *
 * @example
 * ```ts
 * import type { DpopReplayCacheFullEvent } from 'express-service-accounts'
 *
 * const warn = (event: DpopReplayCacheFullEvent): void =>
 *   console.warn(`DPoP replay cache full (${event.scope}, ${event.entries} entries): raise dpop.maxReplayEntries or use dpop.replay "redis"`)
 * ```
 */
export interface DpopReplayCacheFullEvent extends OperationalBase {
  readonly type: 'dpop_replay_cache.full';
  /** `cache` when the whole cache is full, `client` when one client's share is. */
  readonly scope: 'cache' | 'client';
  /** Live entries at the time. */
  readonly entries: number;
}

/**
 * Every operational event; switch on `type` to narrow.
 *
 * @example
 * ```ts
 * import { createServiceAccounts, type OperationalEvent } from 'express-service-accounts'
 *
 * const sa = createServiceAccounts({
 *   store, issuer, signingKeys,
 *   onEvent(event: OperationalEvent) {
 *     console.warn(JSON.stringify({ level: 'warn', ...event }))
 *   },
 * })
 * ```
 */
export type OperationalEvent =
  | DependencyUnavailableEvent
  | DependencyRecoveredEvent
  | ChangeFeedEvent
  | SecretChecksSaturatedEvent
  | FederatedIssuerEvent
  | RevocationLimitReachedEvent
  | ExtraClaimsRefusedEvent
  | CredentialExpiringEvent
  | DpopReplayCacheFullEvent;

/** An event before its timestamp is added. */
export type OperationalEventInput = EventInput<OperationalEvent>;

/** How far down a chain of causes {@link describeError} looks for the one that says what failed. */
const MAX_CAUSE_DEPTH = 5;

/**
 * One line for an error: its name and message, and of its root cause only the class name and code
 * (such as `ECONNREFUSED` or a SQLSTATE), never the cause's own message, stack or properties, which
 * may carry connection details. Our own messages never carry a secret. The root cause, not the direct
 * one: a call that failed because the store's start-up failed wraps that failure, and only the
 * driver's error at the bottom says what went wrong.
 */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return 'unknown error';
  let cause = error.cause;
  for (let depth = 1; depth < MAX_CAUSE_DEPTH && cause instanceof Error && cause.cause instanceof Error; depth++) cause = cause.cause;
  let detail = '';
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    detail = ` (${cause.name}${typeof code === 'string' && /^[A-Za-z0-9_]{1,32}$/.test(code) ? ` ${code}` : ''})`;
  }
  // A driver's message may quote a value it was given: nothing secret-like passes (docs/security.md).
  return redactSecrets(`${error.name}: ${error.message}${detail}`.slice(0, 300));
}
