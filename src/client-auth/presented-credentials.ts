/**
 * @module presented-credentials
 * What a token request presents to authenticate its client, read once, when its parameters are
 * validated: HTTP Basic (decoded as RFC 6749 §2.3.1 and Appendix B require), the body, or a signed
 * client assertion (RFC 7523 §2.2). Reading them also decides which method authenticates the request,
 * once: a secret, a key-pair assertion (it names the client as both `iss` and `sub`), or an outside
 * issuer's token (a federated credential: it names the issuer and the workload). Also which presented
 * values are worth a store lookup at all ({@link isLookupValue}). The types the request's validation,
 * the client authenticator and the grant share. Framework-free.
 */
import { decodeJwt, type JWTPayload } from 'jose';
import { InvalidRequestError } from '../errors.js';
import type { AccountRecord } from '../store/account-store.js';
import type { CredentialKindName } from '../store/credential-kinds.js';

/** The assertion type of RFC 7523 §2.2, the only one accepted in `client_assertion_type`. */
export const JWT_BEARER_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** The issuer and subject an outside token names, read before its signature is checked. */
export interface FederatedTokenNames {
  readonly issuer: string;
  readonly subject: string;
}

/**
 * How the client presented its credentials, decoded once by the request's validation, with the
 * method that decides it (`kind`). `method` is how they travelled (what passport's strategies
 * adapt); `authorizationHeader`: the request carried an `Authorization` header, whatever it held, so
 * a failure challenges with Basic (RFC 6749 §5.2).
 */
export type PresentedCredentials =
  | { readonly kind: 'none'; readonly method: 'none'; readonly authorizationHeader: boolean }
  | { readonly kind: 'secret'; readonly method: 'basic' | 'body'; readonly clientId: string; readonly secret: string; readonly authorizationHeader: boolean }
  /** Basic or body credentials that cannot be read (a bad Basic encoding, a client ID without a secret). */
  | { readonly kind: 'malformed'; readonly method: 'basic' | 'body'; readonly clientId?: string; readonly authorizationHeader: boolean }
  /** A key-pair assertion (`private_key_jwt`), with its claims read unverified (`undefined`: no JWT) and the `client_id` sent beside it, if any. */
  | KeyPairCredentials
  /** An outside issuer's token (a federated credential), with the issuer and subject it names. */
  | FederatedCredentials;

export interface KeyPairCredentials {
  readonly kind: 'key';
  readonly method: 'assertion';
  readonly assertion: string;
  readonly claims: JWTPayload | undefined;
  readonly clientId?: string;
  readonly authorizationHeader: boolean;
}

export interface FederatedCredentials {
  readonly kind: 'federated';
  readonly method: 'assertion';
  readonly assertion: string;
  readonly names: FederatedTokenNames;
  readonly clientId?: string;
  readonly authorizationHeader: boolean;
}

/** The credential a client authenticated with: a secret, a public key or a federated credential, by ID (the ID tokens carry). */
export interface UsedCredential {
  readonly kind: CredentialKindName;
  readonly id: string;
}

/** A client that authenticated: its account and the credential it used. */
export interface AuthenticatedClient {
  readonly account: AccountRecord;
  readonly credential: UsedCredential;
}

/** The answer of client authentication: the typed failure, or the client. */
export type AuthenticationDone = (err: unknown, client?: AuthenticatedClient) => void;

/** The parameters that carry client credentials, as read from the body (absent or a string). */
export interface CredentialFields {
  readonly client_id: string | undefined;
  readonly client_secret: string | undefined;
  readonly client_assertion_type: string | undefined;
  readonly client_assertion: string | undefined;
}

/**
 * How the request presents client credentials: one method, decoded once (RFC 6749 §2.3: a client
 * must not use more than one authentication method in a request).
 * @throws {InvalidRequestError} a request that mixes methods or sends half an assertion (→ 400 `invalid_request`)
 *
 * @example
 * ```ts
 * const presented = presentedCredentials({ client_id: undefined, client_secret: undefined, client_assertion_type: undefined, client_assertion: undefined }, 'Basic ZXNhX2FiYzplc2FzX3h5eg==')
 * presented.kind // 'secret'
 * ```
 */
export function presentedCredentials(fields: CredentialFields, authorization: string | undefined): PresentedCredentials {
  const basic = parseBasicAuthorization(authorization);
  const authorizationHeader = authorization !== undefined;
  const clientId = fields.client_id !== undefined ? { clientId: fields.client_id } : {};
  if (fields.client_assertion !== undefined || fields.client_assertion_type !== undefined) {
    // RFC 7521 §4.2: both parameters; RFC 6749 §2.3: one method per request.
    if (fields.client_assertion === undefined) throw new InvalidRequestError('The client_assertion parameter is missing');
    if (fields.client_assertion_type !== JWT_BEARER_ASSERTION_TYPE) {
      throw new InvalidRequestError(`The client_assertion_type parameter must be ${JWT_BEARER_ASSERTION_TYPE}`);
    }
    if (basic.kind !== 'absent' || fields.client_secret !== undefined) {
      throw new InvalidRequestError('Send either a client assertion or a client secret, not both');
    }
    const assertion = fields.client_assertion;
    const claims = unverifiedClaims(assertion);
    const names = claims && federatedTokenNames(claims);
    return names
      ? { kind: 'federated', method: 'assertion', assertion, names, ...clientId, authorizationHeader }
      : { kind: 'key', method: 'assertion', assertion, claims, ...clientId, authorizationHeader };
  }
  if (basic.kind !== 'absent') {
    const clashes =
      fields.client_secret !== undefined || (fields.client_id !== undefined && (basic.kind !== 'present' || fields.client_id !== basic.clientId));
    if (clashes) throw new InvalidRequestError('Send client credentials either in HTTP Basic or in the body, not both');
    return basic.kind === 'present'
      ? { kind: 'secret', method: 'basic', clientId: basic.clientId, secret: basic.secret, authorizationHeader }
      : { kind: 'malformed', method: 'basic', authorizationHeader };
  }
  if (fields.client_id !== undefined && fields.client_secret !== undefined) {
    return { kind: 'secret', method: 'body', clientId: fields.client_id, secret: fields.client_secret, authorizationHeader };
  }
  if (fields.client_id !== undefined || fields.client_secret !== undefined) return { kind: 'malformed', method: 'body', ...clientId, authorizationHeader };
  return { kind: 'none', method: 'none', authorizationHeader };
}

/** The claims of an assertion, read without checking its signature: only to tell its kind and whose keys to try. */
function unverifiedClaims(assertion: string): JWTPayload | undefined {
  try {
    return decodeJwt(assertion);
  } catch {
    return undefined;
  }
}

/**
 * The issuer and subject of an assertion that is an outside issuer's token: both strings, the issuer
 * unlike the subject (a key-pair assertion names the client in both).
 *
 * @example
 * ```ts
 * declare const payload: { iss?: unknown; sub?: unknown } // a client assertion's claims, unverified
 * federatedTokenNames(payload) // { issuer: 'https://token.actions.githubusercontent.com', subject: 'repo:acme/billing:ref:refs/heads/main' }
 * ```
 */
export function federatedTokenNames(payload: { readonly iss?: unknown; readonly sub?: unknown }): FederatedTokenNames | undefined {
  const { iss, sub } = payload;
  if (typeof iss !== 'string' || typeof sub !== 'string' || iss === sub) return undefined;
  return { issuer: iss, subject: sub };
}

/** The result of reading an `Authorization` header for Basic credentials. */
export type BasicCredentials =
  | { readonly kind: 'absent' }
  | { readonly kind: 'malformed' }
  | { readonly kind: 'present'; readonly clientId: string; readonly secret: string };

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** application/x-www-form-urlencoded decoding of one value ('+' is a space). */
function formDecode(value: string): string | undefined {
  // Nothing to decode (a generated client ID or secret): decodeURIComponent would return it as it is.
  if (value.indexOf('%') < 0 && value.indexOf('+') < 0) return value;
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/**
 * Reads Basic credentials from an `Authorization` header value, the one decoder of them: the client ID
 * and secret are each form-urlencoded before base64 (RFC 6749 §2.3.1), so a `:` `%` `+` or non-ASCII
 * character survives (passport-http splits at every `:` and decodes nothing, so it never decodes
 * ours: see passport-adapter.ts). The scheme is case-insensitive (RFC 7235).
 * @example
 * ```ts
 * parseBasicAuthorization('Basic ' + btoa('esa_abc:esas_...')) // { kind: 'present', clientId: 'esa_abc', secret: 'esas_...' }
 * ```
 */
export function parseBasicAuthorization(header: string | undefined): BasicCredentials {
  if (header === undefined) return { kind: 'absent' };
  const match = /^([A-Za-z]+)(?: +(.*))?$/.exec(header.trim());
  if (!match || match[1]!.toLowerCase() !== 'basic') return { kind: 'absent' };
  const token = match[2]?.trim() ?? '';
  if (!BASE64.test(token) || token.length % 4 === 1) return { kind: 'malformed' };
  const decoded = Buffer.from(token, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return { kind: 'malformed' };
  const clientId = formDecode(decoded.slice(0, colon));
  const secret = formDecode(decoded.slice(colon + 1));
  if (!clientId || !secret) return { kind: 'malformed' };
  return { kind: 'present', clientId, secret };
}

// Which presented values are worth a store lookup: bounded in length, and free of control characters.
// PostgreSQL refuses a NUL in a text parameter with an error that would read as a store outage (a 503,
// and a false `store.unavailable` event), and no stored client ID, issuer or subject holds a control
// character, so such a value is answered "unknown" without any store call.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * Whether `value` may be looked up: at most `maxLength` characters, none of them a control character.
 *
 * @example
 * ```ts
 * isLookupValue('esa_V1StGXR8Z5jdHi6BmyT0aQ2k', 256) // true
 * isLookupValue('esa_\u0000', 256) // false: answered as unknown, without a store call
 * ```
 */
export function isLookupValue(value: string, maxLength: number): boolean {
  return value.length > 0 && value.length <= maxLength && !CONTROL_CHARACTER.test(value);
}

/**
 * The most characters of a client ID worth looking up: the token endpoint's and the admin API's bound.
 * @example
 * ```ts
 * const worthALookup = clientId.length <= MAX_CLIENT_ID_LENGTH
 * ```
 */
export const MAX_CLIENT_ID_LENGTH = 256;

/**
 * Whether a presented client ID may be looked up (see {@link isLookupValue}): longer ones, or ones
 * holding a control character, name no account.
 *
 * @example
 * ```ts
 * const account = isClientIdLookup(clientId) ? await store.findAccount(clientId) : undefined
 * ```
 */
export function isClientIdLookup(clientId: unknown): clientId is string {
  return typeof clientId === 'string' && isLookupValue(clientId, MAX_CLIENT_ID_LENGTH);
}
