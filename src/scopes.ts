/**
 * @module scopes
 * The RFC 6749 §3.3 scope grammar, written once for its three users: the admin API's input check,
 * the token endpoint's `scope` parameter and `requireBearer({ scope })`. Each caller decides which
 * error a refused scope becomes (`invalid_input`, `invalid_scope`, a startup `TypeError`).
 */
import { InvalidScopeError } from './errors.js';

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
