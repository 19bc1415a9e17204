/**
 * @module audit-events
 * The typed events given to the `onAudit` hook. Every event names the account (client ID and, when
 * known, name) and never carries a secret or a hash.
 */
import type { ClientAuthenticationFailure, InvalidTokenReason } from '../errors.js';
import { createHookEmitter, type EventInput } from '../observability/telemetry.js';

interface AuditBase {
  /** When it happened (the configured clock). */
  readonly at: Date;
}

/**
 * A token was issued at the token endpoint.
 *
 * @example
 * ```ts
 * import type { TokenIssuedEvent } from 'express-service-accounts'
 *
 * function logIssued(event: TokenIssuedEvent): void {
 *   console.info(`${event.name} got token ${event.tokenId} [${event.scopes.join(' ')}] until ${event.expiresAt.toISOString()}`)
 * }
 * const sa = createServiceAccounts({
 *   store, issuer, signingKeys,
 *   onAudit: (event) => (event.type === 'token.issued' ? logIssued(event) : undefined),
 * })
 * ```
 */
export interface TokenIssuedEvent extends AuditBase {
  readonly type: 'token.issued';
  readonly clientId: string;
  readonly name: string;
  readonly secretId: string;
  readonly tokenId: string;
  readonly scopes: readonly string[];
  /** The token's `aud`: the resource it was issued for (RFC 8707), or the server's audience. */
  readonly audience: string;
  readonly expiresAt: Date;
}

/**
 * `requireBearer()` refused a token.
 *
 * @example
 * ```ts
 * import type { TokenRefusedEvent } from 'express-service-accounts'
 *
 * function logRefused(event: TokenRefusedEvent): void {
 *   // `clientId` is there only when the token verified far enough to name its client.
 *   console.warn(`bearer token refused (${event.reason}) for ${event.clientId ?? 'an unknown client'}`)
 * }
 * ```
 */
export interface TokenRefusedEvent extends AuditBase {
  readonly type: 'token.refused';
  readonly reason: InvalidTokenReason | 'insufficient_scope';
  /** Present when the token could be verified far enough to know its client. */
  readonly clientId?: string;
  readonly name?: string;
  readonly tokenId?: string;
}

/**
 * An access token was revoked: by the client it was issued to, at the revocation endpoint (RFC 7009), or
 * by an operator, by its ID, through the admin API or the CLI. Names the token by its ID, never the token.
 * @example
 * ```ts
 * import type { TokenRevokedEvent } from 'express-service-accounts'
 * function logRevoked(event: TokenRevokedEvent): void {
 *   const who = event.by === 'client' ? `${event.name} (${event.clientId})` : 'an operator'
 *   console.info(`token ${event.tokenId} revoked by ${who}`)
 * }
 * ```
 */
export interface TokenRevokedEvent extends AuditBase {
  readonly type: 'token.revoked';
  readonly tokenId: string;
  /** `client`: the token's own client, at the revocation endpoint; `operator`: the admin API or the CLI. */
  readonly by: 'client' | 'operator';
  /** The client the token was issued to (always known when `by` is `client`). */
  readonly clientId?: string;
  readonly name?: string;
  /** With `by: 'operator'`: the person, when the caller named one (`admin.withActor(actor)`). */
  readonly actor?: AuditActor;
}

/**
 * A resource server introspected a token (RFC 7662). Names the caller and, when the token verified far
 * enough, the token's ID and account; never the token itself.
 * @example
 * ```ts
 * import type { TokenIntrospectedEvent } from 'express-service-accounts'
 * function logIntrospection(event: TokenIntrospectedEvent): void {
 *   const result = event.active ? 'active' : `inactive (${event.reason})`
 *   console.info(`${event.name} introspected ${event.tokenId ?? 'an unverifiable token'}: ${result}`)
 * }
 * ```
 */
export interface TokenIntrospectedEvent extends AuditBase {
  readonly type: 'token.introspected';
  /** The caller: the account allowed to introspect. */
  readonly clientId: string;
  readonly name: string;
  readonly active: boolean;
  /**
   * Why the token was answered inactive: expired, revoked, disabled, or invalid (forged, unknown,
   * deleted account); `other_client_account` when the caller acts for a client account and the token's
   * account belongs to another one (or to none), whatever the token's state (docs/revocation-and-introspection.md).
   */
  readonly reason?: InvalidTokenReason | 'other_client_account';
  /** The token's `jti`, when its signature verified. */
  readonly tokenId?: string;
  /** The account the token was issued to, when its signature verified. */
  readonly tokenClientId?: string;
  readonly tokenName?: string;
}

/**
 * Client authentication failed at the token endpoint.
 *
 * @example
 * ```ts
 * import type { ClientAuthenticationFailedEvent } from 'express-service-accounts'
 *
 * // The reason stays on the server: the client only ever sees `invalid_client` (or 429).
 * function logFailure(event: ClientAuthenticationFailedEvent): void {
 *   console.warn(`client authentication failed (${event.reason}) for ${event.clientId ?? 'no client ID'} from ${event.address ?? 'an unknown address'}`)
 * }
 * ```
 */
export interface ClientAuthenticationFailedEvent extends AuditBase {
  readonly type: 'client.authentication_failed';
  readonly reason: ClientAuthenticationFailure | 'rate_limited';
  /**
   * The client ID presented, if any (it may be unknown), when it has the form of a client ID
   * (`esa_` and 24 letters or digits) or names an account.
   */
  readonly clientId?: string;
  /**
   * Instead of `clientId` when the value presented as a client ID does not have that form (it may be a
   * secret typed into the wrong field): 8 hex digits that tell whether two attempts presented the same
   * value, within one process, and reveal nothing of it.
   */
  readonly malformedClientId?: string;
  readonly name?: string;
  /**
   * The client address as Express sees it (respecting `trust proxy`), when it is an IP address (with
   * `trust proxy: true`, Express takes whatever the caller wrote first in X-Forwarded-For).
   */
  readonly address?: string;
  /**
   * For `claim_condition_failed`: the name of the federated credential's claim condition the outside
   * token did not meet (the first one, when several). The token's value is not given.
   */
  readonly claim?: string;
}

/**
 * Who made a change through an admin tool that knows its people, such as the admin router: the
 * person's ID and display name as the host's `authorize` gave them. Changes made without one (the CLI,
 * a provisioning script) carry no `actor`.
 *
 * @example
 * ```ts
 * import type { AuditActor } from 'express-service-accounts'
 *
 * const by = (actor: AuditActor | undefined): string => (actor ? `${actor.name} (${actor.id})` : 'an operator tool')
 * ```
 */
export interface AuditActor {
  readonly id: string;
  readonly name: string;
}

/** What every change to an account or its credentials carries. */
interface ChangeBase extends AuditBase {
  /** The person who made the change, when the caller named one (`admin.withActor(actor)`). */
  readonly actor?: AuditActor;
}

/**
 * An account was created, disabled or enabled.
 *
 * @example
 * ```ts
 * import type { AccountEvent } from 'express-service-accounts'
 *
 * const activity = (event: AccountEvent): string =>
 *   `${event.at.toISOString()} ${event.type} ${event.name} (${event.clientId}) by ${event.actor?.name ?? 'an operator tool'}`
 * ```
 */
export interface AccountEvent extends ChangeBase {
  readonly type: 'account.created' | 'account.disabled' | 'account.enabled';
  readonly clientId: string;
  readonly name: string;
}

/**
 * The resources an account's tokens may be for (RFC 8707) were replaced: `resources` is the new list,
 * empty for none, and `before.resources` the list it replaced.
 *
 * @example
 * ```ts
 * import type { AccountResourcesEvent } from 'express-service-accounts'
 *
 * const line = (event: AccountResourcesEvent): string => `${event.name}: tokens now for ${event.resources.join(', ') || 'the server audience'}`
 * ```
 */
export interface AccountResourcesEvent extends ChangeBase {
  readonly type: 'account.resources_changed';
  readonly clientId: string;
  readonly name: string;
  readonly resources: readonly string[];
  /** The account's resources as read just before the change. */
  readonly before: { readonly resources: readonly string[] };
}

/**
 * An account's token policy was changed: `accessTokenLifetime` (seconds; `null` for the server's
 * `tokenLifetime`) and `dpopBoundAccessTokens` (RFC 9449 §5.2) are the values after the change, and
 * `before` holds both as they were.
 *
 * @example
 * ```ts
 * import type { AccountPolicyEvent } from 'express-service-accounts'
 *
 * const line = (event: AccountPolicyEvent): string =>
 *   `${event.name}: tokens live ${event.accessTokenLifetime ?? 'the server default'} s, DPoP ${event.dpopBoundAccessTokens ? 'required' : 'optional'}`
 * ```
 */
export interface AccountPolicyEvent extends ChangeBase {
  readonly type: 'account.policy_changed';
  readonly clientId: string;
  readonly name: string;
  readonly accessTokenLifetime: number | null;
  readonly dpopBoundAccessTokens: boolean;
  /** The account's policy as read just before the change. */
  readonly before: { readonly accessTokenLifetime: number | null; readonly dpopBoundAccessTokens: boolean };
}

/**
 * A secret was created or revoked.
 *
 * @example
 * ```ts
 * import type { SecretEvent } from 'express-service-accounts'
 *
 * // Credential changes go to the security log; the event names the secret, never its value.
 * const securityLog = (event: SecretEvent): void =>
 *   console.info(JSON.stringify({ at: event.at, action: event.type, account: event.name, secretId: event.secretId }))
 * ```
 */
export interface SecretEvent extends ChangeBase {
  readonly type: 'secret.created' | 'secret.revoked';
  readonly clientId: string;
  readonly name: string;
  readonly secretId: string;
  /** On `.created`, when the new credential expires (absent: never). */
  readonly expiresAt?: Date;
}

/**
 * A public key (a key-pair credential) was added to an account or revoked.
 *
 * @example
 * ```ts
 * import type { KeyEvent } from 'express-service-accounts'
 *
 * // The event names the key by ID and RFC 7638 thumbprint; only public keys are ever registered.
 * const securityLog = (event: KeyEvent): void =>
 *   console.info(JSON.stringify({ at: event.at, action: event.type, account: event.name, keyId: event.keyId, thumbprint: event.thumbprint }))
 * ```
 */
export interface KeyEvent extends ChangeBase {
  readonly type: 'key.created' | 'key.revoked';
  readonly clientId: string;
  readonly name: string;
  readonly keyId: string;
  readonly thumbprint: string;
  /** On `.created`, when the new credential expires (absent: never). */
  readonly expiresAt?: Date;
}

/**
 * A federated credential (trust in an outside issuer's tokens for one exact subject) was added to an
 * account or revoked.
 *
 * @example
 * ```ts
 * import type { FederatedCredentialEvent } from 'express-service-accounts'
 *
 * // The event names the credential by ID, with the issuer and subject it trusts; nothing in it is secret.
 * const securityLog = (event: FederatedCredentialEvent): void =>
 *   console.info(JSON.stringify({ at: event.at, action: event.type, account: event.name, credentialId: event.credentialId, issuer: event.issuer, subject: event.subject }))
 * ```
 */
export interface FederatedCredentialEvent extends ChangeBase {
  readonly type: 'federated_credential.created' | 'federated_credential.revoked';
  readonly clientId: string;
  readonly name: string;
  readonly credentialId: string;
  readonly issuer: string;
  readonly subject: string;
  /** The credential's claim conditions (claim names and the exact values required), when it has any. */
  readonly claims?: Readonly<Record<string, string>>;
  /** On `.created`, when the new credential expires (absent: never). */
  readonly expiresAt?: Date;
}

/**
 * Every audit event; switch on `type` to narrow.
 *
 * @example
 * ```ts
 * import { createServiceAccounts, type AuditEvent } from 'express-service-accounts'
 *
 * const sa = createServiceAccounts({
 *   store, issuer, signingKeys,
 *   onAudit(event: AuditEvent) {
 *     if (event.type === 'token.issued') console.info({ actor: event.name, tokenId: event.tokenId }, 'token issued')
 *   },
 * })
 * ```
 */
export type AuditEvent =
  | TokenIssuedEvent
  | AccountResourcesEvent
  | AccountPolicyEvent
  | TokenRefusedEvent
  | TokenRevokedEvent
  | TokenIntrospectedEvent
  | ClientAuthenticationFailedEvent
  | AccountEvent
  | SecretEvent
  | KeyEvent
  | FederatedCredentialEvent;

/** An event before its timestamp is added. */
export type AuditEventInput = EventInput<AuditEvent>;

/** Returns the emitter of audit events (see {@link createHookEmitter}). */
export function createAuditEmitter(
  hook: ((event: AuditEvent) => void | Promise<void>) | undefined,
  now: () => Date,
): (event: AuditEventInput) => void {
  return createHookEmitter<AuditEvent>(hook, now);
}
