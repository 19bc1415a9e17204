/**
 * @module dpop-options
 * The `dpop` option (RFC 9449 sender-constrained tokens): its public shape and its resolution, once,
 * into the frozen settings the proof check, the token endpoint and `requireBearer()` receive.
 */
import type { IncomingMessage } from 'node:http';
import { fail, integer } from '../config-checks.js';

/**
 * Proof algorithms a server may accept: asymmetric only (RFC 9449 §4.2: never `none`, never a MAC).
 * `Ed25519` is the fully specified name of `EdDSA` with an Ed25519 key (RFC 9864), which newer clients
 * (oauth4webapi) sign with.
 */
export const DPOP_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'EdDSA', 'Ed25519'] as const;

/**
 * One algorithm a DPoP proof may be signed with.
 *
 * @example
 * ```ts
 * import type { DpopAlgorithm } from 'express-service-accounts'
 *
 * // Also accept Ed25519 proofs, beside the defaults (under either name a client may sign with).
 * const algorithms: DpopAlgorithm[] = ['ES256', 'PS256', 'EdDSA', 'Ed25519']
 * ```
 */
export type DpopAlgorithm = (typeof DPOP_ALGORITHMS)[number];

/**
 * DPoP (RFC 9449): tokens bound to a key the client holds, issued when a token request carries a
 * `DPoP` proof and checked by `requireBearer()` (docs/dpop.md).
 *
 * @example
 * ```ts
 * import { createServiceAccounts, MemoryAccountStore, type DpopOptions } from 'express-service-accounts'
 *
 * const dpop: DpopOptions = {
 *   origins: ['https://api.example.com'], // the origin clients call, behind a proxy that rewrites Host
 *   nonceSecret: process.env.DPOP_NONCE_SECRET, // the same on every instance
 * }
 * const sa = createServiceAccounts({
 *   store: new MemoryAccountStore(),
 *   issuer: 'https://api.example.com',
 *   signingKeys: [{ alg: 'HS256', key: process.env.TOKEN_SIGNING_KEY! }],
 *   dpop,
 * })
 * ```
 */
export interface DpopOptions {
  /** Algorithms a proof may be signed with; never `none` or HMAC. @default ['ES256', 'PS256'] */
  algorithms?: readonly DpopAlgorithm[];
  /**
   * The origins (`https://api.example.com`) clients address this server by; a proof's `htu` must name
   * one of them. Without it, the origin is the request's protocol and host as Express's `trust proxy`
   * setting resolves them.
   */
  origins?: readonly string[];
  /**
   * The URL a client used for a request, when a proxy in front strips a path prefix: receives the
   * request and the URL worked out from it (origin and `req.originalUrl`), returns the one to compare
   * the proof's `htu` with.
   */
  requestUrl?: (req: IncomingMessage, derived: string) => string;
  /** Seconds a proof is accepted after its `iat`. From 5 to 300. @default 60 */
  proofMaxAge?: number;
  /**
   * A secret (at least 32 characters, the same on every instance) that turns on server nonces
   * (RFC 9449 §8, §9): where `nonceAt` requires them, every proof must carry a recent `nonce`, and
   * every answer carries the next one in `DPoP-Nonce`. Without it, no nonce is asked for.
   */
  nonceSecret?: string;
  /**
   * Where `nonceSecret`'s nonces are required: at the token endpoint only (RFC 9449 §8: a proof for a
   * token request cannot be made in advance), at protected routes only (§9), or at both. Servers often
   * ask at the token endpoint only, so API calls cost no extra round trip after a pause. Needs
   * `nonceSecret`. @default 'both'
   */
  nonceAt?: 'both' | 'token-endpoint' | 'protected-routes';
  /**
   * Where used proofs are remembered: `memory` (per instance; a captured proof can be replayed once
   * on each other instance within its lifetime) or `redis` (one `SET NX PX` per proof on
   * `failureLimit.redis`: single use across instances; Redis down means 503). @default 'memory'
   */
  replay?: 'memory' | 'redis';
  /** Proofs the in-memory replay cache holds at most, from 1,000 to 10,000,000; one client (a client account, or a service account without one) may hold a tenth. @default 100000 */
  maxReplayEntries?: number;
}

/** The resolved `dpop` option. */
export interface ResolvedDpopConfig {
  readonly algorithms: readonly DpopAlgorithm[];
  /** The `algs` of the DPoP challenge: the algorithms, space-separated. */
  readonly algs: string;
  readonly origins: readonly string[] | undefined;
  readonly requestUrl: ((req: IncomingMessage, derived: string) => string) | undefined;
  readonly proofMaxAge: number;
  readonly nonceSecret: string | undefined;
  /** Where nonces are required, when `nonceSecret` is set. */
  readonly nonceAt: 'both' | 'token-endpoint' | 'protected-routes';
  readonly replay: 'memory' | 'redis';
  readonly maxReplayEntries: number;
}

const KNOWN = ['algorithms', 'origins', 'requestUrl', 'proofMaxAge', 'nonceSecret', 'nonceAt', 'replay', 'maxReplayEntries'];
const NONCE_PLACES = ['both', 'token-endpoint', 'protected-routes'] as const;

/** An origin as `new URL(...).origin` writes it, or a `TypeError`. */
function parseOrigin(value: unknown): string {
  if (typeof value !== 'string') fail('dpop.origins', 'must list origin strings');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail('dpop.origins', `has an origin that is not a URL: ${JSON.stringify(value)}`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '') {
    fail('dpop.origins', `must list origins only (scheme, host and port): ${JSON.stringify(value)}`);
  }
  return url.origin;
}

/**
 * Validates the `dpop` option and fills its defaults; `false` turns DPoP off. `redisAvailable` says
 * whether `failureLimit.redis` is set (strict replay mode needs it).
 */
export function resolveDpop(value: unknown, redisAvailable: boolean): ResolvedDpopConfig | false {
  if (value === false) return false;
  if (value !== undefined && (typeof value !== 'object' || value === null)) fail('dpop', 'must be an object or false');
  const options = (value ?? {}) as DpopOptions;
  for (const key of Object.keys(options)) if (!KNOWN.includes(key)) fail(`dpop.${key}`, 'is not a known option');
  const algorithms = options.algorithms ?? ['ES256', 'PS256'];
  if (!Array.isArray(algorithms) || algorithms.length === 0) fail('dpop.algorithms', 'must be a non-empty list');
  for (const alg of algorithms) {
    if (!(DPOP_ALGORITHMS as readonly string[]).includes(alg)) fail('dpop.algorithms', `has an algorithm that is not accepted for proofs: ${JSON.stringify(alg)} (asymmetric only: ${DPOP_ALGORITHMS.join(', ')})`);
  }
  const origins = options.origins === undefined ? undefined : Array.isArray(options.origins) && options.origins.length > 0 ? options.origins.map(parseOrigin) : fail('dpop.origins', 'must be a non-empty list of origins');
  if (options.requestUrl !== undefined && typeof options.requestUrl !== 'function') fail('dpop.requestUrl', 'must be a function');
  if (options.nonceSecret !== undefined && (typeof options.nonceSecret !== 'string' || options.nonceSecret.length < 32)) {
    fail('dpop.nonceSecret', 'must be a string of at least 32 characters');
  }
  const nonceAt = options.nonceAt ?? 'both';
  if (!(NONCE_PLACES as readonly unknown[]).includes(nonceAt)) fail('dpop.nonceAt', 'must be "both", "token-endpoint" or "protected-routes"');
  if (options.nonceAt !== undefined && options.nonceSecret === undefined) fail('dpop.nonceAt', 'needs dpop.nonceSecret, which turns nonces on');
  const replay = options.replay ?? 'memory';
  if (replay !== 'memory' && replay !== 'redis') fail('dpop.replay', 'must be "memory" or "redis"');
  if (replay === 'redis' && !redisAvailable) fail('dpop.replay', 'is "redis", which needs failureLimit.redis (an ioredis client)');
  return Object.freeze({
    algorithms: Object.freeze([...algorithms]),
    algs: algorithms.join(' '),
    origins: origins && Object.freeze(origins),
    requestUrl: options.requestUrl,
    proofMaxAge: integer('dpop.proofMaxAge', options.proofMaxAge, 60, 5, 300),
    nonceSecret: options.nonceSecret,
    nonceAt,
    replay,
    maxReplayEntries: integer('dpop.maxReplayEntries', options.maxReplayEntries, 100_000, 1000, 10_000_000),
  });
}
