/**
 * @module introspection-step
 * The last step of `POST {mount}/introspect` (RFC 7662): after client authentication, checks that the
 * caller may introspect (it holds the scope `token:introspect`, or it is unrestricted and the host
 * allows that), then answers whether the presented token is active, with its claims and its account's
 * name when it is, and `{"active": false}` alone when it is not. A caller that belongs to a client
 * account learns only of that client account's tokens: any other token is answered `{"active": false}`,
 * exactly like an unknown one (client-account-boundary.ts).
 */
import type { ServerResponse } from 'node:http';
import type { AuditEventInput } from '../audit/audit-events.js';
import type { Inspection, TokenInspector } from '../token-check/token-check.js';
import { withinClientAccount } from '../client-account-boundary.js';
import { InvalidRequestError, UnauthorizedClientError } from '../errors.js';
import type { AccountRecord } from '../store/account-store.js';
import type { Step } from './request-guards.js';

/**
 * The scope an account needs to call the introspection endpoint (`service-accounts create --scope token:introspect`).
 *
 * @example
 * ```ts
 * import { INTROSPECTION_SCOPE } from 'express-service-accounts'
 *
 * const gateway = await sa.admin.createAccount({ name: 'api-gateway', scopes: [INTROSPECTION_SCOPE] })
 * ```
 */
export const INTROSPECTION_SCOPE = 'token:introspect';

/** What the step needs, built by the token endpoint. */
export interface IntrospectionParts {
  readonly inspector: TokenInspector;
  /** Whether an unrestricted account (provisioned without scopes) may introspect. */
  readonly allowUnrestricted: boolean;
  readonly audit: (event: AuditEventInput) => void;
}

/**
 * What the caller may learn of a token: the inspection itself when the token's account is within the
 * caller's client account, else an inactive token with nothing but the reason (RFC 7662 §2.2: "the
 * protected resource is not allowed to introspect this particular token" → `active: false`).
 */
type Disclosed = Inspection | { readonly active: false; readonly reason: 'other_client_account'; readonly claims: Inspection['claims'] };

function disclosedTo(caller: AccountRecord, inspection: Inspection, owner: AccountRecord | undefined): Disclosed {
  // An operator's account sees every token; a token whose signature did not verify names no account.
  if (caller.clientAccountId === null || inspection.claims === undefined || withinClientAccount(caller.clientAccountId, owner)) return inspection;
  return { active: false, reason: 'other_client_account', claims: inspection.claims };
}

/**
 * {@link disclosedTo} with the account a verified token was issued to: the one the check read, else (a
 * token that expired, which the check refuses before reading its account) the one its `sub` names,
 * read only for a caller of a client account. An account that cannot be read now is taken as outside:
 * the answer is `{"active": false}` either way, and the audit event then says no more than
 * `other_client_account`.
 */
function disclose(inspector: TokenInspector, caller: AccountRecord, inspection: Inspection): Disclosed | Promise<Disclosed> {
  if (inspection.account !== undefined || inspection.claims === undefined || caller.clientAccountId === null) return disclosedTo(caller, inspection, inspection.account);
  return inspector.accountOf(inspection.claims.sub).then(
    (owner) => disclosedTo(caller, inspection, owner),
    () => disclosedTo(caller, inspection, undefined),
  );
}

/** RFC 7662 §2.2: the members of an active token's answer. */
function activeAnswer(inspection: Extract<Inspection, { active: true }>): Record<string, unknown> {
  const { claims, account } = inspection;
  const nbf = (claims as { nbf?: number }).nbf;
  return {
    active: true,
    ...(claims.scope !== undefined ? { scope: claims.scope } : {}),
    client_id: claims.client_id,
    // The account's name, so a resource server can attribute what the token does (RFC 7662 §2.2 `username`).
    username: account.name,
    // RFC 9449 §6.2: a DPoP-bound token is of type DPoP, and its key's thumbprint is told in `cnf`.
    token_type: claims.cnf !== undefined ? 'DPoP' : 'Bearer',
    ...(claims.cnf !== undefined ? { cnf: { jkt: claims.cnf.jkt } } : {}),
    exp: claims.exp,
    iat: claims.iat,
    ...(nbf !== undefined ? { nbf } : {}),
    sub: claims.sub,
    aud: claims.aud,
    iss: claims.iss,
    jti: claims.jti,
  };
}

function sendJson(res: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/**
 * Whether an account may call the introspection endpoint.
 *
 * @example
 * ```ts
 * mayIntrospect({ ...account, scopes: ['token:introspect'] }, false) // true
 * ```
 */
export function mayIntrospect(account: AccountRecord, allowUnrestricted: boolean): boolean {
  return account.scopes.includes(INTROSPECTION_SCOPE) || (allowUnrestricted && account.scopes.length === 0);
}

/**
 * Returns the introspection step.
 *
 * @example
 * ```ts
 * declare const inspector: IntrospectionParts['inspector'] // one per instance, shared with revocation
 * // The last step of the route, after the guards and client authentication (token-endpoint.ts).
 * const introspect = createIntrospectionStep({ inspector, allowUnrestricted: false, audit: runtime.audit })
 * ```
 */
export function createIntrospectionStep(parts: IntrospectionParts): Step {
  return (context, next) => {
    const caller = context.client.account;
    // RFC 7662 §2.1: the server MUST require authorization of the caller; §4: it should be limited to
    // protected resources. An authenticated client without that right gets 403 (see docs/errors.md).
    if (!mayIntrospect(caller, parts.allowUnrestricted)) {
      return next(new UnauthorizedClientError('This client may not introspect tokens'));
    }
    const { token } = context.parameters;
    // RFC 7662 §2.1: `token` is REQUIRED.
    if (token === undefined) return next(new InvalidRequestError('The parameter token is required'));
    parts.inspector
      .inspect(token)
      .then((inspected) => disclose(parts.inspector, caller, inspected))
      .then((inspection) => {
        parts.audit({
          type: 'token.introspected',
          clientId: caller.clientId,
          name: caller.name,
          active: inspection.active,
          ...(inspection.active ? {} : { reason: inspection.reason }),
          ...(inspection.claims ? { tokenId: inspection.claims.jti, tokenClientId: inspection.claims.client_id } : {}),
          ...('account' in inspection && inspection.account ? { tokenName: inspection.account.name } : {}),
        });
        // RFC 7662 §2.2: an inactive token's answer SHOULD NOT carry anything but `active`.
        sendJson(context.res, inspection.active ? activeAnswer(inspection) : { active: false });
      }, next);
  };
}
