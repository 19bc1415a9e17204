/**
 * @module admin-options
 * `AdminApiOptions` → `resolveAdminConfig()` → the frozen settings the admin API runs with. The same
 * settings, with the same defaults and checks, are part of `createServiceAccounts()`'s options.
 */
import type { AuditEvent } from './audit/audit-events.js';
import type { AccountStore } from './store/account-store.js';
import { checkKnownKeys, fail, integer, nonEmptyString, optionalFunction } from './config-checks.js';
import { resolveAllowedIssuers } from './federation/federation-options.js';
import { MAX_CLOCK_TOLERANCE, MAX_TOKEN_LIFETIME } from './token-grant.js';

/**
 * Options of {@link createAdminApi}: a store and the settings of provisioning, nothing about tokens.
 * Only `store` is required.
 *
 * @example
 * ```ts
 * import { MemoryAccountStore, type AdminApiOptions } from 'express-service-accounts'
 *
 * const options: AdminApiOptions = {
 *   store: new MemoryAccountStore(),
 *   maxSecretsPerAccount: 3,
 *   onAudit: (event) => console.log(event.type, event.clientId),
 * }
 * ```
 */
export interface AdminApiOptions {
  /** Where accounts and hashed secrets live. Closing it stays the caller's job. */
  store: AccountStore;
  /** Live (unrevoked) credentials, secrets, public keys and federated credentials together, allowed per account; adding one more fails. @default 5 */
  maxSecretsPerAccount?: number;
  /**
   * The issuer identifier of the server whose accounts these are (its `issuer` option). Used only to
   * show what a federated credential without an explicit audience means: the outside token must
   * carry this value in `aud`. Without it, such a credential's `audience` is shown as `null`.
   * `createServiceAccounts(...).admin` has it already.
   */
  issuer?: string;
  /**
   * The only issuers a federated credential may name, and no JWK Set URL of a credential's own: give
   * the server's `federation.allowedIssuers` (with the issuers of its `federation.issuers`) so a
   * standalone admin API, or an admin router built on it, refuses what the server would never fetch.
   * `createServiceAccounts(...).admin` has it already.
   * @default any https issuer
   */
  allowedIssuers?: readonly string[];
  /** bcrypt cost factor for new secret hashes (4–15). @default 10 */
  secretHashRounds?: number;
  /**
   * The longest a new credential (secret, public key or federated credential) may live, in seconds
   * (1 to 3650 days). With it, every new credential must be given an expiry (`expiresIn` or
   * `expiresAt`, or the CLI's `--expires-in`) no further ahead than this, and one without, or beyond
   * it, is refused with `invalid_input`; credentials that already exist are left as they are
   * (docs/rotation.md). The store must keep expiry (`keepsCredentialExpiry`).
   * @default none: an expiry is optional and unbounded
   */
  maxCredentialLifetime?: number;
  /**
   * The access token lifetime, in seconds, of the server whose tokens are revoked by ID (its
   * `tokenLifetime` option). A token revoked by ID (`revokeToken`) is kept on the deny-list this long
   * plus the largest clock tolerance (300 s): no token of that server can be admitted for longer.
   * `createServiceAccounts(...).admin` uses the server's own lifetime and clock tolerance.
   * @default 86400, the longest lifetime a server accepts
   */
  tokenLifetime?: number;
  /**
   * The longest access token lifetime, in seconds, an account may be given (`accessTokenLifetime`):
   * the server's `maxAccessTokenLifetime`. A longer one is refused with `invalid_input`.
   * `createServiceAccounts(...).admin` uses the server's own maximum.
   * @default `tokenLifetime`
   */
  maxAccessTokenLifetime?: number;
  /** Milliseconds a store call may take before it fails. @default 2000 */
  storeTimeout?: number;
  /**
   * Receives an audit event for every change (account created, enabled, disabled; secret created,
   * revoked). Never receives a secret. A hook that throws or rejects is ignored.
   */
  onAudit?: (event: AuditEvent) => void | Promise<void>;
  /** The clock, injectable for tests. @default () => new Date() */
  now?: () => Date;
}

/**
 * The validated settings the admin API runs with; the internal configuration of
 * `createServiceAccounts()` has them too. A host reads the limits from `sa.config`.
 *
 * @example
 * ```ts
 * const settings: ResolvedAdminConfig = resolveAdminConfig({ store, maxSecretsPerAccount: 3 })
 * console.log(`at most ${settings.maxSecretsPerAccount} live credentials (secrets, keys, federated credentials) per account`) // as sa.config.maxSecretsPerAccount
 * ```
 */
export interface ResolvedAdminConfig {
  readonly store: AccountStore;
  readonly maxSecretsPerAccount: number;
  /** The server's issuer identifier, when known: the audience of a federated credential that names none. */
  readonly issuer: string | undefined;
  /** The only issuers a federated credential may name (the server's `federation.allowedIssuers`); `undefined`: any. */
  readonly allowedIssuers: ReadonlySet<string> | undefined;
  readonly secretHashRounds: number;
  /** The longest a new credential may live, in seconds; `undefined`: no bound, and an expiry is optional. */
  readonly maxCredentialLifetime: number | undefined;
  /** Seconds a token revoked by ID stays on the deny-list: the longest a token of the server can still be admitted. */
  readonly revokedTokenRetention: number;
  /** The longest `accessTokenLifetime` an account may be given, in seconds. */
  readonly maxAccessTokenLifetime: number;
  readonly storeTimeout: number;
  readonly onAudit: ((event: AuditEvent) => void | Promise<void>) | undefined;
  readonly now: () => Date;
}

/** The longest `maxCredentialLifetime`, and the furthest expiry a credential may be given: 3650 days. */
const MAX_CREDENTIAL_LIFETIME = 3650 * 86_400;

const ADMIN_OPTIONS: ReadonlySet<string> = new Set<keyof AdminApiOptions>([
  'store', 'maxSecretsPerAccount', 'issuer', 'allowedIssuers', 'secretHashRounds', 'maxCredentialLifetime', 'tokenLifetime', 'maxAccessTokenLifetime', 'storeTimeout', 'onAudit', 'now',
]);

/**
 * Checks the admin settings among a larger set of options (unknown keys are the caller's concern) and
 * fills their defaults. Throws a `TypeError` naming the first bad one. `revokedTokenRetention` is
 * decided by the caller, who knows the token lifetime.
 *
 * @example
 * ```ts
 * const { store, maxSecretsPerAccount } = resolveAdminSettings(options, 3600 + 5, 3600)
 * ```
 */
export function resolveAdminSettings(
  options: Omit<AdminApiOptions, 'tokenLifetime' | 'maxAccessTokenLifetime'>,
  revokedTokenRetention: number,
  maxAccessTokenLifetime: number,
): ResolvedAdminConfig {
  const store = options.store;
  if (typeof store !== 'object' || store === null || typeof store.findAccount !== 'function') {
    fail('store', 'must implement AccountStore');
  }
  return {
    store,
    maxSecretsPerAccount: integer('maxSecretsPerAccount', options.maxSecretsPerAccount, 5, 1, 100),
    issuer: options.issuer === undefined ? undefined : nonEmptyString('issuer', options.issuer),
    allowedIssuers: resolveAllowedIssuers('allowedIssuers', options.allowedIssuers),
    secretHashRounds: integer('secretHashRounds', options.secretHashRounds, 10, 4, 15),
    maxCredentialLifetime:
      options.maxCredentialLifetime === undefined ? undefined : integer('maxCredentialLifetime', options.maxCredentialLifetime, 0, 1, MAX_CREDENTIAL_LIFETIME),
    revokedTokenRetention,
    maxAccessTokenLifetime,
    storeTimeout: integer('storeTimeout', options.storeTimeout, 2000, 1, 60_000),
    onAudit: optionalFunction('onAudit', options.onAudit),
    now: optionalFunction('now', options.now) ?? (() => new Date()),
  };
}

/**
 * Validates {@link AdminApiOptions} once, fills defaults and returns them frozen. Throws a `TypeError`
 * naming the first bad option, including any option the admin API does not know.
 *
 * @example
 * ```ts
 * const settings = resolveAdminConfig({ store, maxSecretsPerAccount: 3 })
 * ```
 */
export function resolveAdminConfig(options: AdminApiOptions): ResolvedAdminConfig {
  checkKnownKeys(options, ADMIN_OPTIONS);
  const tokenLifetime = integer('tokenLifetime', options.tokenLifetime, MAX_TOKEN_LIFETIME, 1, MAX_TOKEN_LIFETIME);
  const maxAccessTokenLifetime = integer('maxAccessTokenLifetime', options.maxAccessTokenLifetime, tokenLifetime, 1, MAX_TOKEN_LIFETIME);
  // The server's clock tolerance is not known here: its largest value keeps the entry long enough.
  const longest = Math.max(tokenLifetime, maxAccessTokenLifetime);
  return Object.freeze(resolveAdminSettings(options, longest + MAX_CLOCK_TOLERANCE, maxAccessTokenLifetime));
}
