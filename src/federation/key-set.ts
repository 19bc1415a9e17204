/**
 * @module key-set
 * One outside issuer's JWK Set (RFC 7517 §5): where it comes from, one load of it, and which of its
 * keys suit an algorithm. Caching what is loaded, and deciding when to load it again, is
 * issuer-key-sets.ts's; verifying a token with it (which keys are tried, at most a few) is the
 * federated method's, in client-auth/.
 *
 * - The set ({@link KeySet}), fetched or configured inline: at most `MAX_KEYS_PER_SET` keys, each a
 *   candidate only for the algorithms its type, curve, `alg`, `use` and `key_ops` allow (the rules of
 *   jose's local key sets), and imported once.
 * - Where it is fetched from ({@link keySetSource}): the JWK Set URL configured for the issuer, else
 *   the one its credential names, else OpenID Connect discovery
 *   (`{issuer}/.well-known/openid-configuration` → `jwks_uri`), whose document must name the same
 *   issuer. Each document is fetched under fetch-json-document.ts's rules, and the whole load
 *   ({@link loadKeySet}), discovery and JWK Set together, within one `fetchTimeout`.
 * - Which algorithms a token may be verified with ({@link verifiableAlgorithms}): asymmetric ones
 *   only, whatever the caller asks.
 */
import { createPublicKey, type JsonWebKey as NodeJwk, type KeyObject } from 'node:crypto';
import { decodeProtectedHeader } from 'jose';
import { rsaKeyProblem } from '../keys/parse-public-key.js';
import { fetchPolicyProblem } from './address-policy.js';
import { fetchJsonDocument, type FetchJsonDocumentOptions } from './fetch-json-document.js';

/**
 * The most keys a JWK Set of an outside issuer may hold, fetched or configured inline. Public issuers
 * publish a handful (Google two or three, Microsoft Entra ID four to six, a Kubernetes cluster one or
 * two); a larger set is refused as unusable.
 *
 * @example
 * ```ts
 * declare const jwks: { keys: object[] } // a JWK Set, as fetched
 * if (jwks.keys.length > MAX_KEYS_PER_SET) throw new Error(`more than ${MAX_KEYS_PER_SET} keys`)
 * ```
 */
export const MAX_KEYS_PER_SET = 100;

/** One key of a JWK Set, as published: only the members read here are typed. */
export interface SetKey {
  readonly kty?: unknown;
  readonly kid?: unknown;
  readonly alg?: unknown;
  readonly use?: unknown;
  readonly key_ops?: unknown;
  readonly crv?: unknown;
  readonly d?: unknown;
  readonly [member: string]: unknown;
}

/** The key type (RFC 7518 §6.1) an algorithm signs with. */
function keyTypeOf(alg: string): string | undefined {
  if (alg.startsWith('RS') || alg.startsWith('PS')) return 'RSA';
  if (alg.startsWith('ES')) return 'EC';
  if (alg === 'EdDSA' || alg === 'Ed25519') return 'OKP';
  return undefined;
}

/** Whether a key's curve suits the algorithm (RFC 7518 §3.4, RFC 8037 §3.1, RFC 9864 §2). */
function curveSuits(alg: string, crv: unknown): boolean {
  switch (alg) {
    case 'ES256':
      return crv === 'P-256';
    case 'ES384':
      return crv === 'P-384';
    case 'ES512':
      return crv === 'P-521';
    case 'Ed25519':
      return crv === 'Ed25519';
    case 'EdDSA':
      return crv === 'Ed25519' || crv === 'Ed448';
    default:
      return true;
  }
}

/** Whether a key's own `alg` allows `alg`: `EdDSA` and `Ed25519` name one algorithm for an Ed25519 key. */
function algorithmSuits(alg: string, key: SetKey): boolean {
  if (typeof key.alg !== 'string' || key.alg === alg) return true;
  const edwards = ['EdDSA', 'Ed25519'];
  return key.crv === 'Ed25519' && edwards.includes(key.alg) && edwards.includes(alg);
}

/**
 * A JWK Set ready to verify with. The constructor throws a `TypeError` when `jwks` is no JWK Set
 * (an object whose `keys` is an array of objects) or holds more than `MAX_KEYS_PER_SET` keys; its
 * message completes a sentence naming the set (`${url} ${message}`).
 *
 * @example
 * ```ts
 * const keySet = new KeySet({ keys: [{ kty: 'EC', crv: 'P-256', x: '…', y: '…', kid: 'k1' }] })
 * keySet.keysFor('ES256') // that key
 * keySet.keysFor('RS256') // []
 * ```
 */
export class KeySet {
  readonly #keys: readonly SetKey[];
  readonly #imported = new WeakMap<SetKey, KeyObject | null>();

  constructor(jwks: unknown) {
    const keys = (jwks as { keys?: unknown } | null)?.keys;
    if (typeof jwks !== 'object' || jwks === null || !Array.isArray(keys) || !keys.every((key) => typeof key === 'object' && key !== null && !Array.isArray(key))) {
      throw new TypeError('is not a JWK Set');
    }
    if (keys.length > MAX_KEYS_PER_SET) throw new TypeError(`holds ${keys.length} keys, more than the ${MAX_KEYS_PER_SET} a JWK Set may hold`);
    this.#keys = structuredClone(keys) as SetKey[];
  }

  /** The keys that may verify a signature made with `alg`, in the set's order. */
  keysFor(alg: string): readonly SetKey[] {
    const kty = keyTypeOf(alg);
    return this.#keys.filter(
      (key) =>
        key.kty === kty &&
        key.d === undefined && // a private key has no place in a published set
        algorithmSuits(alg, key) &&
        (key.use === undefined || key.use === 'sig') &&
        (!Array.isArray(key.key_ops) || key.key_ops.includes('verify')) &&
        curveSuits(alg, key.crv),
    );
  }

  /**
   * The key as a public key object (imported once), or `undefined` when it is no valid key (an RSA key
   * of fewer than 2048 or more than 16384 bits, or with an exponent outside 3 to 2^32 - 1, included).
   */
  keyObject(key: SetKey): KeyObject | undefined {
    let imported = this.#imported.get(key);
    if (imported === undefined) {
      const members: NodeJwk = {};
      for (const name of ['kty', 'crv', 'x', 'y', 'n', 'e'] as const) if (typeof key[name] === 'string') members[name] = key[name] as string;
      try {
        imported = createPublicKey({ key: members, format: 'jwk' });
        // An RSA key whose size or exponent makes every signature check dear is no key to verify with.
        if (rsaKeyProblem(imported) !== undefined) imported = null;
      } catch {
        imported = null;
      }
      this.#imported.set(key, imported);
    }
    return imported ?? undefined;
  }
}

/**
 * The only algorithms an outside token may be signed with, whatever the caller asks: asymmetric ones.
 * `Ed25519` is the fully specified name of EdDSA with an Ed25519 key (RFC 9864 §2).
 */
export const FEDERATED_ALGORITHMS: readonly string[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/**
 * The algorithms `token` may be verified with: those of `requested` (by default all) that are
 * asymmetric. `undefined` when the token's header names none of them, or cannot be read: such a
 * token could never verify, so no key is fetched for it.
 *
 * @example
 * ```ts
 * const algorithms = verifiableAlgorithms(token, ['RS256', 'HS256']) // ['RS256'], or undefined for an HS256 token
 * ```
 */
export function verifiableAlgorithms(token: string, requested?: readonly string[]): string[] | undefined {
  const algorithms = requested === undefined ? [...FEDERATED_ALGORITHMS] : requested.filter((alg) => FEDERATED_ALGORITHMS.includes(alg));
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(token).alg;
  } catch {
    return undefined;
  }
  return typeof alg === 'string' && algorithms.includes(alg) ? algorithms : undefined;
}

/** What finding and loading a key set reads of the `federation` settings (federation-options.ts resolves them). */
export interface KeySetSettings {
  readonly issuers: ReadonlyMap<string, { readonly jwksUri?: string | undefined }>;
  readonly allowedIssuers: ReadonlySet<string> | undefined;
  readonly allowHttpLoopback: boolean;
  readonly allowPrivateNetworks: boolean;
  readonly fetchTimeout: number;
  readonly maxDocumentBytes: number;
}

/**
 * Where one issuer's keys are fetched from.
 *
 * @example
 * ```ts
 * const source: KeySetSource = {
 *   issuer: 'https://token.actions.githubusercontent.com',
 *   url: 'https://token.actions.githubusercontent.com/.well-known/openid-configuration',
 *   discovery: true,
 * }
 * ```
 */
export interface KeySetSource {
  readonly issuer: string;
  /** The JWK Set URL, or the discovery document's URL. */
  readonly url: string;
  /** Whether `url` is a discovery document, which names the JWK Set URL. */
  readonly discovery: boolean;
}

/**
 * A loaded key set, and how long its server lets it be cached.
 *
 * @example
 * ```ts
 * const source: KeySetSource = { issuer, url: `${issuer}/jwks`, discovery: false }
 * const loaded: LoadedKeySet = await loadKeySet(source, config.federation)
 * console.log(loaded.maxAge ?? 'no max-age')
 * ```
 */
export interface LoadedKeySet {
  readonly keySet: KeySet;
  /** Seconds from the JWK Set's `Cache-Control` (0 with `no-store` or `no-cache`); `undefined` without one. */
  readonly maxAge: number | undefined;
}

/**
 * Where the keys of `issuer` come from: the JWK Set URL configured for it, else `jwksUri` (the one
 * its credential names, unless `allowedIssuers` is set: then the operator alone chooses the addresses
 * fetched), else its discovery document. `undefined` when the URL may not be fetched under these
 * settings (plain http without `allowHttpLoopback`): such an issuer has no keys.
 *
 * @example
 * ```ts
 * keySetSource('https://token.actions.githubusercontent.com', null, config.federation)
 * // { issuer, url: 'https://token.actions.githubusercontent.com/.well-known/openid-configuration', discovery: true }
 * ```
 */
export function keySetSource(issuer: string, jwksUri: string | null | undefined, settings: KeySetSettings): KeySetSource | undefined {
  const credentialUri = settings.allowedIssuers === undefined ? (jwksUri ?? undefined) : undefined;
  const configured = settings.issuers.get(issuer)?.jwksUri ?? credentialUri;
  const url = configured ?? `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  if (fetchPolicyProblem(url, settings.allowHttpLoopback) !== undefined) return undefined;
  return { issuer, url, discovery: configured === undefined };
}

/**
 * Fetches a source's JWK Set, through its discovery document when it has no JWK Set URL, all within
 * `settings.fetchTimeout`: a slow issuer holds its callers that long at most, not once per document.
 * Throws a plain `Error` naming the URL at fault when a document cannot be fetched (in time), a discovery document names
 * another issuer or a `jwks_uri` that may not be fetched, or the JWK Set is not one or holds more than
 * `MAX_KEYS_PER_SET` keys (it is unusable: every token would cost a signature check per key).
 *
 * @example
 * ```ts
 * const source = keySetSource(issuer, null, config.federation)
 * if (source !== undefined) {
 *   const { keySet, maxAge } = await loadKeySet(source, config.federation)
 * }
 * ```
 */
export async function loadKeySet(source: KeySetSource, settings: KeySetSettings): Promise<LoadedKeySet> {
  // One deadline for the discovery document and the JWK Set: startedAt is shared by both fetches.
  const fetchOptions: FetchJsonDocumentOptions = {
    timeout: settings.fetchTimeout,
    startedAt: Date.now(),
    maxBytes: settings.maxDocumentBytes,
    allowHttpLoopback: settings.allowHttpLoopback,
    allowPrivateNetworks: settings.allowPrivateNetworks,
  };
  let jwksUri = source.url;
  if (source.discovery) {
    const { body } = await fetchJsonDocument(source.url, fetchOptions);
    // OpenID Connect Discovery 1.0 §4.3: the issuer value returned MUST be identical to the one used.
    if (body.issuer !== source.issuer) throw new Error(`${source.url} names another issuer`);
    if (typeof body.jwks_uri !== 'string') throw new Error(`${source.url} has no jwks_uri`);
    const problem = fetchPolicyProblem(body.jwks_uri, settings.allowHttpLoopback);
    if (problem !== undefined) throw new Error(`${source.url} names a jwks_uri that ${problem}`);
    jwksUri = body.jwks_uri;
  }
  const { body, maxAge } = await fetchJsonDocument(jwksUri, { ...fetchOptions, accept: 'application/jwk-set+json, application/json' });
  try {
    return { keySet: new KeySet(body), maxAge };
  } catch (error) {
    throw new Error(`${jwksUri} ${(error as Error).message}`);
  }
}
