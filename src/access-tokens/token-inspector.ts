/**
 * @module token-inspector
 * Decides whether an access token is active, for the revocation and introspection endpoints: the same
 * verification and the same standing rule as `requireBearer()` (signature, issuer, audience, expiry,
 * account, credential, deny-list), so an endpoint never calls active a token the bearer check refuses.
 * Framework-free.
 */
import { InvalidTokenError, type InvalidTokenReason } from '../errors.js';
import { tokenStanding } from './token-standing.js';
import type { AccountCache } from '../runtime/account-cache.js';
import type { AccountRecord } from '../store/account-store.js';
import type { RevokedTokenCache } from '../runtime/revoked-token-cache.js';
import { readVerifiedClaims, type AccessTokenClaims, type TokenVerification } from './access-token.js';
import { VerifiedTokenCache } from './verified-token-cache.js';

/**
 * What {@link TokenInspector.inspect} found: an active token with its claims and account, or an inactive
 * one with the reason, and its claims (and account) when its signature verified.
 */
export type Inspection =
  | { readonly active: true; readonly claims: AccessTokenClaims; readonly account: AccountRecord }
  | {
      readonly active: false;
      readonly reason: InvalidTokenReason;
      readonly claims?: AccessTokenClaims;
      readonly account?: AccountRecord;
    };

/** See the module description. One per instance. */
export class TokenInspector {
  readonly #tokens: VerifiedTokenCache;

  constructor(
    settings: TokenVerification,
    private readonly parts: { readonly accounts: AccountCache; readonly revokedTokens: RevokedTokenCache; readonly now: () => Date },
  ) {
    this.#tokens = new VerifiedTokenCache(settings);
  }

  /** The claims of a token whose signature and claims verify and that has not expired, else `undefined`. */
  claimsOf(token: string): AccessTokenClaims | undefined {
    try {
      return this.#tokens.verify(token, this.parts.now());
    } catch (err) {
      if (err instanceof InvalidTokenError) return undefined;
      throw err;
    }
  }

  /**
   * Whether `token` is active now.
   * @throws {StoreUnavailableError} the store failed or timed out (→ 503): no answer is better than a wrong one
   */
  async inspect(token: string): Promise<Inspection> {
    let claims: AccessTokenClaims;
    try {
      claims = this.#tokens.verify(token, this.parts.now());
    } catch (err) {
      if (!(err instanceof InvalidTokenError)) throw err;
      // An expired token passed its signature check: its claims name the token for the audit event.
      const expired = err.reason === 'expired' ? readVerifiedClaims(token) : undefined;
      return { active: false, reason: err.reason, ...(expired ? { claims: expired } : {}) };
    }
    const [account, revoked] = await Promise.all([
      this.parts.accounts.get(claims.sub),
      this.parts.revokedTokens.isRevoked(claims.jti),
    ]);
    const standing = tokenStanding(claims, account, revoked);
    if (typeof standing === 'string') return { active: false, reason: standing, claims, ...(account ? { account } : {}) };
    return { active: true, claims, account: account! };
  }
}
