/**
 * @module access-token
 * RFC 9068 JWT access tokens: signed with the keyring's signer, verified with the key its `kid`
 * names and that key's own algorithm only. Framework-free.
 */
import { createHmac, randomUUID, sign, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { InvalidTokenError } from '../errors.js';
import type { Keyring, SigningAlgorithm } from './keyring.js';

/**
 * The claims of an access token (RFC 9068), as a resource server that verifies tokens itself reads them.
 *
 * @example
 * ```ts
 * import type { AccessTokenClaims } from 'express-service-accounts'
 *
 * function describeToken(claims: AccessTokenClaims): string {
 *   const scopes = claims.scope?.split(' ') ?? ['(unrestricted)']
 *   return `${claims.client_id}, secret ${claims.secret_id}, scopes ${scopes.join(', ')}, until ${new Date(claims.exp * 1000).toISOString()}`
 * }
 * ```
 */
export interface AccessTokenClaims {
  readonly iss: string;
  /** The client ID (RFC 9068 §2.2: for client credentials, `sub` is the client). */
  readonly sub: string;
  readonly client_id: string;
  /**
   * The API the token is for: the resource the client asked for (RFC 8707), one of its account's
   * resources, or the server's configured `audience` (docs/resources.md).
   */
  readonly aud: string;
  readonly iat: number;
  readonly exp: number;
  readonly jti: string;
  /** Granted scopes, space-separated; absent for an unrestricted account. */
  readonly scope?: string;
  /** ID of the secret the token was issued against: revoking that secret revokes the token. */
  readonly secret_id: string;
  /**
   * The key the token is bound to (RFC 9449 §6): the RFC 7638 thumbprint of the public key of the
   * token request's DPoP proof. Only a request with a proof signed by that key may use the token.
   */
  readonly cnf?: { readonly jkt: string };
}

/**
 * What a token is verified against. `audience` is the server's own audience, that of tokens issued
 * without a resource; the signature check does not pin `aud` to it, since a token may be for one of
 * its account's resources: the token check compares `aud` with the account (token-check.ts), and
 * `requireBearer` with the route's audience.
 */
export interface TokenVerification {
  readonly keyring: Keyring;
  readonly issuer: string;
  readonly audience: string;
  readonly clockTolerance: number;
}

/**
 * Longest token accepted; anything longer is refused before it is parsed. Above the longest token the
 * token endpoint issues: a payload of up to 2000 characters of scopes, 1 KiB of extra claims and a
 * 512-character resource besides the fixed claims (about 5,200 characters once encoded), and an RS256
 * signature of up to 1,366 characters (an 8192-bit key). Below Node's default 16 KiB header limit.
 */
export const MAX_TOKEN_LENGTH = 8192;

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * Latest NumericDate accepted (9999-12-31T23:59:59Z): every accepted `exp`, `iat` and `nbf` is a
 * whole number of seconds that converts to a valid `Date`.
 */
const MAX_NUMERIC_DATE = 253_402_300_799;

/**
 * Signs an access token.
 *
 * @example
 * ```ts
 * const { token, claims } = signAccessToken(config, { clientId, secretId, scopes: ['jobs:write'], now: new Date(), lifetime: 3600 })
 * // For one of the account's resources (RFC 8707): `aud` is that resource instead of config.audience.
 * signAccessToken(config, { clientId, secretId, scopes: undefined, now: new Date(), lifetime: 3600, audience: 'https://billing.example.com' })
 * ```
 */
export function signAccessToken(
  settings: Pick<TokenVerification, 'keyring' | 'issuer' | 'audience'>,
  input: {
    clientId: string;
    secretId: string;
    scopes: readonly string[] | undefined;
    now: Date;
    lifetime: number;
    audience?: string | undefined;
    /** The host's extra claims as a checked JSON object text (extra-token-claims.ts), appended after ours. */
    extraClaimsJson?: string | undefined;
    /** RFC 9449 §6: the thumbprint of the DPoP key the token is bound to. */
    jkt?: string | undefined;
  },
): { token: string; claims: AccessTokenClaims } {
  const iat = Math.floor(input.now.getTime() / 1000);
  const claims: AccessTokenClaims = {
    iss: settings.issuer,
    sub: input.clientId,
    client_id: input.clientId,
    aud: input.audience ?? settings.audience,
    iat,
    exp: iat + input.lifetime,
    jti: randomUUID(),
    ...(input.scopes && input.scopes.length > 0 ? { scope: input.scopes.join(' ') } : {}),
    secret_id: input.secretId,
    ...(input.jkt !== undefined ? { cnf: { jkt: input.jkt } } : {}),
  };
  const { signer } = settings.keyring;
  // RFC 7515 §7.1 compact serialization, as jsonwebtoken writes it for these claims and this header
  // (same bytes; test/unit/access-token-signing.test.ts compares), without its option validation.
  const own = JSON.stringify(claims);
  // `{...ours,...extra}`: no name is in both (the extra claims hold no registered claim), so no duplicate key.
  const payload = input.extraClaimsJson === undefined ? own : `${own.slice(0, -1)},${input.extraClaimsJson.slice(1)}`;
  const signingInput = `${signer.encodedHeader}.${Buffer.from(payload, 'utf8').toString('base64url')}`;
  return { token: `${signingInput}.${signJws(signer.alg, signer.signKey, signingInput)}`, claims };
}

/** The JWS signature of `input` (RFC 7518 §3.2 HMAC, §3.3 RSASSA-PKCS1-v1_5, §3.4 ECDSA as R || S), base64url. */
function signJws(alg: SigningAlgorithm, key: KeyObject, input: string): string {
  if (alg === 'HS256') return createHmac('sha256', key).update(input, 'utf8').digest('base64url');
  const data = Buffer.from(input, 'utf8');
  return (alg === 'ES256' ? sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' }) : sign('sha256', data, key)).toString('base64url');
}

function isTokenType(typ: unknown): boolean {
  // RFC 9068 §2.1: "at+jwt"; RFC 7515 §4.1.9 allows the full media type too.
  return typeof typ === 'string' && /^(application\/)?at\+jwt$/i.test(typ);
}

/**
 * RFC 7515 §4.1.11: a recipient must reject a token whose `crit` names an extension it does not
 * understand, and we understand none, so any `crit` is refused. RFC 7797 `b64: false` changes what the
 * signature covers (the payload unencoded): refused too. We never issue either.
 */
function hasNoExtensions(header: jwt.JwtHeader): boolean {
  const { crit, b64 } = header as jwt.JwtHeader & { b64?: unknown };
  return crit === undefined && (b64 === undefined || b64 === true);
}

/** jwt.decode, where a token it cannot read is `null`: jws.decode JSON-parses the payload of a `typ: "JWT"` header without catching. */
function decodeComplete(token: string): jwt.Jwt | null {
  try {
    return jwt.decode(token, { complete: true });
  } catch {
    return null;
  }
}

/**
 * Verifies a bearer token and returns its claims.
 *
 * Beyond the signature and issuer: `aud` is one string (which API it names is checked against the
 * account by the token check, and against the route by `requireBearer`); the header carries no `crit` and no `b64: false`;
 * `exp`, `iat` and `nbf` (when present) are whole seconds between 1970 and 9999; `iat` is not after
 * `exp` nor after now plus the clock tolerance; `nbf` is not after now plus the tolerance.
 * @throws {InvalidTokenError} `expired` when `exp` has passed (beyond the tolerance), `invalid` for anything else.
 */
export function verifyAccessToken(settings: TokenVerification, token: string, now: Date): AccessTokenClaims {
  if (token.length > MAX_TOKEN_LENGTH || !JWT_SHAPE.test(token)) throw new InvalidTokenError('invalid');
  const decoded = decodeComplete(token);
  const header = decoded?.header;
  if (!header || !isTokenType(header.typ) || typeof header.kid !== 'string' || !hasNoExtensions(header)) {
    throw new InvalidTokenError('invalid');
  }
  const key = settings.keyring.keys.get(header.kid);
  if (!key || header.alg !== key.alg) throw new InvalidTokenError('invalid');

  const nowSeconds = Math.floor(now.getTime() / 1000);
  let payload: unknown;
  try {
    payload = jwt.verify(token, key.verifyKey, {
      algorithms: [key.alg],
      issuer: settings.issuer,
      clockTolerance: settings.clockTolerance,
      clockTimestamp: nowSeconds,
    });
  } catch (err) {
    // Expired only when the claims are otherwise well-formed, so readVerifiedClaims() can read them.
    const expired = err instanceof jwt.TokenExpiredError && isAccessTokenClaims(decoded.payload);
    throw new InvalidTokenError(expired ? 'expired' : 'invalid', { cause: err });
  }
  // RFC 7519 §4.1.6: a token issued in the future (beyond the tolerance) was not issued by a sane clock.
  if (!isAccessTokenClaims(payload) || payload.iat > nowSeconds + settings.clockTolerance) {
    throw new InvalidTokenError('invalid');
  }
  return payload;
}

/**
 * The claims of a token whose signature was already verified (an expired one, say), without checking
 * them again; `undefined` when they are not access token claims. Never use it on an unverified token.
 */
export function readVerifiedClaims(token: string): AccessTokenClaims | undefined {
  const payload: unknown = jwt.decode(token);
  return isAccessTokenClaims(payload) ? payload : undefined;
}

/** RFC 7519 §2 NumericDate, restricted to whole seconds after 1970 and before the year 10000. */
function isNumericDate(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) > 0 && (value as number) <= MAX_NUMERIC_DATE;
}

function isAccessTokenClaims(value: unknown): value is AccessTokenClaims {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  return (
    typeof c.sub === 'string' &&
    c.client_id === c.sub &&
    typeof c.aud === 'string' &&
    typeof c.secret_id === 'string' &&
    typeof c.jti === 'string' &&
    isNumericDate(c.exp) &&
    isNumericDate(c.iat) &&
    c.iat <= c.exp &&
    (c.nbf === undefined || isNumericDate(c.nbf)) &&
    (c.scope === undefined || typeof c.scope === 'string') &&
    (c.cnf === undefined || (typeof c.cnf === 'object' && c.cnf !== null && typeof (c.cnf as { jkt?: unknown }).jkt === 'string'))
  );
}
