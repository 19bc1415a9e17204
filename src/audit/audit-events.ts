/**
 * @module audit-events
 * The typed events given to the `onAudit` hook. Every event names the account (client ID and, when
 * known, name) and never carries a secret or a hash.
 */
import type { ClientAuthenticationFailure, InvalidTokenReason } from '../errors.js';

interface AuditBase {
  /** When it happened (the configured clock). */
  readonly at: Date;
}

/** A token was issued at the token endpoint. */
export interface TokenIssuedEvent extends AuditBase {
  readonly type: 'token.issued';
  readonly clientId: string;
  readonly name: string;
  readonly secretId: string;
  readonly tokenId: string;
  readonly scopes: readonly string[];
  readonly expiresAt: Date;
}

/** `requireBearer()` refused a token. */
export interface TokenRefusedEvent extends AuditBase {
  readonly type: 'token.refused';
  readonly reason: InvalidTokenReason | 'insufficient_scope';
  /** Present when the token could be verified far enough to know its client. */
  readonly clientId?: string;
  readonly name?: string;
  readonly tokenId?: string;
}

/** Client authentication failed at the token endpoint. */
export interface ClientAuthenticationFailedEvent extends AuditBase {
  readonly type: 'client.authentication_failed';
  readonly reason: ClientAuthenticationFailure | 'rate_limited';
  /** The client ID presented, if any (it may be unknown). */
  readonly clientId?: string;
  readonly name?: string;
  /** The client address as Express sees it (respecting `trust proxy`). */
  readonly address?: string;
}

/** An account was created, disabled or enabled. */
export interface AccountEvent extends AuditBase {
  readonly type: 'account.created' | 'account.disabled' | 'account.enabled';
  readonly clientId: string;
  readonly name: string;
}

/** A secret was created or revoked. */
export interface SecretEvent extends AuditBase {
  readonly type: 'secret.created' | 'secret.revoked';
  readonly clientId: string;
  readonly name: string;
  readonly secretId: string;
}

/**
 * Every audit event; switch on `type` to narrow.
 * @example
 * ```ts
 * onAudit(event) { if (event.type === 'token.issued') log.info({ actor: event.name }, 'token issued') }
 * ```
 */
export type AuditEvent =
  | TokenIssuedEvent
  | TokenRefusedEvent
  | ClientAuthenticationFailedEvent
  | AccountEvent
  | SecretEvent;

/** An event before its timestamp is added. */
export type AuditEventInput = AuditEvent extends infer E ? (E extends AuditEvent ? Omit<E, 'at'> : never) : never;

/**
 * Returns an emitter that stamps events and hands them to the hook off the request path: a hook that
 * throws, rejects or is slow never breaks or delays a request.
 */
export function createAuditEmitter(
  hook: ((event: AuditEvent) => void | Promise<void>) | undefined,
  now: () => Date,
): (event: AuditEventInput) => void {
  if (!hook) return () => {};
  return (input) => {
    const event = Object.freeze({ ...input, at: now() }) as AuditEvent;
    setImmediate(() => {
      try {
        Promise.resolve(hook(event)).catch(() => {});
      } catch {
        // The hook's failure is the host's to log; it never reaches the request.
      }
    });
  };
}
