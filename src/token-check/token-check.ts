/**
 * @module token-check
 * Whether an access token is still good, the one rule shared by `requireBearer()` and the
 * introspection and revocation endpoints, so an endpoint never calls active a token the bearer check
 * refuses: its signature and claims verify (through the instance's one {@link VerifiedTokenCache}) and
 * it has not expired; its account exists and is enabled; its audience (`aud`) is one the account may
 * get now (the server's audience for an account without resources, else one of its resources, RFC
 * 8707), so a change of an account's resources takes its tokens for other audiences with it; the
 * credential it was issued against (its `secret_id` claim names a secret, a public key or a federated
 * credential) is known, live and not past its `expiresAt` (read from the record the instance holds,
 * against its clock: nothing is written when a credential expires, yet every instance refuses its
 * tokens from that instant); and the token itself is not on the deny-list.
 *
 * Answered synchronously when the instance's caches can tell (the account's status is cached and
 * fresh, and the deny-list can answer), with no allocation on the path that admits (the bearer
 * check's hot path); otherwise after start-up and a read of the store. The answer goes to a
 * {@link TokenCheckReceiver} together with up to three values passed through unchanged, so a caller
 * needs no closure per token. The endpoints read it as an {@link Inspection} ({@link TokenInspector}).
 * Framework-free.
 */
import { InvalidTokenError, type InvalidTokenReason } from '../errors.js';
import { readVerifiedClaims, verifyAccessToken, type AccessTokenClaims, type TokenVerification } from '../access-tokens/access-token.js';
import type { AccountCache } from '../runtime/account-cache.js';
import type { RevokedTokenCache } from '../runtime/revoked-token-cache.js';
import { findCredential, hasExpired } from '../store/credential-kinds.js';
import type { AccountRecord, FederatedCredentialRecord, KeyRecord, SecretRecord } from '../store/account-store.js';

/** The credential (secret, public key or federated credential) a good token was issued against. */
export type TokenCredential = SecretRecord | KeyRecord | FederatedCredentialRecord;

interface Verified {
  readonly token: string;
  readonly claims: AccessTokenClaims;
}

/** The signature segment: unique per token in practice, and far shorter to hash than the whole token. */
function signatureOf(token: string): string {
  return token.slice(token.lastIndexOf('.') + 1);
}

/**
 * The claims of tokens whose signature and claims already verified, one cache per instance for every
 * token check, so a client that presents the same token again costs a map lookup instead of a
 * signature check. A token is immutable: only its expiry can change the answer, and that is checked on
 * every hit against the configured clock. Revocation and disabling are not decided here: the check
 * consults the account status on every request. Bounded (the oldest entry goes first); only tokens
 * that verified are ever stored.
 */
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

/** What the token check reads of an instance (its `Runtime`): the clock and audience, its caches, its start-up. */
export interface TokenCheckRuntime {
  readonly config: { readonly now: () => Date; readonly audience: string };
  readonly verifiedTokens: VerifiedTokenCache;
  readonly accounts: Pick<AccountCache, 'peek' | 'get'>;
  readonly revokedTokens: Pick<RevokedTokenCache, 'check' | 'isRevoked'>;
  ready(): Promise<void>;
}

/** What {@link checkToken} hands its answer to; `a`, `b` and `c` are the values given to it, unchanged. */
export interface TokenCheckReceiver<A, B, C> {
  /** The token is good. */
  good(claims: AccessTokenClaims, account: AccountRecord, credential: TokenCredential, a: A, b: B, c: C): void;
  /**
   * The token is not good, and why; with its claims when its signature verified (also when it expired),
   * and its account when the token verified, had not expired and its account exists.
   */
  refused(error: InvalidTokenError, claims: AccessTokenClaims | undefined, account: AccountRecord | undefined, a: A, b: B, c: C): void;
  /**
   * No answer: start-up failed, or the store failed or timed out (`StoreUnavailableError`); with the
   * token's claims when its signature verified.
   */
  failed(error: unknown, claims: AccessTokenClaims | undefined, a: A, b: B, c: C): void;
}

/**
 * Whether a verified, unexpired token still stands: the credential it was issued against, or why not.
 * A deleted account, an unknown credential or an audience the account may not get (not `audience`,
 * the server's, for an account without resources; not one of its resources otherwise) comes first (`invalid`), then a revoked token or
 * a revoked or expired credential (`revoked`: an expired credential fails like a revoked one), then a disabled account (`disabled`).
 * `now` is the instance's clock, in milliseconds since the epoch.
 *
 * @example
 * ```ts
 * declare const claims: AccessTokenClaims // of a token whose signature verified and that has not expired
 * const standing = tokenStanding(claims, account, runtime.revokedTokens.check(claims.jti) === true, runtime.config.audience, Date.now())
 * if (typeof standing === 'string') throw new InvalidTokenError(standing)
 * ```
 */
export function tokenStanding(
  claims: AccessTokenClaims,
  account: AccountRecord | undefined,
  tokenRevoked: boolean,
  audience: string,
  now: number,
): TokenCredential | InvalidTokenReason {
  // A deleted account or an unknown credential: the token no longer maps to anything.
  const credential = findCredential(account, claims.secret_id);
  if (account === undefined || credential === undefined) return 'invalid';
  // The audience must be one the account may get now: the server's when it has no resources (one
  // comparison on the common path), else one of its resources; a change of resources takes old tokens with it.
  const resources = account.resources;
  if (resources === undefined || resources.length === 0 ? claims.aud !== audience : !resources.includes(claims.aud)) return 'invalid';
  if (tokenRevoked || credential.revokedAt !== null || hasExpired(credential, now)) return 'revoked';
  if (!account.enabled) return 'disabled';
  return credential;
}

function answer<A, B, C>(
  receiver: TokenCheckReceiver<A, B, C>,
  audience: string,
  claims: AccessTokenClaims,
  account: AccountRecord | undefined,
  tokenRevoked: boolean,
  now: number,
  a: A,
  b: B,
  c: C,
): void {
  const standing = tokenStanding(claims, account, tokenRevoked, audience, now);
  if (typeof standing === 'string') return receiver.refused(new InvalidTokenError(standing), claims, account, a, b, c);
  receiver.good(claims, account!, standing, a, b, c); // it stands, so its account exists
}

/**
 * Decides whether `token` is still good (see the module description) and hands the answer to `receiver`,
 * synchronously when the instance's caches can tell.
 *
 * @example
 * ```ts
 * import type { ServerResponse } from 'node:http'
 *
 * // Made once, not per token: the response is passed through.
 * const receiver: TokenCheckReceiver<ServerResponse, undefined, undefined> = {
 *   good: (claims, account, credential, res) => void res.end(`hello, ${account.name}`),
 *   refused: (error, claims, account, res) => void res.writeHead(401).end(error.message),
 *   failed: (error, claims, res) => void res.writeHead(503).end(),
 * }
 * checkToken(runtime, token, receiver, res, undefined, undefined)
 * ```
 */
export function checkToken<A, B, C>(runtime: TokenCheckRuntime, token: string, receiver: TokenCheckReceiver<A, B, C>, a: A, b: B, c: C): void {
  let claims: AccessTokenClaims;
  const now = runtime.config.now();
  try {
    claims = runtime.verifiedTokens.verify(token, now);
  } catch (err) {
    if (!(err instanceof InvalidTokenError)) return receiver.failed(err, undefined, a, b, c);
    // An expired token passed its signature check: its claims name the token for the audit event.
    return receiver.refused(err, err.reason === 'expired' ? readVerifiedClaims(token) : undefined, undefined, a, b, c);
  }
  // Fast path: the account's status is cached and fresh, and the deny-list can answer (see AccountCache
  // and RevokedTokenCache for the 1 s bound).
  const cached = runtime.accounts.peek(claims.sub);
  const tokenRevoked = runtime.revokedTokens.check(claims.jti, now.getTime());
  if (cached !== undefined && tokenRevoked !== undefined) return answer(receiver, runtime.config.audience, claims, cached.account, tokenRevoked, now.getTime(), a, b, c);
  runtime
    .ready()
    .then(() => Promise.all([runtime.accounts.get(claims.sub), runtime.revokedTokens.isRevoked(claims.jti)]))
    .then(
      ([account, revoked]) => {
        // Read the clock again: the store read may have taken a while, and the token may have expired
        // meanwhile (RFC 7519 §4.1.4: never accepted on or after its expiry). A cache hit, the one expiry rule.
        const later = runtime.config.now();
        try {
          runtime.verifiedTokens.verify(token, later);
        } catch (err) {
          return err instanceof InvalidTokenError ? receiver.refused(err, claims, undefined, a, b, c) : receiver.failed(err, claims, a, b, c);
        }
        answer(receiver, runtime.config.audience, claims, account, revoked, later.getTime(), a, b, c);
      },
      (err: unknown) => receiver.failed(err, claims, a, b, c),
    );
}

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

/**
 * Decides whether an access token is active, for the revocation and introspection endpoints, with
 * {@link checkToken}: the same rule and the same verified-token cache as `requireBearer()`. One per instance.
 */
export class TokenInspector {
  constructor(private readonly runtime: TokenCheckRuntime) {}

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
   * The account of this client ID, as the token check reads it (fresh from the cache, else from the
   * store): for a rule beyond the token's own standing, such as introspection's client-account boundary
   * for a token that expired, whose account the check does not read.
   * @throws {StoreUnavailableError} the store failed or timed out
   */
  accountOf(clientId: string): Promise<AccountRecord | undefined> {
    return this.runtime.ready().then(() => this.runtime.accounts.get(clientId));
  }

  /**
   * Whether `token` is active now.
   * @throws {StoreUnavailableError} the store failed or timed out (→ 503): no answer is better than a wrong one
   */
  inspect(token: string): Promise<Inspection> {
    return new Promise((resolve, reject) => checkToken(this.runtime, token, toInspection, resolve, reject, undefined));
  }
}
