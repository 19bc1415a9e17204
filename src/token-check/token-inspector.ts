/**
 * @module token-inspector
 * Decides whether an access token is active, for the revocation and introspection endpoints, with
 * {@link checkToken}: the same rule and the same verified-token cache as `requireBearer()`, so an
 * endpoint never calls active a token the bearer check refuses. Framework-free.
 */
import { InvalidTokenError, type InvalidTokenReason } from '../errors.js';
import type { AccessTokenClaims } from '../access-tokens/access-token.js';
import type { Runtime } from '../create-runtime.js';
import type { AccountRecord } from '../store/account-store.js';
import { checkToken, type TokenCheckReceiver } from './token-check.js';

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

type Settle = (inspection: Inspection) => void;

/** Turns the token check's answer into an {@link Inspection}; the promise's resolve and reject pass through. */
const toInspection: TokenCheckReceiver<Settle, (err: unknown) => void, undefined> = {
  good: (claims, account, _credential, resolve) => resolve({ active: true, claims, account }),
  refused: (error, claims, account, resolve) =>
    resolve({ active: false, reason: error.reason, ...(claims ? { claims } : {}), ...(account ? { account } : {}) }),
  failed: (error, _claims, _resolve, reject) => reject(error),
};

/** See the module description. One per instance. */
export class TokenInspector {
  constructor(private readonly runtime: Runtime) {}

  /** The claims of a token whose signature and claims verify and that has not expired, else `undefined`. */
  claimsOf(token: string): AccessTokenClaims | undefined {
    try {
      return this.runtime.verifiedTokens.verify(token, this.runtime.config.now());
    } catch (err) {
      if (err instanceof InvalidTokenError) return undefined;
      throw err;
    }
  }

  /**
   * Whether `token` is active now.
   * @throws {StoreUnavailableError} the store failed or timed out (→ 503): no answer is better than a wrong one
   */
  inspect(token: string): Promise<Inspection> {
    return new Promise((resolve, reject) => checkToken(this.runtime, token, toInspection, resolve, reject, undefined));
  }
}
