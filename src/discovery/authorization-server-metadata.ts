/**
 * @module authorization-server-metadata
 * RFC 8414 authorization server metadata for the token endpoint and its revocation and introspection
 * endpoints, and the JWK Set of public keys.
 */
import type { Keyring } from '../access-tokens/keyring.js';
import { ASSERTION_SIGNING_ALGORITHMS } from '../client-auth/key-pair-method.js';

/**
 * Where the host serves the endpoints the metadata points to.
 *
 * @example
 * ```ts
 * import type { MetadataOptions } from 'express-service-accounts'
 *
 * const endpoints: MetadataOptions = {
 *   tokenEndpoint: 'https://api.example.com/oauth/token',
 *   jwksUri: 'https://api.example.com/.well-known/jwks.json', // listed only when an ES256 or RS256 key is configured
 * }
 * app.get('/.well-known/oauth-authorization-server', (req, res) => res.json(sa.authorizationServerMetadata(endpoints)))
 * app.get('/.well-known/jwks.json', (req, res) => res.json(sa.jwks))
 * ```
 */
export interface MetadataOptions {
  /** Absolute URL of the token endpoint, e.g. `https://api.example.com/oauth/token`. */
  tokenEndpoint: string;
  /** Absolute URL where the JWK Set is served; listed only when the keyring has public keys. */
  jwksUri?: string;
  /**
   * Absolute URL of the revocation endpoint (RFC 7009).
   * @default `tokenEndpoint` with its last path segment `token` replaced by `revoke` (the token router serves both)
   */
  revocationEndpoint?: string;
  /**
   * Absolute URL of the introspection endpoint (RFC 7662).
   * @default `tokenEndpoint` with its last path segment `token` replaced by `introspect`
   */
  introspectionEndpoint?: string;
}

/**
 * RFC 8414 §2 metadata.
 *
 * @example
 * ```ts
 * import type { AuthorizationServerMetadata } from 'express-service-accounts'
 *
 * const metadata: AuthorizationServerMetadata = sa.authorizationServerMetadata({ tokenEndpoint: 'https://api.example.com/oauth/token' })
 * metadata.grant_types_supported // ['client_credentials']
 * ```
 */
export interface AuthorizationServerMetadata {
  readonly issuer: string;
  readonly token_endpoint: string;
  readonly grant_types_supported: readonly ['client_credentials'];
  /** `private_key_jwt` is listed when the account store holds key-pair credentials. */
  readonly token_endpoint_auth_methods_supported: ClientAuthMethods;
  /** The algorithms a client assertion (`private_key_jwt`) may be signed with: asymmetric only; with `private_key_jwt`. */
  readonly token_endpoint_auth_signing_alg_values_supported?: readonly string[];
  readonly response_types_supported: readonly [];
  readonly jwks_uri?: string;
  /**
   * RFC 8414 §2: listed when it can be derived from the token endpoint's URL or is given. Clients
   * authenticate there exactly as at the token endpoint.
   */
  readonly revocation_endpoint?: string;
  readonly revocation_endpoint_auth_methods_supported?: ClientAuthMethods;
  readonly revocation_endpoint_auth_signing_alg_values_supported?: readonly string[];
  readonly introspection_endpoint?: string;
  readonly introspection_endpoint_auth_methods_supported?: ClientAuthMethods;
  readonly introspection_endpoint_auth_signing_alg_values_supported?: readonly string[];
  /** RFC 9449 §5.1: the algorithms a DPoP proof may be signed with; absent when DPoP is off. */
  readonly dpop_signing_alg_values_supported?: readonly string[];
}

/**
 * The client authentication methods the endpoints accept: `private_key_jwt` too when the account
 * store holds key-pair credentials.
 *
 * @example
 * ```ts
 * import type { ClientAuthMethods } from 'express-service-accounts'
 *
 * const keysAccepted = (methods: ClientAuthMethods): boolean => (methods as readonly string[]).includes('private_key_jwt')
 * ```
 */
export type ClientAuthMethods =
  | readonly ['client_secret_basic', 'client_secret_post']
  | readonly ['client_secret_basic', 'client_secret_post', 'private_key_jwt'];

/** What the account store can do, as far as the metadata tells clients. */
export interface StoreCapabilities {
  /** Key-pair credentials (`private_key_jwt`). */
  readonly keys: boolean;
  /** A deny-list of revoked tokens (the revocation endpoint). */
  readonly revocation: boolean;
  /** The DPoP proof algorithms accepted, when DPoP is on. */
  readonly dpopAlgorithms?: readonly string[] | undefined;
}

/** RFC 8414 §2: clients fetch each listed endpoint as it is, so a relative one would name nothing. */
function isAbsoluteHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string' || !/^https?:\/\//i.test(value)) return false;
  return URL.canParse(value);
}

/** The URL of a sibling endpoint of the token router: `.../token` → `.../{name}`, or `undefined`. */
function siblingOf(tokenEndpoint: string, name: string): string | undefined {
  const match = /^(.*\/)token(\/?)$/.exec(tokenEndpoint);
  return match ? `${match[1]}${name}` : undefined;
}

/**
 * Builds the metadata document (serve it at `/.well-known/oauth-authorization-server`).
 * @example
 * ```ts
 * app.get('/.well-known/oauth-authorization-server', (req, res) =>
 *   res.json(sa.authorizationServerMetadata({ tokenEndpoint: `${issuer}/oauth/token`, jwksUri: `${issuer}/.well-known/jwks.json` })))
 * ```
 */
export function buildAuthorizationServerMetadata(issuer: string, keyring: Keyring, options: MetadataOptions, store: StoreCapabilities = { keys: true, revocation: true }): AuthorizationServerMetadata {
  if (typeof options?.tokenEndpoint !== 'string' || options.tokenEndpoint === '') {
    throw new TypeError('authorizationServerMetadata needs { tokenEndpoint }: the URL of your token endpoint, such as https://api.example.com/oauth/token');
  }
  for (const name of ['tokenEndpoint', 'jwksUri', 'revocationEndpoint', 'introspectionEndpoint'] as const) {
    const url = options[name];
    if (url !== undefined && !isAbsoluteHttpUrl(url)) {
      throw new TypeError(`authorizationServerMetadata: ${name} must be an absolute http(s) URL, got ${JSON.stringify(String(url)).slice(0, 200)}`);
    }
  }
  // One client authenticator serves the three endpoints: the same methods and algorithms everywhere.
  // What the store cannot do is not advertised: without key credentials every assertion is refused,
  // and without a deny-list every revocation answers unsupported_token_type.
  const methods: ClientAuthMethods = store.keys ? ['client_secret_basic', 'client_secret_post', 'private_key_jwt'] : ['client_secret_basic', 'client_secret_post'];
  const algorithms = store.keys ? { signing: ASSERTION_SIGNING_ALGORITHMS } : undefined;
  const revocation = store.revocation ? (options.revocationEndpoint ?? siblingOf(options.tokenEndpoint, 'revoke')) : undefined;
  const introspection = options.introspectionEndpoint ?? siblingOf(options.tokenEndpoint, 'introspect');
  return {
    issuer,
    token_endpoint: options.tokenEndpoint,
    grant_types_supported: ['client_credentials'],
    token_endpoint_auth_methods_supported: methods,
    ...(algorithms ? { token_endpoint_auth_signing_alg_values_supported: algorithms.signing } : {}),
    response_types_supported: [],
    ...(keyring.jwks.keys.length > 0 && options.jwksUri !== undefined ? { jwks_uri: options.jwksUri } : {}),
    ...(revocation !== undefined
      ? {
          revocation_endpoint: revocation,
          revocation_endpoint_auth_methods_supported: methods,
          ...(algorithms ? { revocation_endpoint_auth_signing_alg_values_supported: algorithms.signing } : {}),
        }
      : {}),
    ...(introspection !== undefined
      ? {
          introspection_endpoint: introspection,
          introspection_endpoint_auth_methods_supported: methods,
          ...(algorithms ? { introspection_endpoint_auth_signing_alg_values_supported: algorithms.signing } : {}),
        }
      : {}),
    ...(store.dpopAlgorithms !== undefined ? { dpop_signing_alg_values_supported: store.dpopAlgorithms } : {}),
  };
}
