/**
 * @module federation-options
 * The options of federated credentials (outside issuers' tokens as client credentials), validated once
 * into the frozen settings the token endpoint and the issuer key sets receive.
 */
import { fail, integer } from '../config-checks.js';
import { MAX_KEYS_PER_SET } from './key-set.js';
import { FEDERATED_LIMITS, federatedUrlProblem } from './address-policy.js';

/**
 * Where an outside issuer's public keys are, for an issuer that publishes no OpenID Connect discovery
 * document (a Kubernetes cluster often does not, or not where your API can reach it).
 *
 * @example
 * ```ts
 * import { readFileSync } from 'node:fs'
 * import type { FederatedIssuerKeys } from 'express-service-accounts'
 *
 * // The cluster's keys, as `kubectl get --raw /openid/v1/jwks` prints them, saved to a file.
 * const cluster: FederatedIssuerKeys = { jwks: JSON.parse(readFileSync('cluster-jwks.json', 'utf8')) }
 * // Or a JWK Set URL your API can reach.
 * const github: FederatedIssuerKeys = { jwksUri: 'https://token.actions.githubusercontent.com/.well-known/jwks' }
 * ```
 */
export type FederatedIssuerKeys = { readonly jwksUri: string; readonly jwks?: never } | { readonly jwks: { readonly keys: readonly object[] }; readonly jwksUri?: never };

/**
 * Options for federated credentials: accounts that trust an outside issuer (a Kubernetes cluster,
 * GitHub Actions, a SPIFFE trust domain, an OpenID Connect provider) for one exact subject. See
 * docs/federated-credentials.md.
 *
 * @example
 * ```ts
 * import type { FederationOptions } from 'express-service-accounts'
 *
 * const federation: FederationOptions = {
 *   maxTokenLifetime: 3600,
 *   issuers: { 'https://kubernetes.default.svc.cluster.local': { jwksUri: 'https://k8s-oidc.example.com/openid/v1/jwks' } },
 * }
 * const sa = createServiceAccounts({ store, issuer, signingKeys, federation })
 * ```
 */
export interface FederationOptions {
  /**
   * The longest lifetime, in seconds, an outside token may have left: one whose `exp` lies further
   * ahead, beyond `clockTolerance`, is refused. Kubernetes' projected tokens live an hour by default.
   * From 60 to 86400.
   * @default 3600
   */
  maxTokenLifetime?: number;
  /**
   * Fetch keys from issuers on a loopback address (`127.0.0.1`, `::1`, `localhost`), over plain http
   * too: for tests and local development only. Without it, no document is fetched from a loopback
   * address, whatever the URL's host name resolves to. Every other issuer is reached over https.
   * @default false
   */
  allowHttpLoopback?: boolean;
  /**
   * Fetch keys from private network addresses (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16,
   * 100.64.0.0/10, fc00::/7), checked on the address connected to after DNS resolution: for issuers
   * that live on your own network (a cluster's API server reached at a private address). Without
   * it, such an address is never connected to. Link-local addresses (169.254.0.0/16, fe80::/10,
   * where cloud metadata services answer) are never fetched, and loopback only with
   * `allowHttpLoopback`.
   * @default false
   * @example
   * ```ts
   * createServiceAccounts({ store, issuer, signingKeys, federation: { allowPrivateNetworks: true, allowedIssuers: ['https://k8s.internal.example.com'] } })
   * ```
   */
  allowPrivateNetworks?: boolean;
  /**
   * Where to find the keys of issuers without a reachable discovery document, by issuer identifier.
   * A JWK Set, inline or fetched, holds at most 100 keys.
   */
  issuers?: Readonly<Record<string, FederatedIssuerKeys>>;
  /**
   * The only issuers federated credentials may name (the issuers of `issuers` are allowed too). The
   * instance's admin API (`serviceAccounts.admin`, and so its admin router) refuses to register any
   * other, and no key is ever fetched for any other, whatever the store holds. With it, a credential's
   * own JWK Set URL is neither accepted nor used: keys come from `issuers` or the issuer's discovery
   * document, so you alone choose the addresses your server fetches. Set it when people you do not
   * fully trust register credentials (your customers' administrators, through the admin router).
   * @default any https issuer
   */
  allowedIssuers?: readonly string[];
  /** Milliseconds one load of an issuer's keys may take, its discovery document and JWK Set together. @default 5000 */
  fetchTimeout?: number;
  /** Largest discovery document or JWK Set accepted, in bytes. @default 262144 */
  maxDocumentBytes?: number;
  /**
   * Bounds, in seconds, on how long fetched keys are used before they are fetched again: the
   * response's `Cache-Control: max-age`, raised to `minCacheSeconds` (also used without one) and
   * lowered to `maxCacheSeconds`.
   * @default 300
   */
  minCacheSeconds?: number;
  /** @default 3600 */
  maxCacheSeconds?: number;
  /**
   * Seconds between two fetches of one issuer's keys caused by a token whose key is unknown (or by a
   * failed fetch): an attacker sending made-up key IDs causes at most one fetch per interval.
   * @default 30
   */
  refreshInterval?: number;
}

/** The validated federation settings. */
export interface ResolvedFederationConfig {
  readonly maxTokenLifetime: number;
  readonly allowHttpLoopback: boolean;
  readonly allowPrivateNetworks: boolean;
  readonly issuers: ReadonlyMap<string, FederatedIssuerKeys>;
  /** The issuers credentials may name (`allowedIssuers` and the keys of `issuers`); `undefined`: any. */
  readonly allowedIssuers: ReadonlySet<string> | undefined;
  readonly fetchTimeout: number;
  readonly maxDocumentBytes: number;
  readonly minCacheSeconds: number;
  readonly maxCacheSeconds: number;
  readonly refreshInterval: number;
}

const KNOWN = ['maxTokenLifetime', 'allowHttpLoopback', 'allowPrivateNetworks', 'issuers', 'allowedIssuers', 'fetchTimeout', 'maxDocumentBytes', 'minCacheSeconds', 'maxCacheSeconds', 'refreshInterval'];

/**
 * Validates an allow-list of issuer identifiers (the option `name`), adding the issuers of `also`;
 * `undefined` when no list is given (any issuer). Throws a `TypeError` naming the bad entry.
 *
 * @example
 * ```ts
 * resolveAllowedIssuers('allowedIssuers', ['https://token.actions.githubusercontent.com']) // a Set of that one issuer
 * resolveAllowedIssuers('allowedIssuers', undefined) // undefined: any issuer
 * ```
 */
export function resolveAllowedIssuers(name: string, value: unknown, also: Iterable<string> = []): ReadonlySet<string> | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) fail(name, 'must be an array of issuer identifiers');
  const allowed = new Set(also);
  value.forEach((issuer: unknown, index) => {
    const problem = federatedUrlProblem(issuer);
    if (problem) fail(`${name}[${index}]`, problem);
    allowed.add(issuer as string);
  });
  return allowed;
}

/**
 * Validates the `federation` option once. Throws a `TypeError` naming the bad member.
 *
 * @example
 * ```ts
 * const federation = resolveFederation({ allowHttpLoopback: true })
 * federation.maxTokenLifetime // 3600
 * ```
 */
export function resolveFederation(value: unknown): ResolvedFederationConfig {
  if (value !== undefined && (typeof value !== 'object' || value === null)) fail('federation', 'must be an object');
  const options = (value ?? {}) as FederationOptions;
  for (const key of Object.keys(options)) if (!KNOWN.includes(key)) fail(`federation.${key}`, 'is not a known option');
  if (options.allowHttpLoopback !== undefined && typeof options.allowHttpLoopback !== 'boolean') fail('federation.allowHttpLoopback', 'must be a boolean');
  if (options.allowPrivateNetworks !== undefined && typeof options.allowPrivateNetworks !== 'boolean') fail('federation.allowPrivateNetworks', 'must be a boolean');
  const issuers = new Map<string, FederatedIssuerKeys>();
  if (options.issuers !== undefined) {
    if (typeof options.issuers !== 'object' || options.issuers === null) fail('federation.issuers', 'must be an object keyed by issuer identifier');
    for (const [issuer, keys] of Object.entries(options.issuers)) {
      const name = `federation.issuers[${JSON.stringify(issuer)}]`;
      const problem = federatedUrlProblem(issuer);
      if (problem) fail(name, `names no valid issuer: the issuer identifier ${problem}`);
      if (typeof keys !== 'object' || keys === null) fail(name, 'must be { jwksUri } or { jwks }');
      const { jwksUri, jwks } = keys as { jwksUri?: unknown; jwks?: unknown };
      if ((jwksUri === undefined) === (jwks === undefined)) fail(name, 'must have exactly one of jwksUri and jwks');
      if (jwksUri !== undefined) {
        const uriProblem = federatedUrlProblem(jwksUri, FEDERATED_LIMITS.jwksUri, true);
        if (uriProblem) fail(`${name}.jwksUri`, uriProblem);
        issuers.set(issuer, Object.freeze({ jwksUri: jwksUri as string }));
      } else {
        const keysOf = (jwks as { keys?: unknown } | null)?.keys;
        if (typeof jwks !== 'object' || !Array.isArray(keysOf) || keysOf.length === 0) fail(`${name}.jwks`, 'must be a JWK Set ({ "keys": [ ... ] }) with at least one key');
        if (keysOf.length > MAX_KEYS_PER_SET) fail(`${name}.jwks`, `holds ${keysOf.length} keys: a JWK Set may hold at most ${MAX_KEYS_PER_SET}`);
        issuers.set(issuer, Object.freeze({ jwks: structuredClone(jwks) as { keys: object[] } }));
      }
    }
  }
  const allowedIssuers = resolveAllowedIssuers('federation.allowedIssuers', options.allowedIssuers, issuers.keys());
  const minCacheSeconds = integer('federation.minCacheSeconds', options.minCacheSeconds, 300, 1, 86_400);
  const maxCacheSeconds = integer('federation.maxCacheSeconds', options.maxCacheSeconds, Math.max(3600, minCacheSeconds), 1, 604_800);
  if (maxCacheSeconds < minCacheSeconds) fail('federation.maxCacheSeconds', 'must not be less than federation.minCacheSeconds');
  return Object.freeze({
    maxTokenLifetime: integer('federation.maxTokenLifetime', options.maxTokenLifetime, 3600, 60, 86_400),
    allowHttpLoopback: options.allowHttpLoopback ?? false,
    allowPrivateNetworks: options.allowPrivateNetworks ?? false,
    issuers,
    allowedIssuers,
    fetchTimeout: integer('federation.fetchTimeout', options.fetchTimeout, 5000, 100, 60_000),
    maxDocumentBytes: integer('federation.maxDocumentBytes', options.maxDocumentBytes, 262_144, 1024, 10_485_760),
    minCacheSeconds,
    maxCacheSeconds,
    refreshInterval: integer('federation.refreshInterval', options.refreshInterval, 30, 1, 3600),
  });
}
