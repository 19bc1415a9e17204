/**
 * @module fixtures
 * What every benchmark server shares: the HS256 key, issuer and audience, the scope the protected
 * route needs, and the JSON every route answers, so each server does the same work but its auth.
 */
import { createKeyring } from '../../src/access-tokens/keyring.js';
import { signAccessToken } from '../../src/access-tokens/access-token.js';

export const ISSUER = 'https://bench.example';
export const AUDIENCE = 'https://bench.example/api';
/** 32+ bytes, as the library requires for HS256 (RFC 7518 §3.2). */
export const HS256_KEY = 'express-service-accounts-bench-hs256-key-0123456789';
export const KID = 'bench-hs256';
export const SCOPE = 'bench:read';
export const PROTECTED_PATH = '/api/resource';
export const TOKEN_PATH = '/oauth/token';
/** The Kubernetes service account of the federated client: namespace `bench`, name `client`. */
export const FEDERATED_SUBJECT = 'system:serviceaccount:bench:client';
/** The body of the protected route, on every server. */
export const RESOURCE = Object.freeze({ ok: true, data: 'protected resource' });

/**
 * A token of exactly the shape the library's token endpoint issues (RFC 9068, `typ: at+jwt`, `kid`),
 * signed with the library's own signer, for the peers that verify JWTs without knowing our accounts.
 */
export function mintAccessToken(clientId = 'esa_benchpeer000000000000000', secretId = 'benchsecret00000'): string {
  const keyring = createKeyring([{ alg: 'HS256', key: HS256_KEY, kid: KID }], (name, problem) => {
    throw new TypeError(`${name} ${problem}`);
  });
  return signAccessToken(
    { keyring, issuer: ISSUER, audience: AUDIENCE },
    { clientId, secretId, scopes: [SCOPE], now: new Date(), lifetime: 3600 },
  ).token;
}

/** Configuration a server child receives in `BENCH_SERVER_CONFIG`. */
export interface ServerConfig {
  /** Library store: 'memory', a `sqlite:` path or a `postgres://` URL (with `?schema=`). */
  readonly store?: string;
  /** An existing client to use instead of creating one (scale runs, where the parent seeded the store). */
  readonly client?: { readonly clientId: string; readonly secret: string };
  /** A token to answer with (bare token route) or to accept (node-oauth2-server's in-memory tokens). */
  readonly token?: string;
  /** SQL store: how often its change feed is polled (default: the store's, 200 ms). */
  readonly pollIntervalMs?: number;
  /** Library: `storeTimeout` (default 2 s). */
  readonly storeTimeout?: number;
  /** Library: `statusCacheTtl` (default 30 s). */
  readonly statusCacheTtl?: number;
  /** The HTTP server's `keepAliveTimeout` (default Node's, 5 s). */
  readonly keepAliveTimeout?: number;
  /** Instruction bench: the file to write after a full garbage collection on SIGUSR2 (lib/callgrind.ts). */
  readonly gcAck?: string;
  /** Bare server: read the token request body with `express.urlencoded()` before answering. */
  readonly parseBody?: boolean;
  /** Library server: the client may also introspect (scope `token:introspect`), for the introspection cases. */
  readonly introspect?: boolean;
  /** Library server: install the OpenTelemetry metrics SDK with a reader (default: the API alone, no SDK). */
  readonly otelSdk?: boolean;
  /** Library server: also make a key-pair client (an account with a registered EC P-256 public key) and report it. */
  readonly keyClient?: boolean;
  /**
   * Library server: also start an outside issuer (lib/outside-issuer.ts), make an account with a
   * federated credential for its subject {@link FEDERATED_SUBJECT}, and report both.
   */
  readonly federatedClient?: boolean;
  /**
   * Flood case (bench/flood.ts): trust `X-Forwarded-For` (so each request can come from its own
   * address), no failure limiter (the bcrypt gate alone), and `accounts` fresh accounts to report.
   */
  readonly flood?: { readonly accounts: number; /** The failure limiter on (its defaults), else off. */ readonly limiter?: boolean };
  /** Library server: an `extraTokenClaims` hook adding two claims to every token (the claims case). */
  readonly extraClaims?: boolean;
  /** Library server: trust `X-Forwarded-For` (`trust proxy`), so each request can come from its own address (the fleet case). */
  readonly trustProxy?: boolean;
  /** Library server: the failure limiter off (the fleet case's `FLEET_LIMITER=off`); on, with its defaults, otherwise. */
  readonly limiterOff?: boolean;
}

/** What a server child reports on its `BENCH_READY` line. */
export interface ServerReady {
  readonly port: number;
  readonly client?: { readonly clientId: string; readonly secret: string };
  readonly token?: string;
  /** Flood case: accounts whose secrets this server has never verified (each needs bcrypt once). */
  readonly fresh?: ReadonlyArray<{ readonly clientId: string; readonly secret: string }>;
  /** With `keyClient`: the key-pair client, with its private key (PKCS #8 PEM). */
  readonly keyClient?: { readonly clientId: string; readonly pkcs8: string };
  /** With `federatedClient`: the outside issuer, the subject the account trusts, and the issuer's key (`kid`, PKCS #8 PEM). */
  readonly federatedClient?: { readonly issuer: string; readonly subject: string; readonly kid: string; readonly pkcs8: string };
}
