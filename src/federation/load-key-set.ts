/**
 * @module load-key-set
 * Where an outside issuer's keys are fetched from, and one fetch of them. The source is the JWK Set
 * URL configured for the issuer, else the one its credential names, else OpenID Connect discovery
 * (`{issuer}/.well-known/openid-configuration` → `jwks_uri`), whose document must name the same
 * issuer. Each document is fetched under fetch-json-document.ts's rules, and the whole load, discovery
 * and JWK Set together, within one `fetchTimeout`. Caching what is loaded, and
 * deciding when to load it again, is issuer-key-sets.ts's.
 */
import type { ResolvedFederationConfig } from './federation-options.js';
import { fetchJsonDocument, fetchPolicyProblem, type FetchJsonDocumentOptions } from './fetch-json-document.js';
import { KeySet } from './key-set.js';

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
export function keySetSource(issuer: string, jwksUri: string | null | undefined, settings: ResolvedFederationConfig): KeySetSource | undefined {
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
export async function loadKeySet(source: KeySetSource, settings: ResolvedFederationConfig): Promise<LoadedKeySet> {
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
