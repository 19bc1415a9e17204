/**
 * @module config
 * `ServiceAccountsOptions` → `resolveConfig()` → a frozen `ResolvedConfig` that everything else receives.
 * Options are validated here once; a bad option throws a `TypeError` naming it.
 */
import type { AccountStore } from './store/account-store.js';
import type { AuditEvent } from './audit/audit-events.js';
import type { OperationalEvent } from './observability/operational-events.js';
import type { TelemetryOptions } from './observability/telemetry.js';
import { createKeyring, type Keyring, type SigningKeyOptions } from './access-tokens/keyring.js';
import { checkKnownKeys, fail, integer, nonEmptyString, optionalFunction } from './config-checks.js';
import { resolveAdminSettings, type ResolvedAdminConfig } from './admin-options.js';
import { resolveFederation, type FederationOptions, type ResolvedFederationConfig } from './federation/federation-options.js';

import { resolveDpop, type DpopOptions, type ResolvedDpopConfig } from './dpop/dpop-options.js';
import { MAX_CLOCK_TOLERANCE, MAX_TOKEN_LIFETIME } from './token-grant.js';
import type { ExtraTokenClaims } from './extra-token-claims.js';
import { resolveTokenEndpointAudience, type TokenEndpointAudienceSetting } from './token-endpoint-audience.js';

export { MAX_CLOCK_TOLERANCE, MAX_TOKEN_LIFETIME };

/** How many leading bits of an IPv6 address count as one client by default: a /64, what one host or site gets. */
export const DEFAULT_IPV6_PREFIX = 64;

/**
 * Options for the failed-authentication limiter of the token endpoint (429 `too_many_requests`).
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis'
 * import { createServiceAccounts, type FailureLimitOptions } from 'express-service-accounts'
 *
 * // 5 failures per client ID and per address every 5 minutes, counted across all instances.
 * const failureLimit: FailureLimitOptions = {
 *   max: 5,
 *   windowSeconds: 300,
 *   redis: new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { keyPrefix: 'api:' }),
 * }
 * const sa = createServiceAccounts({ store, issuer, signingKeys, failureLimit })
 * ```
 */
export interface FailureLimitOptions {
  /**
   * Failed client authentications allowed per client ID and per client address within one window;
   * every attempt after them, right or wrong, gets 429 until the window passes.
   * @default 10
   */
  max?: number;
  /** Window length in seconds. @default 60 */
  windowSeconds?: number;
  /**
   * IPv6 clients are counted per network prefix of this many bits (1–128), since one host usually holds
   * a whole /64. IPv4-mapped IPv6 addresses (`::ffff:192.0.2.1`) count as their IPv4 address.
   * @default 64
   */
  ipv6Prefix?: number;
  /**
   * Keys (client IDs and addresses) the in-memory counts hold at most, from 1,000 to 10,000,000; about
   * 280 bytes each. Past it, a new key evicts the key whose window ends soonest. Refused attempts never
   * add a key, so evicting one takes this many counted failures within its window (docs/security.md).
   * Not used with `redis`, whose own memory settings apply.
   * @default 100000
   */
  maxKeys?: number;
  /**
   * An ioredis client to share counts across instances (namespace it with ioredis' `keyPrefix`). Without it,
   * counts are kept in this process's memory.
   */
  redis?: unknown;
}

/**
 * Everything `createServiceAccounts()` needs. Only `store`, `issuer` and `signingKeys` are required.
 *
 * @example
 * ```ts
 * import { MemoryAccountStore, type ServiceAccountsOptions } from 'express-service-accounts'
 *
 * const options: ServiceAccountsOptions = {
 *   store: new MemoryAccountStore(),
 *   issuer: 'https://api.example.com',
 *   signingKeys: [{ alg: 'HS256', key: process.env.TOKEN_SIGNING_KEY! }],
 * }
 * ```
 */
export interface ServiceAccountsOptions {
  /** Where accounts and hashed secrets live. */
  store: AccountStore;
  /** The `iss` of issued tokens; checked on every bearer token. Usually the API's base URL. */
  issuer: string;
  /**
   * The `aud` of tokens issued without a resource (accounts without resources, docs/resources.md),
   * and the default audience of every route: `requireBearer()` without an `audience` option accepts
   * only tokens for it. @default issuer
   */
  audience?: string;
  /**
   * The keyring. The first key that can sign signs new tokens; every key verifies, so a key can be
   * rotated by putting the new one first and keeping the old one until its tokens expire.
   */
  signingKeys: SigningKeyOptions | readonly SigningKeyOptions[];
  /**
   * Access token lifetime in seconds (`expires_in`) of accounts without their own
   * `accessTokenLifetime`. @default 3600
   */
  tokenLifetime?: number;
  /**
   * The longest access token lifetime, in seconds, an account may be given (`accessTokenLifetime`,
   * docs/account-policy.md): the admin API refuses a longer one, and the token endpoint never issues a
   * longer token. Revoked tokens stay on the deny-list this long plus `clockTolerance`. At least
   * `tokenLifetime`, at most 86400.
   * @default `tokenLifetime`: accounts may shorten their tokens' lifetime, not lengthen it
   */
  maxAccessTokenLifetime?: number;
  /**
   * Adds claims to every access token: called on the token path, synchronously, with the account, the
   * granted scopes and the token's resource (`aud`), as a copy of its own (what it does to it never
   * reaches the instance's account); returns a plain object of JSON values, or `undefined` for none. It may not set a registered claim (`iss`, `sub`, `aud`, `exp`, `iat`, `nbf`,
   * `jti`, `client_id`, `scope`, `cnf`, `secret_id`, ...) and its JSON may not exceed 1024 bytes: then,
   * or when it throws, the token request is answered 500 `server_error` (nothing of the hook's result
   * or error reaches the client) and `onEvent` receives `extra_claims.refused`. See docs/account-policy.md.
   */
  extraTokenClaims?: ExtraTokenClaims;
  /** Leeway in seconds when checking `exp`, `nbf` and `iat`; at most 300. @default 5 */
  clockTolerance?: number;
  /**
   * The longest lifetime, in seconds, a client assertion (`private_key_jwt`) may have left: one whose
   * `exp` lies further ahead, beyond `clockTolerance`, is refused. The default accepts what widely used
   * clients send (Authlib signs for 3600 s); each assertion is accepted once whatever its lifetime, and
   * a lower value shortens the time a stolen, unused one could serve (docs/private-key-jwt.md). From 10 to 3600.
   * @default 3600
   */
  maxAssertionLifetime?: number;
  /**
   * Also accept the token endpoint URL as the sole `aud` of a key-pair client assertion that is not
   * explicitly typed (`typ: client-authentication+jwt`), as clients that follow OpenID Connect Core §9
   * make it (Authlib's default). `true` derives the URL per request: the issuer's origin, the path the
   * token router is mounted on, and `/token` (`https://api.example.com/oauth/token`); a string gives the
   * URL clients post to, when a proxy changes the path (and must, for an issuer with a path). Off by default: an assertion made out to a token
   * endpoint URL can be replayed here by another server the client trusts with the same key (audience
   * injection; see docs/private-key-jwt.md). Outside issuers' tokens are not affected.
   * @default false
   */
  acceptTokenEndpointAudience?: boolean | string;
  /**
   * Federated credentials: tokens of outside issuers (Kubernetes, GitHub Actions, SPIFFE, any OpenID
   * Connect provider) accepted as client credentials for the accounts that trust them. See
   * docs/federated-credentials.md. @default { maxTokenLifetime: 3600, allowHttpLoopback: false }
   */
  federation?: FederationOptions;
  /** The `realm` of `WWW-Authenticate` challenges. @default "service-accounts" */
  realm?: string;
  /**
   * DPoP sender-constrained tokens (RFC 9449, docs/dpop.md): a token request with a `DPoP` proof gets
   * a token bound to the proof's key (`token_type: "DPoP"`), which `requireBearer()` accepts only with
   * a fresh proof of that key. `false` turns DPoP off (no binding, no `DPoP` challenge, no metadata).
   * @default { algorithms: ['ES256', 'PS256'], proofMaxAge: 60, replay: 'memory', maxReplayEntries: 100000 }
   */
  dpop?: DpopOptions | false;
  /**
   * Receives audit events (tokens issued and refused, failed authentications, account and secret
   * changes). Never receives a secret. Called off the request path; a hook that throws or rejects is ignored.
   */
  onAudit?: (event: AuditEvent) => void | Promise<void>;
  /**
   * Told when the service degrades or recovers: the store becomes unreachable or answers again, the
   * change feed loses or regains its push connection, the limiter's Redis fails, the secret-check queue
   * fills up, a client reaches its revocation cap. A few events per outage, never one per request, and never a secret. Called off the
   * request path; what it throws or rejects is ignored. See docs/observability.md.
   */
  onEvent?: (event: OperationalEvent) => void | Promise<void>;
  /**
   * Tells the developer why a token request or a bearer token was refused: one line per refusal, with
   * the client ID, the reason, the method and what to do (docs/errors.md#debugging-401s). The client
   * still gets only `invalid_client` or `invalid_token`; a line never holds a secret, an assertion or a
   * token. `true` writes to `console.warn`, a function receives each line, `false` turns it off.
   * @default true when `NODE_ENV` is unset or `development`, false otherwise (`production`, `test`, ...)
   */
  debug?: boolean | ((line: string) => void);
  /**
   * OpenTelemetry metrics and traces (no-ops until your app installs an OpenTelemetry SDK).
   * @default the global providers; bearer checks are not traced
   */
  telemetry?: TelemetryOptions;
  /** Live (unrevoked) credentials, secrets, public keys and federated credentials together, allowed per account; adding one more fails. @default 5 */
  maxSecretsPerAccount?: number;
  /** bcrypt cost factor for new secret hashes (4–15). @default 10 */
  secretHashRounds?: number;
  /**
   * The longest a new credential (secret, public key or federated credential) may live, in seconds
   * (1 to 3650 days): every new credential must then be given an expiry no further ahead, or the
   * admin API, the admin router and the CLI refuse it (`invalid_input`). See docs/rotation.md.
   * @default none: an expiry is optional and unbounded
   */
  maxCredentialLifetime?: number;
  /**
   * Secret checks (bcrypt compares) allowed to wait while two run. bcrypt runs on libuv's thread pool,
   * which file system, DNS and zlib calls share: at most two compares run at once, and past this queue
   * a token request is answered 503 `temporarily_unavailable` with `Retry-After: 1` instead of piling up.
   * Repeat clients skip bcrypt entirely (their secret was verified once) and never wait here.
   * @default 256
   */
  maxQueuedSecretChecks?: number;
  /** Largest token request body in bytes; larger bodies get 413 `invalid_request`. @default 8192 */
  bodyLimit?: number;
  /**
   * Accept token requests that a browser marks (an `Origin` or `Sec-Fetch-Site` header). The client
   * credentials flow is for confidential backend clients only (RFC 6749 §4.4; see docs/security.md). No CORS headers are sent either way.
   * @default false
   */
  allowBrowserRequests?: boolean;
  /**
   * Let unrestricted accounts (provisioned without scopes) call the introspection endpoint
   * (`POST {mount}/introspect`). Otherwise only accounts holding the scope `token:introspect` may: an
   * unrestricted account usually belongs to a client, not to a resource server, and introspection tells
   * who holds which token. See docs/revocation-and-introspection.md.
   * @default false
   */
  allowUnrestrictedIntrospection?: boolean;
  /**
   * Tokens of one client that may be on the deny-list at once, revoked (`POST {mount}/revoke`) and not
   * yet expired. Every instance keeps each entry in memory until the token expires, so a client that
   * mints and revokes tokens in a loop is stopped here: one more revocation is answered 400
   * `invalid_request`, asking it to revoke the credential instead (one change revokes all its tokens),
   * and an operational event `token_revocations.limit_reached` is emitted. Revocations by an operator
   * (`sa.admin.revokeToken`, CLI `token revoke`) are not counted. From 1 to 1,000,000.
   * @default 1000
   */
  maxRevokedTokensPerClient?: number;
  /** The failed-authentication limiter, or `false` to turn it off. @default { max: 10, windowSeconds: 60, ipv6Prefix: 64, maxKeys: 100000 } */
  failureLimit?: FailureLimitOptions | false;
  /** Milliseconds a store call may take before the request is answered 503. @default 2000 */
  storeTimeout?: number;
  /**
   * Milliseconds an account's status may be cached when the store announces changes (`watch`).
   * Without `watch`, the cache lifetime is capped at 500 ms so revocation takes effect within 1 s.
   * @default 30000
   */
  statusCacheTtl?: number;
  /** The clock, injectable for tests. @default () => new Date() */
  now?: () => Date;
}

/**
 * The validated, frozen configuration every module of an instance receives. Internal: it holds the
 * keyring's private keys, the store and the hooks. A host reads `sa.config`, a `ServiceAccountsConfig`.
 *
 * @example
 * ```ts
 * import { createRuntime } from './create-runtime.js'
 *
 * const config: ResolvedConfig = resolveConfig({ store, issuer: 'https://api.example.com', signingKeys: [{ alg: 'HS256', key }] })
 * const runtime = createRuntime(config) // every part of the instance receives the same config
 * ```
 */
export interface ResolvedConfig extends ResolvedAdminConfig {
  readonly issuer: string;
  readonly audience: string;
  readonly keyring: Keyring;
  readonly tokenLifetime: number;
  readonly clockTolerance: number;
  readonly extraTokenClaims: ExtraTokenClaims | undefined;
  readonly maxAssertionLifetime: number;
  readonly acceptTokenEndpointAudience: TokenEndpointAudienceSetting;
  readonly federation: ResolvedFederationConfig;
  readonly realm: string;
  /** DPoP settings, or `false` when DPoP is off. */
  readonly dpop: ResolvedDpopConfig | false;
  readonly onEvent: ((event: OperationalEvent) => void | Promise<void>) | undefined;
  /** Where the `debug` lines go, or `undefined` when they are off. */
  readonly debug: ((line: string) => void) | undefined;
  readonly telemetry: Readonly<TelemetryOptions>;
  readonly maxQueuedSecretChecks: number;
  readonly bodyLimit: number;
  readonly allowBrowserRequests: boolean;
  readonly allowUnrestrictedIntrospection: boolean;
  readonly maxRevokedTokensPerClient: number;
  readonly failureLimit: Readonly<Required<Omit<FailureLimitOptions, 'redis'>> & { redis: unknown }> | false;
  readonly statusCacheTtl: number;
}

const KNOWN_OPTIONS = new Set<string>([
  'store', 'issuer', 'audience', 'signingKeys', 'tokenLifetime', 'maxAccessTokenLifetime', 'extraTokenClaims', 'clockTolerance', 'maxAssertionLifetime', 'acceptTokenEndpointAudience', 'federation', 'realm', 'dpop', 'onAudit', 'onEvent', 'debug', 'telemetry',
  'maxSecretsPerAccount', 'secretHashRounds', 'maxCredentialLifetime', 'maxQueuedSecretChecks', 'bodyLimit', 'allowBrowserRequests', 'allowUnrestrictedIntrospection',
  'maxRevokedTokensPerClient', 'failureLimit',
  'storeTimeout', 'statusCacheTtl', 'now',
]);

/**
 * The `debug` option: explicit `true`/`false`/function wins; unset, it is on when `NODE_ENV` is unset
 * or `development` (a developer's machine) and off otherwise, so production and test runs stay quiet.
 */
function resolveDebug(value: unknown, nodeEnv: string | undefined): ((line: string) => void) | undefined {
  if (typeof value === 'function') return value as (line: string) => void;
  if (value !== undefined && typeof value !== 'boolean') fail('debug', 'must be a boolean or a function');
  const on = value ?? (nodeEnv === undefined || nodeEnv === '' || nodeEnv === 'development');
  return on ? (line) => console.warn(line) : undefined;
}

function resolveTelemetry(value: unknown): Readonly<TelemetryOptions> {
  if (value === undefined) return Object.freeze({});
  if (typeof value !== 'object' || value === null) fail('telemetry', 'must be an object');
  const options = value as TelemetryOptions;
  for (const key of Object.keys(options)) {
    if (!['meterProvider', 'tracerProvider', 'traceBearerChecks'].includes(key)) fail(`telemetry.${key}`, 'is not a known option');
  }
  if (options.meterProvider !== undefined && typeof options.meterProvider?.getMeter !== 'function') {
    fail('telemetry.meterProvider', 'must be an OpenTelemetry MeterProvider');
  }
  if (options.tracerProvider !== undefined && typeof options.tracerProvider?.getTracer !== 'function') {
    fail('telemetry.tracerProvider', 'must be an OpenTelemetry TracerProvider');
  }
  if (options.traceBearerChecks !== undefined && typeof options.traceBearerChecks !== 'boolean') {
    fail('telemetry.traceBearerChecks', 'must be a boolean');
  }
  return Object.freeze({ ...options });
}

/** The `extraTokenClaims` hook: a plain (synchronous) function; an async one would hand back a promise on every token. */
function resolveExtraTokenClaims(value: unknown): ExtraTokenClaims | undefined {
  const hook = optionalFunction('extraTokenClaims', value as ExtraTokenClaims | undefined);
  if (hook?.constructor.name === 'AsyncFunction') fail('extraTokenClaims', 'must be synchronous: keep what it needs in memory (it runs on every token request)');
  return hook;
}

function resolveFailureLimit(value: unknown): ResolvedConfig['failureLimit'] {
  if (value === false) return false;
  if (value !== undefined && (typeof value !== 'object' || value === null)) {
    fail('failureLimit', 'must be an object or false');
  }
  const options = (value ?? {}) as FailureLimitOptions;
  for (const key of Object.keys(options)) {
    if (!['max', 'windowSeconds', 'ipv6Prefix', 'maxKeys', 'redis'].includes(key)) fail(`failureLimit.${key}`, 'is not a known option');
  }
  return Object.freeze({
    max: integer('failureLimit.max', options.max, 10, 1, 1_000_000),
    windowSeconds: integer('failureLimit.windowSeconds', options.windowSeconds, 60, 1, 86_400),
    ipv6Prefix: integer('failureLimit.ipv6Prefix', options.ipv6Prefix, DEFAULT_IPV6_PREFIX, 1, 128),
    maxKeys: integer('failureLimit.maxKeys', options.maxKeys, 100_000, 1000, 10_000_000),
    redis: options.redis,
  });
}

/**
 * Validates options once, fills defaults and returns a frozen config. Throws a `TypeError` naming the
 * first bad option (unknown key, too-short HS256 key, unknown algorithm, non-positive lifetime, ...).
 * `env` is read once, for the default of `debug` (`NODE_ENV`).
 *
 * @example
 * ```ts
 * const config = resolveConfig({ store, issuer: 'https://api.example.com', signingKeys: [{ alg: 'HS256', key }] })
 * ```
 */
export function resolveConfig(options: ServiceAccountsOptions, env: { readonly NODE_ENV?: string | undefined } = process.env): ResolvedConfig {
  checkKnownKeys(options, KNOWN_OPTIONS);
  const federation = resolveFederation(options.federation);
  const tokenLifetime = integer('tokenLifetime', options.tokenLifetime, 3600, 1, MAX_TOKEN_LIFETIME);
  const clockTolerance = integer('clockTolerance', options.clockTolerance, 5, 0, MAX_CLOCK_TOLERANCE);
  // Below tokenLifetime, the accounts without a lifetime of their own would get longer tokens than the maximum.
  const maxAccessTokenLifetime = integer('maxAccessTokenLifetime', options.maxAccessTokenLifetime, tokenLifetime, tokenLifetime, MAX_TOKEN_LIFETIME);
  // The admin API of the instance refuses the issuers its token endpoint would never fetch keys for, and
  // keeps a token revoked by ID on the deny-list only as long as a token of this instance can be admitted.
  const admin = {
    ...resolveAdminSettings(options, maxAccessTokenLifetime + clockTolerance, maxAccessTokenLifetime),
    allowedIssuers: federation.allowedIssuers,
  };
  const issuer = nonEmptyString('issuer', options.issuer);
  const audience = options.audience === undefined ? issuer : nonEmptyString('audience', options.audience);
  const onEvent = optionalFunction('onEvent', options.onEvent);
  if (options.allowBrowserRequests !== undefined && typeof options.allowBrowserRequests !== 'boolean') {
    fail('allowBrowserRequests', 'must be a boolean');
  }
  if (options.allowUnrestrictedIntrospection !== undefined && typeof options.allowUnrestrictedIntrospection !== 'boolean') {
    fail('allowUnrestrictedIntrospection', 'must be a boolean');
  }
  const realm = options.realm === undefined ? 'service-accounts' : nonEmptyString('realm', options.realm);
  // It goes into WWW-Authenticate as a quoted-string (RFC 9110 §5.6.4): printable ASCII only.
  if (!/^[\x20-\x7e]+$/.test(realm)) fail('realm', 'must be printable ASCII (it is sent in WWW-Authenticate headers)');

  const failureLimit = resolveFailureLimit(options.failureLimit);
  const dpop = resolveDpop(options.dpop, failureLimit !== false && failureLimit.redis !== undefined);

  return Object.freeze({
    ...admin,
    issuer,
    audience,
    keyring: createKeyring(options.signingKeys, fail),
    tokenLifetime,
    clockTolerance,
    extraTokenClaims: resolveExtraTokenClaims(options.extraTokenClaims),
    maxAssertionLifetime: integer('maxAssertionLifetime', options.maxAssertionLifetime, 3600, 10, 3600),
    acceptTokenEndpointAudience: resolveTokenEndpointAudience(options.acceptTokenEndpointAudience, options.issuer),
    federation,
    realm,
    dpop,
    onEvent,
    debug: resolveDebug(options.debug, env.NODE_ENV),
    telemetry: resolveTelemetry(options.telemetry),
    maxQueuedSecretChecks: integer('maxQueuedSecretChecks', options.maxQueuedSecretChecks, 256, 0, 100_000),
    bodyLimit: integer('bodyLimit', options.bodyLimit, 8192, 256, 1_048_576),
    allowBrowserRequests: options.allowBrowserRequests ?? false,
    allowUnrestrictedIntrospection: options.allowUnrestrictedIntrospection ?? false,
    maxRevokedTokensPerClient: integer('maxRevokedTokensPerClient', options.maxRevokedTokensPerClient, 1000, 1, 1_000_000),
    failureLimit,
    statusCacheTtl: integer('statusCacheTtl', options.statusCacheTtl, 30_000, 0, 3_600_000),
  });
}
