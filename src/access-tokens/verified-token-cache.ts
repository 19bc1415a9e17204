/**
 * @module verified-token-cache
 * Remembers the claims of tokens whose signature and claims already verified, so a client that
 * presents the same token again costs a map lookup instead of a signature check. A token is
 * immutable: only its expiry can change the answer, and that is checked on every hit against the
 * configured clock. Revocation and disabling are not decided here: the bearer check consults the
 * account status on every request. Bounded (the oldest entry goes first); only tokens that verified are ever stored.
 */
import { InvalidTokenError } from '../errors.js';
import { verifyAccessToken, type AccessTokenClaims, type TokenVerification } from './access-token.js';

interface Verified {
  readonly token: string;
  readonly claims: AccessTokenClaims;
}

/** The signature segment: unique per token in practice, and far shorter to hash than the whole token. */
function signatureOf(token: string): string {
  return token.slice(token.lastIndexOf('.') + 1);
}

export class VerifiedTokenCache {
  // Keyed by signature (hashing a ~300-character key on every request costs more than the rest of the
  // lookup); a hit counts only when the whole token is the same. A Map in insertion order, the oldest
  // dropped when full: a hit is one lookup (an LRU's bookkeeping on every request is not worth it:
  // an evicted token that comes back is verified once more).
  readonly #claims = new Map<string, Verified>();
  readonly #max: number;

  constructor(
    private readonly settings: TokenVerification,
    max = 10_000,
  ) {
    this.#max = max;
  }

  /**
   * Verifies a token (or finds it verified before) and returns its claims.
   * @throws {InvalidTokenError} as {@link verifyAccessToken} does
   */
  verify(token: string, now: Date): AccessTokenClaims {
    const key = signatureOf(token);
    const known = this.#claims.get(key);
    if (known !== undefined && known.token === token) {
      // Same rule as jsonwebtoken: expired once now >= exp + tolerance.
      if (Math.floor(now.getTime() / 1000) >= known.claims.exp + this.settings.clockTolerance) {
        this.#claims.delete(key);
        throw new InvalidTokenError('expired');
      }
      return known.claims;
    }
    const claims = verifyAccessToken(this.settings, token, now);
    this.#claims.delete(key);
    this.#claims.set(key, { token, claims });
    if (this.#claims.size > this.#max) this.#claims.delete(this.#claims.keys().next().value!);
    return claims;
  }
}
