/**
 * @module token-grant
 * What an access token grants, written once for its users: its scopes (the RFC 6749 §3.3 grammar),
 * its audience (RFC 8707 resource indicators) and its lifetime. The syntax and bounds are checked by
 * the admin API's input check, the configuration and `requireBearer({ scope, audience })`; the choice
 * for one token ({@link TokenGrant}), from what the client asked and what its account allows, is made
 * once by the token endpoint, after client authentication ({@link grantScopes}, {@link chooseAudience},
 * {@link accessTokenLifetimeOf}).
 * Each caller decides which error a refused value becomes (`invalid_input`, `invalid_scope`,
 * `invalid_target`, a startup `TypeError`).
 */
import { InvalidScopeError, InvalidTargetError } from './errors.js';

/**
 * What one access token grants, decided once per token request from what the client asked and what
 * its account allows ({@link grantScopes}, {@link chooseAudience}).
 */
export interface TokenGrant {
  /** The token's scopes; `undefined` for an account without scopes (unrestricted: no `scope` claim). */
  readonly scopes: readonly string[] | undefined;
  /** The token's audience; `undefined` for the server's `audience`. */
  readonly audience: string | undefined;
}

// Scopes (RFC 6749 §3.3).

/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * Whether `value` is one RFC 6749 §3.3 scope token: a non-empty string of printable ASCII without
 * space, `"` or `\`.
 *
 * @example
 * ```ts
 * isScopeToken('jobs:read') // true
 * isScopeToken('jobs read') // false: two tokens
 * isScopeToken('"jobs"')    // false
 * ```
 */
export function isScopeToken(value: unknown): value is string {
  return typeof value === 'string' && SCOPE_TOKEN.test(value);
}

/**
 * A scope list as given by a caller, one space-separated string (RFC 6749 §3.3 `scope`) or a list of
 * tokens, as scope tokens in the order given. Empty items (repeated, leading or trailing spaces) are
 * dropped; duplicates are kept. The first item that is not a scope token is passed to `invalid`, whose
 * error is thrown.
 *
 * @example
 * ```ts
 * parseScopeList('jobs:read  jobs:write', (s) => new TypeError(`bad scope ${JSON.stringify(s)}`))
 * // ['jobs:read', 'jobs:write']
 * ```
 */
export function parseScopeList(value: string | Iterable<unknown>, invalid: (item: unknown) => Error): string[] {
  const scopes: string[] = [];
  for (const item of typeof value === 'string' ? value.split(' ') : value) {
    if (item === '') continue;
    if (!isScopeToken(item)) throw invalid(item);
    scopes.push(item);
  }
  return scopes;
}

/**
 * The scopes to grant for a token request: an account without scopes is unrestricted and its tokens
 * carry no `scope` (`undefined`); otherwise the requested scopes must all be allowed, and none
 * requested means all allowed. A `scope` parameter that is present but empty or not scope tokens is
 * malformed. Throws {@link InvalidScopeError} (400 `invalid_scope`, RFC 6749 §5.2).
 *
 * @example
 * ```ts
 * grantScopes(['jobs:read', 'jobs:write'], 'jobs:read') // ['jobs:read']
 * grantScopes(['jobs:read', 'jobs:write'], undefined)   // ['jobs:read', 'jobs:write']
 * grantScopes([], 'anything')                           // undefined: unrestricted
 * ```
 */
export function grantScopes(allowed: readonly string[], requested: string | undefined): readonly string[] | undefined {
  const asked = requested === undefined ? [] : parseScopeList(requested, malformedScope);
  if (requested !== undefined && asked.length === 0) throw malformedScope();
  if (allowed.length === 0) return undefined;
  if (asked.length === 0) return allowed;
  if (!asked.every((s) => allowed.includes(s))) throw new InvalidScopeError('A requested scope is not allowed for this client');
  return [...new Set(asked)];
}

function malformedScope(): InvalidScopeError {
  return new InvalidScopeError('The scope parameter is malformed');
}

// Resources (RFC 8707): the syntax of a resource an account may be allowed, and a token's audience.

/**
 * The most resources an account may be allowed.
 *
 * @example
 * ```ts
 * const fits = ['https://billing.example.com', 'reports'].length <= MAX_RESOURCES
 * ```
 */
export const MAX_RESOURCES = 20;

/**
 * The longest resource, in characters: it becomes a token's `aud`.
 *
 * @example
 * ```ts
 * const fits = 'https://billing.example.com'.length <= MAX_RESOURCE_LENGTH
 * ```
 */
export const MAX_RESOURCE_LENGTH = 512;

/** A plain audience name: letters, digits, `.`, `_`, `~` and `-`, starting with a letter or a digit. */
const PLAIN_NAME = /^[A-Za-z0-9][A-Za-z0-9._~-]*$/;
/** RFC 3986 §3.1 scheme, then the rest: printable ASCII without space, `"`, `<`, `>`, `\`, `^`, `` ` ``, `{`, `|`, `}` or `#`. */
const ABSOLUTE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:[!$%&'()*+,\-./0-9:;=?@A-Z[\]_a-z~]+$/;
/** A `%` that does not start an RFC 3986 §2.1 pct-encoded octet (`%` and two hex digits). */
const BARE_PERCENT = /%(?![0-9A-Fa-f]{2})/;

/**
 * Whether `value` is a resource an account may be allowed: an absolute URI without a fragment
 * (RFC 8707 §2, such as `https://billing.example.com` or `urn:example:billing`) nor user information
 * (`user:password@`, RFC 3986 §3.2.1), whose every `%` starts a `%XX` octet, or a plain name
 * the host chooses (`billing-api`), at most {@link MAX_RESOURCE_LENGTH} characters. Compared as
 * written: no normalisation, so `https://a.example` and `https://a.example/` are two resources.
 *
 * @example
 * ```ts
 * isResourceIndicator('https://billing.example.com/') // true
 * isResourceIndicator('billing-api')                  // true
 * isResourceIndicator('https://a.example/#part')      // false: a fragment (RFC 8707 §2)
 * isResourceIndicator('https://user:pw@a.example')    // false: user information
 * isResourceIndicator('billing api')                  // false
 * ```
 */
export function isResourceIndicator(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_RESOURCE_LENGTH) return false;
  if (PLAIN_NAME.test(value)) return true;
  if (!ABSOLUTE_URI.test(value) || BARE_PERCENT.test(value)) return false;
  try {
    // RFC 3986 §3.2.1: user information (a deprecated "user:password") has no place in an audience,
    // which every token, listing and audit event shows.
    const url = new URL(value);
    return url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

/**
 * The audience of a token issued to an account: the requested resource when the account is allowed
 * it; with no request, the account's only resource; for an account without resources, the server's
 * `audience` (which it may also name). Returns `undefined` for the server's audience.
 * @throws {InvalidTargetError} a resource the account is not allowed, or none named by an account
 * allowed several (RFC 8707 §2 lets the server pick a default; refusing is safer than guessing).
 *
 * @example
 * ```ts
 * chooseAudience(['https://billing.example.com'], undefined, 'https://api.example.com') // 'https://billing.example.com'
 * chooseAudience([], undefined, 'https://api.example.com')                            // undefined: the server's audience
 * chooseAudience(['a', 'b'], 'b', 'https://api.example.com')                          // 'b'
 * ```
 */
export function chooseAudience(allowed: readonly string[] | undefined, requested: string | undefined, serverAudience: string): string | undefined {
  if (allowed === undefined || allowed.length === 0) {
    if (requested === undefined || requested === serverAudience) return undefined;
    throw new InvalidTargetError(NOT_ALLOWED);
  }
  if (requested === undefined) {
    if (allowed.length === 1) return allowed[0];
    throw new InvalidTargetError('This client may get tokens for several resources: name one with the resource parameter');
  }
  if (allowed.includes(requested)) return requested;
  throw new InvalidTargetError(NOT_ALLOWED);
}

const NOT_ALLOWED = 'This client may not get tokens for the requested resource';

// Lifetime: the bounds of the options that decide how long a token may be admitted (`tokenLifetime`,
// `maxAccessTokenLifetime` and `clockTolerance`), and the lifetime of a token issued to one account.

/** Longest token lifetime `tokenLifetime` accepts, in seconds (a day). */
export const MAX_TOKEN_LIFETIME = 86_400;

/** Largest `clockTolerance` accepted, in seconds. */
export const MAX_CLOCK_TOLERANCE = 300;

/**
 * The lifetime, in seconds, of a token issued to `account`: its own `accessTokenLifetime`, else the
 * server's `tokenLifetime`, never above the server's `maxAccessTokenLifetime` (a value stored by an
 * admin API with a higher maximum is cut to it, so the deny-list retention, which is derived from
 * that maximum, always outlives the token).
 *
 * @example
 * ```ts
 * const limits = { tokenLifetime: 3600, maxAccessTokenLifetime: 7200 }
 * accessTokenLifetimeOf({ accessTokenLifetime: 900 }, limits)   // 900
 * accessTokenLifetimeOf({ accessTokenLifetime: null }, limits)  // 3600
 * accessTokenLifetimeOf({ accessTokenLifetime: 86400 }, limits) // 7200
 * ```
 */
export function accessTokenLifetimeOf(
  account: { readonly accessTokenLifetime?: number | null },
  limits: { readonly tokenLifetime: number; readonly maxAccessTokenLifetime: number },
): number {
  const own = account.accessTokenLifetime;
  if (own === undefined || own === null) return limits.tokenLifetime;
  return Math.min(own, limits.maxAccessTokenLifetime);
}
