/**
 * @module lookup-values
 * Which values taken from a request may be looked up in a store: bounded in length, and free of
 * control characters. PostgreSQL refuses a NUL in a text parameter with an error that would read as a
 * store outage (a 503, and a false `store.unavailable` event), and no stored client ID, issuer or
 * subject holds a control character, so such a value is answered "unknown" without any store call.
 */

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
