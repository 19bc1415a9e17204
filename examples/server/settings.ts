/**
 * The example server's settings, read once from the environment (examples/README.md). A bad value stops the
 * server with one clear line and exit code 1.
 */
import { parseAccountStoreUrl, type AccountStoreLocation } from 'express-service-accounts/sql';
import { DEFAULT_ACTIVITY_RETENTION_SECONDS } from './activity-store.js';

/** The store used when SERVICE_ACCOUNTS_STORE is not set: the same default as the CLI. */
export const DEFAULT_STORE_URL = 'sqlite:./.data/service-accounts.db';

/** A setting the operator got wrong: printed as one line, then the server exits 1. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/**
 * ADMIN_TOKEN and ADMIN_TENANT_TOKENS: the bearer tokens of the admin API at /admin (admin.ts), a
 * stand-in for a real login.
 */
export interface AdminTokens {
  /** ADMIN_TOKEN: admits an operator of every client account. */
  readonly operator: string | undefined;
  /**
   * ADMIN_TENANT_TOKENS (`token1=clientAccountA,token2=clientAccountB`): token → the one client account it
   * administers. Each pair is split at the last `=` of its first run of `=`, so a token may end in base64
   * padding and a client account ID may hold a `=`.
   */
  readonly tenants: ReadonlyMap<string, string>;
}

export interface ServerSettings {
  /** PORT: where to listen (0 picks a free port). */
  readonly port: number;
  /** SERVICE_ACCOUNTS_STORE, parsed. */
  readonly storeUrl: string;
  readonly store: AccountStoreLocation;
  /** TOKEN_TTL_SECONDS. */
  readonly tokenLifetime: number;
  /** MAX_TOKEN_TTL_SECONDS: the longest token lifetime an account may be given (default TOKEN_TTL_SECONDS). */
  readonly maxAccessTokenLifetime: number;
  /** TOKEN_ISSUER, or undefined to use http://localhost:PORT once the port is known. */
  readonly issuer: string | undefined;
  /** MAX_ASSERTION_LIFETIME_SECONDS: the longest lifetime a private_key_jwt client assertion may have left (10 to 3600). */
  readonly maxAssertionLifetime: number;
  /** ACCEPT_TOKEN_ENDPOINT_AUDIENCE: `1` (true), the token endpoint URL as clients post to it, or unset/`0` (false). */
  readonly acceptTokenEndpointAudience: boolean | string;
  /** TOKEN_FAILURE_LIMIT: failures per client ID and per address per minute; false turns the limit off. */
  readonly failureLimit: { max: number; windowSeconds: number } | false;
  /** TOKEN_SIGNING_KEY, as given (parsed by signing-key.ts). */
  readonly signingKey: string | undefined;
  /** METRICS=1: serve Prometheus metrics at GET /metrics. */
  readonly metrics: boolean;
  readonly healthDetailsToken: string | undefined;
  /** With ADMIN_TOKEN or ADMIN_TENANT_TOKENS: the admin API at /admin; undefined: not mounted. */
  readonly admin: AdminTokens | undefined;
  /** FEDERATION_ALLOW_HTTP_LOOPBACK=1: trust outside issuers on 127.0.0.1 over plain http (local development and tests only). */
  readonly federationAllowHttpLoopback: boolean;
  /** FEDERATION_ALLOW_PRIVATE_NETWORKS=1: fetch outside issuers' keys from private network addresses (10/8, 192.168/16, ...). */
  readonly federationAllowPrivateNetworks: boolean;
  /**
   * FEDERATION_ALLOWED_ISSUERS: the only issuers federated credentials may name (`federation.allowedIssuers`);
   * `none` gives an empty list; undefined (unset, or `any`): any https issuer.
   */
  readonly federationAllowedIssuers: readonly string[] | undefined;
  /** ACTIVITY_RETENTION_SECONDS: how long the activity history keeps an entry (default 7 days). */
  readonly activityRetentionSeconds: number;
  /** MAX_CREDENTIAL_LIFETIME: every new credential must expire within it, in seconds (unset: no rule). */
  readonly maxCredentialLifetime: number | undefined;
}

const DURATION_UNITS: Readonly<Record<string, number>> = { d: 86_400, h: 3600, m: 60, s: 1 };

/** A duration such as 90d, 12h, 30m or 4s (or whole seconds), as the CLI reads the same variable. */
function duration(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]?.trim() ?? '';
  if (raw === '') return undefined;
  const match = /^([1-9][0-9]{0,9})([dhms]?)$/.exec(raw);
  if (!match) throw new StartupError(`${name} must be a duration such as 90d, 12h, 30m or 4s`);
  return Number(match[1]) * DURATION_UNITS[match[2] || 's']!;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    throw new StartupError(`${name} must be an integer from ${min} to ${max}`);
  }
  return value;
}

function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name]?.trim().toLowerCase() ?? '';
  if (raw === '' || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new StartupError(`${name} must be 1 or 0`);
}

const TOKEN = /^[\x21-\x7e]+$/; // printable ASCII without spaces: what fits in `Authorization: Bearer ...`

/** ADMIN_TOKEN and ADMIN_TENANT_TOKENS, or undefined when neither is set. */
function readAdminTokens(env: NodeJS.ProcessEnv): AdminTokens | undefined {
  const operator = env.ADMIN_TOKEN?.trim() || undefined;
  if (operator !== undefined && !TOKEN.test(operator)) throw new StartupError('ADMIN_TOKEN must be printable ASCII without spaces');
  const tenants = new Map<string, string>();
  for (const entry of (env.ADMIN_TENANT_TOKENS ?? '').split(',')) {
    if (entry.trim() === '') continue;
    // Split at the last '=' of the first run of them: a token may end in base64 padding ('abc===acme'),
    // and a client account ID may hold one ('t1=team=a' gives t1 to 'team=a', as it always did).
    const equals = /=+/.exec(entry);
    const at = equals === null ? -1 : equals.index + equals[0].length - 1;
    const token = entry.slice(0, Math.max(at, 0)).trim();
    const clientAccountId = entry.slice(at + 1).trim();
    if (at < 0 || !TOKEN.test(token) || clientAccountId === '') {
      throw new StartupError('ADMIN_TENANT_TOKENS must be token=clientAccountId pairs separated by commas, such as t1=acme,t2=globex');
    }
    if (tenants.has(token) || token === operator) throw new StartupError('ADMIN_TENANT_TOKENS: each token must be different, and different from ADMIN_TOKEN');
    tenants.set(token, clientAccountId);
  }
  return operator === undefined && tenants.size === 0 ? undefined : { operator, tenants };
}

/**
 * FEDERATION_ALLOWED_ISSUERS: issuer URLs separated by commas (checked by the library), `none` (no
 * outside issuer), `any` (any https issuer: the library's default), or unset. Tenant administrators
 * (ADMIN_TENANT_TOKENS) would otherwise choose the addresses this server fetches: with them, an unset
 * list (or `any`) starts the server with a loud warning (server.ts).
 */
function readAllowedIssuers(env: NodeJS.ProcessEnv, admin: AdminTokens | undefined): readonly string[] | undefined {
  const raw = env.FEDERATION_ALLOWED_ISSUERS?.trim() ?? '';
  if (raw === '') return undefined;
  if (raw.toLowerCase() === 'any') return undefined;
  if (raw.toLowerCase() === 'none') return [];
  const issuers = raw.split(',').map((entry) => entry.trim());
  if (issuers.some((issuer) => issuer === '')) throw new StartupError('FEDERATION_ALLOWED_ISSUERS must be issuer URLs separated by commas, none, or any');
  return issuers;
}

/** Reads the settings from `env`; throws {@link StartupError} naming the first bad variable. */
function healthDetailsToken(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.HEALTH_DETAILS_TOKEN?.trim() ?? '';
  if (raw === '') return undefined;
  if (raw.length < 32 || !/^[\x21-\x7e]+$/.test(raw)) {
    throw new StartupError('HEALTH_DETAILS_TOKEN must be at least 32 printable characters without spaces (try: openssl rand -hex 32)');
  }
  return raw;
}

/** ACCEPT_TOKEN_ENDPOINT_AUDIENCE: `1` derives the token endpoint URL, an http(s) URL names it; unset or `0` is off. */
function tokenEndpointAudience(env: NodeJS.ProcessEnv): boolean | string {
  const raw = env.ACCEPT_TOKEN_ENDPOINT_AUDIENCE?.trim() ?? '';
  if (raw === '' || raw === '0') return false;
  if (raw === '1') return true;
  if (/^https?:\/\/[^\s?#]+$/.test(raw)) return raw;
  throw new StartupError('ACCEPT_TOKEN_ENDPOINT_AUDIENCE must be 0, 1 or the token endpoint URL clients post to, such as https://api.example.com/oauth/token');
}

export function readSettings(env: NodeJS.ProcessEnv): ServerSettings {
  const storeUrl = env.SERVICE_ACCOUNTS_STORE?.trim() || DEFAULT_STORE_URL;
  let store: AccountStoreLocation;
  try {
    store = parseAccountStoreUrl(storeUrl);
  } catch (error) {
    throw new StartupError(`SERVICE_ACCOUNTS_STORE: ${(error as Error).message}`);
  }
  const failures = integer(env, 'TOKEN_FAILURE_LIMIT', 10, 0, 1_000_000);
  const issuer = env.TOKEN_ISSUER?.trim() || undefined;
  // An issuer has no query or fragment (RFC 8414 §2): the metadata's endpoints are built by appending to it.
  if (issuer !== undefined && (!/^https?:\/\/[^\s?#]+$/.test(issuer) || !URL.canParse(issuer))) {
    throw new StartupError('TOKEN_ISSUER must be an http(s) URL without a query or fragment, such as https://api.example.com');
  }
  const admin = readAdminTokens(env);
  const tokenLifetime = integer(env, 'TOKEN_TTL_SECONDS', 3600, 1, 86_400);
  return {
    port: integer(env, 'PORT', 3000, 0, 65_535),
    storeUrl,
    store,
    tokenLifetime,
    maxAccessTokenLifetime: integer(env, 'MAX_TOKEN_TTL_SECONDS', tokenLifetime, tokenLifetime, 86_400),
    maxAssertionLifetime: integer(env, 'MAX_ASSERTION_LIFETIME_SECONDS', 3600, 10, 3600),
    acceptTokenEndpointAudience: tokenEndpointAudience(env),
    issuer,
    failureLimit: failures === 0 ? false : { max: failures, windowSeconds: 60 },
    signingKey: env.TOKEN_SIGNING_KEY === '' ? undefined : env.TOKEN_SIGNING_KEY,
    metrics: flag(env, 'METRICS'),
    healthDetailsToken: healthDetailsToken(env),
    admin,
    federationAllowHttpLoopback: flag(env, 'FEDERATION_ALLOW_HTTP_LOOPBACK'),
    federationAllowPrivateNetworks: flag(env, 'FEDERATION_ALLOW_PRIVATE_NETWORKS'),
    federationAllowedIssuers: readAllowedIssuers(env, admin),
    activityRetentionSeconds: integer(env, 'ACTIVITY_RETENTION_SECONDS', DEFAULT_ACTIVITY_RETENTION_SECONDS, 60, 315_360_000),
    maxCredentialLifetime: duration(env, 'MAX_CREDENTIAL_LIFETIME'),
  };
}
