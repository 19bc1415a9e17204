/**
 * @module service-account-principal
 * The authenticated principal `requireBearer()` puts on `req.serviceAccount`, and how it is made from
 * a good token: its granted scopes, checked against the route's.
 */
import type { AccessTokenClaims } from '../access-tokens/access-token.js';
import type { AccountRecord } from '../store/account-store.js';
import type { TokenCredential } from '../token-check/token-check.js';

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
