/**
 * @module revocation-step
 * The last step of `POST {mount}/revoke` (RFC 7009): after client authentication, puts the presented
 * access token on the deny-list when it was issued to that client, and answers 200 with an empty body
 * in every case, so the answer never tells whether a token was valid, known, or someone else's. The one
 * exception is the client's own cap (`maxRevokedTokensPerClient`): past it, 400 `invalid_request`.
 */
import type { ServerResponse } from 'node:http';
import type { AuditEventInput } from '../audit/audit-events.js';
import type { TokenInspector } from '../token-check/token-check.js';
import { InvalidRequestError, UnsupportedTokenTypeError } from '../errors.js';
import type { CallObserver } from '../runtime/call-store.js';
import type { OperationalEventInput } from '../observability/operational-events.js';
import type { AccountStore } from '../store/account-store.js';
import { callStore } from '../runtime/call-store.js';
import { revokedTokenChangeKey } from '../store/revoked-token-change.js';
import type { Step } from './request-guards.js';

/** What the step needs, built by the token endpoint. */
export interface RevocationParts {
  readonly inspector: TokenInspector;
  readonly store: AccountStore;
  readonly storeTimeout: number;
  readonly observer: CallObserver;
  /** Told the change key of a new entry, so this instance refuses the token before the store announces it. */
  readonly revoked: (changeKey: string) => void;
  readonly audit: (event: AuditEventInput) => void;
  readonly now: () => Date;
  /** Seconds a token is still admitted after its `exp`: its deny-list entry is kept that much longer. */
  readonly clockTolerance: number;
  /** Entries one client may have on the deny-list, not yet expired (`maxRevokedTokensPerClient`). */
  readonly maxPerClient: number;
  /** Hands an operational event to the `onEvent` hook. */
  readonly event: (event: OperationalEventInput) => void;
}

/** How often, at most, one client's refusals are reported on this instance. */
const REPORT_EVERY_MS = 60_000;
/** Clients whose last report is remembered; past it the memory starts over (a few more events at worst). */
const REPORTED_CLIENTS = 1000;

/**
 * RFC 7009 §2.2.1 lets the server answer a revocation request with an error of RFC 6749 §5.2. The cap
 * is the client's own doing and waiting a moment will not lift it (entries last until their tokens
 * expire), so it is a 400 `invalid_request`, not the 503 that §2.2.1 reserves for a server that is
 * briefly unable to revoke and that tells the client to retry.
 */
const LIMIT_MESSAGE =
  'Too many of this client\'s tokens are revoked and not yet expired; revoke the credential they were issued against instead, which revokes all its tokens at once';

/** RFC 7009 §2.2: "the content of the response body is ignored by the client". */
function sendEmpty(res: ServerResponse): void {
  res.statusCode = 200;
  res.setHeader('Content-Length', '0');
  res.end();
}

/**
 * Returns the revocation step.
 *
 * @example
 * ```ts
 * declare const inspector: RevocationParts['inspector'] // one per instance, shared with introspection
 * // The last step of the route, after the guards and client authentication (token-endpoint.ts).
 * const revoke = createRevocationStep({
 *   inspector,
 *   store: config.store,
 *   storeTimeout: config.storeTimeout,
 *   observer: runtime.storeCalls,
 *   revoked: (changeKey) => runtime.revokedTokens.onChange(changeKey),
 *   audit: runtime.audit,
 *   now: config.now,
 *   clockTolerance: config.clockTolerance,
 *   maxPerClient: config.maxRevokedTokensPerClient,
 *   event: runtime.event,
 * })
 * ```
 */
export function createRevocationStep(parts: RevocationParts): Step {
  const { inspector, store } = parts;
  const reported = new Map<string, number>();
  const report = (clientId: string): void => {
    const now = parts.now().getTime();
    if (now < (reported.get(clientId) ?? -Infinity) + REPORT_EVERY_MS) return;
    if (reported.size >= REPORTED_CLIENTS) reported.clear();
    reported.set(clientId, now);
    parts.event({ type: 'token_revocations.limit_reached', clientId, limit: parts.maxPerClient });
  };
  return (context, next) => {
    const { token } = context.parameters;
    // RFC 7009 §2.1: `token` is REQUIRED.
    if (token === undefined) return next(new InvalidRequestError('The parameter token is required'));
    // RFC 7009 §2.2.1: a server that cannot revoke access tokens says unsupported_token_type.
    // Both deny-list methods, or none: without listRevokedTokens no instance could learn of the entry.
    if (!store.revokeToken || !store.listRevokedTokens) return next(new UnsupportedTokenTypeError('This server cannot revoke single access tokens'));
    const caller = context.client.account;
    // RFC 7009 §2.1: token_type_hint is only a hint, and this server issues access tokens only, so it is
    // looked up as an access token whatever the hint says. §2.2: an invalid, expired or unknown token, or
    // (§2.1) one issued to another client, is not revoked, and the answer is the same 200.
    const claims = inspector.claimsOf(token);
    if (claims === undefined || claims.client_id !== caller.clientId) return sendEmpty(context.res);
    // Kept until the last moment the token could still be admitted: `exp` plus the clock tolerance.
    const record = { tokenId: claims.jti, clientId: claims.client_id, revokedAt: parts.now(), expiresAt: new Date((claims.exp + parts.clockTolerance) * 1000) };
    const options = { maxPerClient: parts.maxPerClient };
    callStore(() => store.revokeToken!(record, options), parts.storeTimeout, 'revokeToken', parts.observer).then((stored) => {
      if (stored === 'limit_reached') {
        report(caller.clientId);
        return next(new InvalidRequestError(LIMIT_MESSAGE));
      }
      parts.revoked(revokedTokenChangeKey(stored));
      parts.audit({ type: 'token.revoked', tokenId: stored.tokenId, by: 'client', clientId: caller.clientId, name: caller.name });
      sendEmpty(context.res);
    }, next);
  };
}
