/**
 * @module extra-token-claims
 * The host's extra claims in access tokens (the `extraTokenClaims` option; docs/account-policy.md):
 * what the hook receives, the claims it may never set, the size bound, and the one check of what it
 * returned. The token endpoint turns a refusal into 500 `server_error` and an operational event.
 */
import type { AccountRecord } from './store/account-store.js';

/**
 * What the `extraTokenClaims` hook is called with, once per issued token: a copy of its own, which
 * the hook may keep or even edit; nothing it does to it reaches the instance's account or the
 * token's scopes.
 *
 * @example
 * ```ts
 * import type { ExtraTokenClaimsInput } from 'express-service-accounts'
 *
 * const plans = new Map<string, string>([['acme', 'enterprise']])
 * const extraTokenClaims = ({ account }: ExtraTokenClaimsInput) =>
 *   account.clientAccountId === null ? undefined : { plan: plans.get(account.clientAccountId) ?? 'free' }
 * ```
 */
export interface ExtraTokenClaimsInput {
  /** A copy of the account the token is issued to, as the store holds it (its hashes included: never copy them into a claim). */
  readonly account: AccountRecord;
  /** The granted scopes; `undefined` for an unrestricted account (one provisioned without scopes), whatever it asked for. */
  readonly scopes: readonly string[] | undefined;
  /** The token's audience (`aud`): the resource it is for (RFC 8707), or the server's audience. */
  readonly resource: string;
}

/**
 * The `extraTokenClaims` option: returns the claims to add to a token (a plain object of JSON values),
 * or `undefined` for none. Synchronous: it runs on every token request, repeat clients included, and
 * must not wait for a store or a network; keep what it needs in memory.
 *
 * @example
 * ```ts
 * import type { ExtraTokenClaims } from 'express-service-accounts'
 *
 * const extraTokenClaims: ExtraTokenClaims = ({ account }) => ({ tenant_region: account.clientAccountId?.startsWith('eu-') ? 'eu' : 'us' })
 * ```
 */
export type ExtraTokenClaims = (input: ExtraTokenClaimsInput) => Record<string, unknown> | undefined;

/**
 * The claims the library sets or that have a registered meaning a resource server relies on to know
 * who the token is for and how they authenticated (RFC 7519 §4.1, RFC 9068 §2.2, RFC 8693 §4
 * `act`/`may_act`, RFC 7800 `cnf`): the hook may not set them. RFC 9068 §2.2.3.1's `roles`, `groups`
 * and `entitlements` are the host's to add.
 *
 * @example
 * ```ts
 * REGISTERED_TOKEN_CLAIMS.has('scope') // true: the hook cannot widen a token's scopes
 * REGISTERED_TOKEN_CLAIMS.has('plan')  // false
 * ```
 */
export const REGISTERED_TOKEN_CLAIMS: ReadonlySet<string> = new Set([
  'iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti', 'client_id', 'scope', 'cnf', 'secret_id',
  'auth_time', 'acr', 'amr', 'act', 'may_act', 'azp',
]);

/**
 * The largest serialized size of the extra claims, in bytes of JSON: they ride in every token, and
 * every request header that carries one.
 *
 * @example
 * ```ts
 * const fits = Buffer.byteLength(JSON.stringify({ plan: 'enterprise' })) <= MAX_EXTRA_CLAIMS_BYTES
 * ```
 */
export const MAX_EXTRA_CLAIMS_BYTES = 1024;

/** Why the hook's result was refused (the `reason` of an `extra_claims.refused` event). */
export type ExtraClaimsRefusal = 'hook_threw' | 'not_an_object' | 'registered_claim' | 'too_large' | 'not_json';

/**
 * The hook's result was refused. Internal: the token endpoint answers 500 `server_error` (nothing of
 * it reaches the client) and emits the `extra_claims.refused` event with `reason` and `claim`.
 */
export class ExtraClaimsError extends Error {
  constructor(
    readonly reason: ExtraClaimsRefusal,
    readonly claim: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(`extraTokenClaims: ${reason}${claim === undefined ? '' : ` (${claim})`}`, options);
    this.name = 'ExtraClaimsError';
  }
}

/**
 * A deep copy, not frozen, for a hook on the token path (`extraTokenClaims`), where freezing every
 * object would cost more than the rest of the hook: lists and plain objects copied (own enumerable
 * properties, a `__proto__` one included), dates copied, other values as they are. The hook may edit
 * it; nothing it does reaches the original.
 */
function detachedCopy(value: unknown): unknown {
  if (value instanceof Date) return new Date(value.getTime());
  if (Array.isArray(value)) return value.map(detachedCopy);
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = { ...value };
    for (const key of Object.keys(copy)) {
      const member = copy[key];
      if (member === null || typeof member !== 'object') continue;
      // Assigning `__proto__` would set the prototype instead of the property.
      if (key === '__proto__') Object.defineProperty(copy, key, { value: detachedCopy(member), writable: true, enumerable: true, configurable: true });
      else copy[key] = detachedCopy(member);
    }
    return copy;
  }
  return value;
}

/**
 * Calls the hook with a copy of `input` and checks its result: `undefined` (no hook, or it returned `undefined` or `{}`), or
 * a plain object without registered claims whose JSON is at most {@link MAX_EXTRA_CLAIMS_BYTES},
 * returned as that JSON text (an object literal) for the signer to append.
 * @throws {ExtraClaimsError} when the hook throws or its result is refused.
 *
 * @example
 * ```ts
 * const input = { account, scopes: undefined, resource: 'https://api.example.com' }
 * collectExtraClaims(() => ({ plan: 'pro' }), input) // '{"plan":"pro"}'
 * collectExtraClaims(() => ({ sub: 'someone-else' }), input) // throws ExtraClaimsError('registered_claim', 'sub')
 * ```
 */
export function collectExtraClaims(hook: ExtraTokenClaims | undefined, input: ExtraTokenClaimsInput): string | undefined {
  if (hook === undefined) return undefined;
  let result: unknown;
  try {
    // A copy, made only when there is a hook: the account is the cached one every later request of the
    // client is authorized with, and the scopes may be its own list, which the token is signed with.
    // Not frozen: freezing each object would cost more than the rest of the hook on this path.
    result = hook(detachedCopy(input) as ExtraTokenClaimsInput);
  } catch (error) {
    throw new ExtraClaimsError('hook_threw', undefined, { cause: error });
  }
  if (result === undefined) return undefined;
  if (typeof result !== 'object' || result === null || Array.isArray(result) || typeof (result as Promise<unknown>).then === 'function') {
    throw new ExtraClaimsError('not_an_object', undefined);
  }
  // A plain object only, without its own toJSON: JSON.stringify would otherwise write what toJSON (or a
  // class's) returns, which the check of the names below never saw, and a registered claim could slip in.
  const prototype: unknown = Object.getPrototypeOf(result);
  if ((prototype !== Object.prototype && prototype !== null) || Object.hasOwn(result, 'toJSON')) {
    throw new ExtraClaimsError('not_an_object', undefined);
  }
  const claims = result as Record<string, unknown>;
  let any = false;
  for (const name in claims) {
    if (!Object.hasOwn(claims, name)) continue;
    // Refused rather than dropped: a host that sets `sub` or `scope` has a bug that silently dropping would hide.
    if (REGISTERED_TOKEN_CLAIMS.has(name)) throw new ExtraClaimsError('registered_claim', name);
    any = true;
  }
  if (!any) return undefined;
  let json: string;
  try {
    json = JSON.stringify(claims);
  } catch (error) {
    throw new ExtraClaimsError('not_json', undefined, { cause: error });
  }
  if (json === '{}') return undefined;
  if (Buffer.byteLength(json, 'utf8') > MAX_EXTRA_CLAIMS_BYTES) throw new ExtraClaimsError('too_large', undefined);
  // The JSON text itself is what the token carries: serialized once, and later changes to the object cannot reach the token.
  return json;
}
