/**
 * @module require-bearer
 * `requireBearer({ scope, audience })`: Express middleware that admits a request only with a valid,
 * unrevoked access token of an enabled account, made for the route's API (audience) and with the
 * route's scope, and puts the principal ({@link ServiceAccountPrincipal}, made from the good token and
 * its granted scopes) on `req.serviceAccount`. Written directly (no passport) to keep the per-request cost in microseconds.
 * A DPoP-bound token (RFC 9449) is admitted only with `Authorization: DPoP` and a proof of its key
 * (dpop-admission.ts); the Bearer path pays one character comparison for it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  InsufficientScopeError,
  InvalidRequestError,
  InvalidTokenError,
  sendOAuthError,
  toOAuthError,
  type DpopChallenge,
} from '../errors.js';
import { RequestSpan } from '../observability/telemetry.js';
import type { AccountRecord } from '../store/account-store.js';
import type { AccessTokenClaims } from '../access-tokens/access-token.js';
import type { Runtime } from '../create-runtime.js';
import { checkKnownKeys } from '../config-checks.js';
import { isResourceIndicator, parseScopeList } from '../token-grant.js';
import { extractBearerToken, hasRepeatedAuthorization, usesDpopScheme } from './extract-bearer-token.js';
import { createDpopAdmission } from './dpop-admission.js';
import { checkToken, type TokenCheckReceiver, type TokenCredential } from '../token-check/token-check.js';

/**
 * Who made a request that passed `requireBearer()`.
 * @example
 * ```ts
 * app.get('/api/whoami', sa.requireBearer(), (req, res) => res.json(req.serviceAccount))
 * ```
 */
export interface ServiceAccountPrincipal {
  readonly type: 'service_account';
  readonly clientId: string;
  /** The account's name: what audit logs and activity history show for every action. */
  readonly name: string;
  readonly clientAccountId: string | null;
  /** Scopes granted to the token; empty for an unrestricted account (one provisioned without scopes). */
  readonly scopes: readonly string[];
  /** ID of the secret, public key or federated credential the token was issued against (the `id` the CLI and admin API show). */
  readonly secretId: string;
  /** The token's `jti`. */
  readonly tokenId: string;
}

// A plain loop: no closure per request on this path.
function includesAll(granted: readonly string[], needed: readonly string[]): boolean {
  for (const scope of needed) if (!granted.includes(scope)) return false;
  return true;
}

/**
 * The token's granted scopes when they hold every `needed` scope (an unrestricted account's token
 * holds all: its list is empty), or `undefined` when one is missing.
 */
export function grantedScopes(claims: AccessTokenClaims, account: AccountRecord, needed: readonly string[]): readonly string[] | undefined {
  const unrestricted = claims.scope === undefined && account.scopes.length === 0;
  const granted = claims.scope === undefined ? [] : claims.scope.split(' ');
  return unrestricted || includesAll(granted, needed) ? granted : undefined;
}

/** The principal of a good token. */
export function principalOf(claims: AccessTokenClaims, account: AccountRecord, credential: TokenCredential, granted: readonly string[]): ServiceAccountPrincipal {
  return {
    type: 'service_account',
    clientId: account.clientId,
    name: account.name,
    clientAccountId: account.clientAccountId,
    scopes: granted,
    secretId: credential.id,
    tokenId: claims.jti,
  };
}

/**
 * Options of {@link ServiceAccounts.requireBearer}.
 *
 * @example
 * ```ts
 * import type { RequireBearerOptions } from 'express-service-accounts'
 *
 * const canPostJobs: RequireBearerOptions = { scope: 'jobs:write' }
 * app.post('/api/jobs', sa.requireBearer(canPostJobs), (req, res) => res.status(201).json({ by: req.serviceAccount?.name }))
 * // Several scopes: the token needs all of them.
 * app.delete('/api/jobs/:id', sa.requireBearer({ scope: ['jobs:write', 'jobs:delete'] }), (req, res) => res.status(204).end())
 * // Tokens made for the billing API only (RFC 8707 resource indicators, docs/resources.md).
 * app.get('/billing/invoices', sa.requireBearer({ audience: 'https://billing.example.com' }), (req, res) => res.json([]))
 * ```
 */
export interface RequireBearerOptions {
  /**
   * Scope(s) the route needs; with several, the token needs all of them. Accounts provisioned without
   * scopes are unrestricted and pass every scope check.
   */
  scope?: string | readonly string[];
  /**
   * The API this route belongs to: a token whose `aud` is anything else is refused (401
   * `invalid_token`, "issued for another API"). A resource accounts may be allowed (docs/resources.md):
   * an absolute URI without fragment or user information, or a plain name.
   * @default the `audience` option of `createServiceAccounts` (the `aud` of tokens issued without a
   * resource), so routes that name none keep accepting exactly the tokens they accepted before.
   */
  audience?: string;
  /**
   * DPoP (RFC 9449, docs/dpop.md): `allowed` admits Bearer tokens and DPoP-bound tokens sent with
   * `Authorization: DPoP` and a proof; `required` admits DPoP-bound tokens only. A DPoP-bound token is
   * never admitted as a Bearer token.
   * @default 'allowed'
   */
  dpop?: 'allowed' | 'required';
}

function parseAudienceOption(audience: RequireBearerOptions['audience'], serverAudience: string): string {
  if (audience === undefined) return serverAudience;
  // The server's own audience is accepted as written (it is validated by createServiceAccounts).
  if (audience === serverAudience || isResourceIndicator(audience)) return audience;
  throw new TypeError(`requireBearer: option "audience" must be an absolute URI without fragment or user information, or a plain name: ${JSON.stringify(audience)}`);
}

function parseScopeOption(scope: RequireBearerOptions['scope']): readonly string[] {
  if (scope === undefined) return [];
  const needed = parseScopeList(scope, (s) => new TypeError(`requireBearer: option "scope" has an invalid scope: ${JSON.stringify(s)}`));
  // An empty value (often an unset variable: `scope: process.env.SCOPE ?? ''`) would quietly open the
  // route to every valid token.
  if (needed.length === 0) {
    throw new TypeError(`requireBearer: option "scope" names no scope (${JSON.stringify(scope)}); leave it out for a route any valid token may call`);
  }
  return needed;
}

const BEARER_OPTIONS: ReadonlySet<string> = new Set<keyof RequireBearerOptions>(['scope', 'audience', 'dpop']);

/** Express's `next`. */
export type NodeNext = (err?: unknown) => void;


/** Builds `requireBearer` for one runtime. */
export function createRequireBearer(
  runtime: Runtime,
): (options?: RequireBearerOptions) => (req: IncomingMessage, res: ServerResponse, next: NodeNext) => void {
  const { config, telemetry } = runtime;

  return function requireBearer(options: RequireBearerOptions = {}) {
    // A typo (`scopes`) or a bare scope string would otherwise leave the route without its scope check.
    if (typeof options !== 'object' || options === null || Array.isArray(options)) {
      const got = typeof options === 'string' ? JSON.stringify(options) : Array.isArray(options) ? 'an array' : options === null ? 'null' : `a ${typeof options}`;
      throw new TypeError(`requireBearer: options must be an object such as { scope: 'jobs:write' }, got ${got}`);
    }
    checkKnownKeys(options, BEARER_OPTIONS, 'requireBearer');
    const needed = parseScopeOption(options.scope);
    const neededText = needed.join(' ');
    const audience = parseAudienceOption(options.audience, config.audience);
    const dpop = runtime.dpop;
    const dpopMode = options.dpop ?? 'allowed';
    if (dpopMode !== 'allowed' && dpopMode !== 'required') throw new TypeError(`requireBearer: option "dpop" must be "allowed" or "required": ${JSON.stringify(dpopMode)}`);
    if (dpopMode === 'required' && dpop === undefined) throw new TypeError('requireBearer: option "dpop" is "required", but DPoP is off (the dpop option of createServiceAccounts is false)');
    const required = dpopMode === 'required';
    // RFC 9449 §7.1: what this route's Bearer-side answers offer.
    const routeChallenge: DpopChallenge | undefined = dpop === undefined ? undefined : required ? dpop.challenges.required : dpop.challenges.offered;

    const refuse = (res: ServerResponse, error: unknown, claims?: AccessTokenClaims, account?: AccountRecord, challenge = routeChallenge): void => {
      const err = toOAuthError(error);
      telemetry.bearerCheckRefused(err.code, err instanceof InvalidTokenError ? err.reason : undefined);
      if (err instanceof InvalidTokenError || err instanceof InsufficientScopeError) {
        runtime.audit({
          type: 'token.refused',
          reason: err instanceof InvalidTokenError ? err.reason : 'insufficient_scope',
          ...(claims ? { clientId: claims.sub, tokenId: claims.jti } : {}),
          ...(account ? { name: account.name } : {}),
        });
      }
      sendOAuthError(res, err, config.realm, challenge);
    };

    /**
     * This route's principal of a good token: its audience is the route's (RFC 9068 §4: the resource
     * server checks that `aud` names it; one string comparison) and its scopes hold the route's, else the
     * refusal. The same for Bearer and DPoP requests.
     */
    const grant = (claims: AccessTokenClaims, account: AccountRecord, credential: TokenCredential): ServiceAccountPrincipal | InvalidTokenError | InsufficientScopeError => {
      if (claims.aud !== audience) return new InvalidTokenError('wrong_audience');
      const granted = grantedScopes(claims, account, needed);
      if (granted === undefined) return new InsufficientScopeError(neededText);
      return principalOf(claims, account, credential, granted);
    };

    /**
     * A good token that lacks the route's scope (403): its account is known, so `req.serviceAccount`
     * names it (with the token's own scopes) for what runs when the answer is sent, such as a request
     * log. No route handler runs.
     */
    const identifyForbidden = (req: IncomingMessage, claims: AccessTokenClaims, account: AccountRecord, credential: TokenCredential): void => {
      (req as IncomingMessage & { serviceAccount?: ServiceAccountPrincipal }).serviceAccount = principalOf(claims, account, credential, claims.scope === undefined ? [] : claims.scope.split(' '));
    };

    // One receiver per route: the token check answers it with the request, response and next passed through.
    const outcome: TokenCheckReceiver<IncomingMessage, ServerResponse, NodeNext> = {
      good(claims, account, credential, req, res, next) {
        // RFC 9449 §7.2: a DPoP-bound token is not a Bearer token.
        if (claims.cnf !== undefined) return refuse(res, new InvalidTokenError('dpop_bound'), claims, account);
        const principal = grant(claims, account, credential);
        if (principal instanceof Error) {
          if (principal instanceof InsufficientScopeError) identifyForbidden(req, claims, account, credential);
          return refuse(res, principal, claims, account);
        }
        (req as IncomingMessage & { serviceAccount?: ServiceAccountPrincipal }).serviceAccount = principal;
        next();
      },
      refused(error, claims, account, _req, res) {
        // An expired token's claims name the account for the audit event, when its status is cached.
        if (account === undefined && claims !== undefined && error.reason === 'expired') account = runtime.accounts.peek(claims.sub)?.account;
        refuse(res, error, claims, account);
      },
      failed(error, claims, _req, res) {
        refuse(res, error, claims);
      },
    };

    const admitDpop = dpop && createDpopAdmission({ runtime, dpop, grant, refuse, identifyForbidden });

    const check = (req: IncomingMessage, res: ServerResponse, next: NodeNext): void => {
      let token: string;
      try {
        // Node keeps only the first of several Authorization headers: look at them all (RFC 6750 §2).
        if (hasRepeatedAuthorization(req.rawHeaders)) throw new InvalidRequestError('The request must carry exactly one Authorization header', { challenge: 'Bearer' });
        const header = req.headers.authorization;
        if (admitDpop !== undefined && header !== undefined && usesDpopScheme(header)) return admitDpop(header, req, res, next);
        token = extractBearerToken(header);
        // A route that requires DPoP: a Bearer token is refused before it is even verified.
        if (required) throw new InvalidTokenError('dpop_required');
      } catch (err) {
        return refuse(res, err);
      }
      // The token names the credential (secret, key or federated credential) it was issued against; revoking that credential revokes it.
      checkToken(runtime, token, outcome, req, res, next);
    };
    return telemetry.traceBearerChecks ? traced(check) : check;
  };

  /** `check` with a span per request (the `telemetry.traceBearerChecks` option), ended when the request is passed on. */
  function traced(check: (req: IncomingMessage, res: ServerResponse, next: NodeNext) => void) {
    return (req: IncomingMessage, res: ServerResponse, next: NodeNext): void => {
      const span = RequestSpan.start(telemetry.tracer, 'service_accounts.bearer_check', res);
      if (!span) return check(req, res, next);
      check(req, res, (err) => {
        span.end();
        next(err);
      });
    };
  }
}
