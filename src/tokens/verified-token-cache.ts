/**
 * @module verified-token-cache
 * Remembers the claims of tokens whose signature and claims already verified, so a client that
 * presents the same token again costs a map lookup instead of a signature check. A token is
 * immutable: only its expiry can change the answer, and that is checked on every hit against the
 * configured clock. Revocation and disabling are not decided here: the bearer check consults the
 * account status on every request. Bounded (LRU); only tokens that verified are ever stored.
 */
import { LRUCache } from 'lru-cache';
import { InvalidTokenError } from '../errors.js';
import { verifyAccessToken, type AccessTokenClaims, type TokenVerification } from './access-token.js';

export class VerifiedTokenCache {
  readonly #claims: LRUCache<string, AccessTokenClaims>;

  constructor(
    private readonly settings: TokenVerification,
    max = 10_000,
  ) {
    this.#claims = new LRUCache({ max });
  }

  /**
   * Verifies a token (or finds it verified before) and returns its claims.
   * @throws {InvalidTokenError} as {@link verifyAccessToken} does
   */
  verify(token: string, now: Date): AccessTokenClaims {
    const known = this.#claims.get(token);
    if (known) {
      // Same rule as jsonwebtoken: expired once now >= exp + tolerance.
      if (Math.floor(now.getTime() / 1000) >= known.exp + this.settings.clockTolerance) {
        this.#claims.delete(token);
        throw new InvalidTokenError('expired');
      }
      return known;
    }
    const claims = verifyAccessToken(this.settings, token, now);
    this.#claims.set(token, claims);
    return claims;
  }
}
