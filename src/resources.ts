/**
 * @module resources
 * Resource indicators (RFC 8707), written once for their users: the syntax of a resource an account
 * may be allowed (the admin API's input check and `requireBearer({ audience })`), and the choice of a
 * token's audience from what the client asked and what its account allows (the token endpoint).
 * Each caller decides which error a refused value becomes.
 */
import { InvalidTargetError } from './errors.js';

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

/**
 * Whether `value` is a resource an account may be allowed: an absolute URI without a fragment
 * (RFC 8707 §2, such as `https://billing.example.com` or `urn:example:billing`), or a plain name
 * the host chooses (`billing-api`), at most {@link MAX_RESOURCE_LENGTH} characters. Compared as
 * written: no normalisation, so `https://a.example` and `https://a.example/` are two resources.
 *
 * @example
 * ```ts
 * isResourceIndicator('https://billing.example.com/') // true
 * isResourceIndicator('billing-api')                  // true
 * isResourceIndicator('https://a.example/#part')      // false: a fragment (RFC 8707 §2)
 * isResourceIndicator('billing api')                  // false
 * ```
 */
export function isResourceIndicator(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_RESOURCE_LENGTH) return false;
  if (PLAIN_NAME.test(value)) return true;
  if (!ABSOLUTE_URI.test(value)) return false;
  try {
    new URL(value);
    return true;
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
