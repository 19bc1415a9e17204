/**
 * @module service-account-principal
 * The authenticated principal `requireBearer()` puts on `req.serviceAccount`.
 */

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
