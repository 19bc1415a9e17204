/**
 * @module service-accounts-config
 * What a host may read of an instance's configuration (`sa.config`): the settings it runs with,
 * defaults filled in. Never a key, the store or a hook: those stay inside the instance.
 */
import type { SigningAlgorithm } from './access-tokens/keyring.js';
import type { ResolvedConfig } from './config.js';

/**
 * The settings an instance runs with (`sa.config`), defaults filled in and frozen: what a host reads
 * to log its set-up, plan a key rotation or size a timeout. It holds no key material, no store and no
 * hook: those are given to `createServiceAccounts()` and stay inside the instance.
 *
 * @example
 * ```ts
 * import type { ServiceAccountsConfig } from 'express-service-accounts'
 *
 * const config: ServiceAccountsConfig = sa.config
 * console.log(`tokens for ${config.audience} live ${config.tokenLifetime} s, signed ${config.signingKey.alg} by key ${config.signingKey.kid}`)
 * if (config.failureLimit === false) console.warn('the token endpoint has no failed-authentication limit')
 * // Before removing an old key: wait out the tokens it signed (docs/rotation.md).
 * const quietForMs = (config.maxAccessTokenLifetime + config.clockTolerance) * 1000
 * ```
 */
export interface ServiceAccountsConfig {
  /** The `iss` of issued tokens, checked on every bearer token. */
  readonly issuer: string;
  /** The `aud` of issued tokens, checked on every bearer token. */
  readonly audience: string;
  /** Access token lifetime in seconds (`expires_in`). */
  readonly tokenLifetime: number;
  /**
   * The longest lifetime an account's own token policy may give its tokens, in seconds (equal to
   * `tokenLifetime` unless raised): how long a token issued now may stay valid, so how long to keep an
   * old signing key, or to wait before calling a credential quiet.
   */
  readonly maxAccessTokenLifetime: number;
  /** Leeway in seconds when checking `exp`, `nbf` and `iat`. */
  readonly clockTolerance: number;
  /** The `realm` of `WWW-Authenticate` challenges. */
  readonly realm: string;
  /** The key that signs new tokens: its key ID (the `kid` of their header) and algorithm, never the key itself. */
  readonly signingKey: { readonly kid: string; readonly alg: SigningAlgorithm };
  /** The key ID of every key that verifies tokens, the signing key's first. */
  readonly verificationKeyIds: readonly string[];
  /** Live (unrevoked) secrets allowed per account. */
  readonly maxSecretsPerAccount: number;
  /** bcrypt cost factor of new secret hashes. */
  readonly secretHashRounds: number;
  /** The longest a new credential may live, in seconds (`maxCredentialLifetime`); `null`: no bound, an expiry is optional. */
  readonly maxCredentialLifetime: number | null;
  /** Milliseconds a store call may take before the request is answered 503. */
  readonly storeTimeout: number;
  /** Secret checks allowed to wait for a bcrypt slot before token requests get 503. */
  readonly maxQueuedSecretChecks: number;
  /** Largest token request body in bytes. */
  readonly bodyLimit: number;
  /** Whether token requests a browser marks are accepted. */
  readonly allowBrowserRequests: boolean;
  /** Tokens of one client that may be revoked and not yet expired at once (`POST {mount}/revoke`). */
  readonly maxRevokedTokensPerClient: number;
  /**
   * The failed-authentication limiter, or `false` when it is off. `shared` is whether the counts are
   * kept in Redis (across instances) rather than in this process; `maxKeys` bounds the in-memory counts.
   */
  readonly failureLimit:
    | { readonly max: number; readonly windowSeconds: number; readonly ipv6Prefix: number; readonly maxKeys: number; readonly shared: boolean }
    | false;
  /** Milliseconds an account's status may be cached. */
  readonly statusCacheTtl: number;
  /** Whether each bearer check gets a trace span. */
  readonly traceBearerChecks: boolean;
}

/**
 * The host's view of a resolved configuration: its settings, frozen, without keys, store or hooks.
 *
 * @example
 * ```ts
 * import { resolveConfig } from './config.js'
 *
 * const view = describeConfig(resolveConfig(options))
 * ```
 */
export function describeConfig(config: ResolvedConfig): ServiceAccountsConfig {
  const { signer, keys } = config.keyring;
  const limit = config.failureLimit;
  return Object.freeze({
    issuer: config.issuer,
    audience: config.audience,
    tokenLifetime: config.tokenLifetime,
    maxAccessTokenLifetime: config.maxAccessTokenLifetime,
    clockTolerance: config.clockTolerance,
    realm: config.realm,
    signingKey: Object.freeze({ kid: signer.kid, alg: signer.alg }),
    verificationKeyIds: Object.freeze([signer.kid, ...[...keys.keys()].filter((kid) => kid !== signer.kid)]),
    maxSecretsPerAccount: config.maxSecretsPerAccount,
    secretHashRounds: config.secretHashRounds,
    maxCredentialLifetime: config.maxCredentialLifetime ?? null,
    storeTimeout: config.storeTimeout,
    maxQueuedSecretChecks: config.maxQueuedSecretChecks,
    bodyLimit: config.bodyLimit,
    allowBrowserRequests: config.allowBrowserRequests,
    maxRevokedTokensPerClient: config.maxRevokedTokensPerClient,
    failureLimit:
      limit === false
        ? false
        : Object.freeze({
            max: limit.max,
            windowSeconds: limit.windowSeconds,
            ipv6Prefix: limit.ipv6Prefix,
            maxKeys: limit.maxKeys,
            shared: limit.redis !== undefined,
          }),
    statusCacheTtl: config.statusCacheTtl,
    traceBearerChecks: config.telemetry.traceBearerChecks === true,
  });
}
