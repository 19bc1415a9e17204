/**
 * @module hook-copies
 * The copies handed to the host's hooks (`onAudit`, `onEvent`, `extraTokenClaims`) of values the
 * instance authorizes with: an account record's lists and dates are the cached account's own, and a
 * hook that edits what it was given must not change them.
 */

/**
 * A frozen deep copy: lists and plain objects copied and frozen (own enumerable data properties,
 * whatever their names: a claim condition may be named `__proto__`), dates copied, other values as
 * they are.
 *
 * @example
 * ```ts
 * const copy = frozenCopy({ scopes: ['jobs:read'] }) as { scopes: string[] }
 * copy.scopes.push('admin') // TypeError in strict-mode code; the original is untouched either way
 * ```
 */
export function frozenCopy(value: unknown): unknown {
  if (value instanceof Date) return new Date(value.getTime());
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy));
  if (value !== null && typeof value === 'object') {
    return Object.freeze(Object.fromEntries(Object.entries(value).map(([key, member]) => [key, frozenCopy(member)])));
  }
  return value;
}

/**
 * A deep copy, not frozen, for a hook on the token path (`extraTokenClaims`), where freezing every
 * object would cost more than the rest of the hook: lists and plain objects copied (own enumerable
 * properties, a `__proto__` one included), dates copied, other values as they are. The hook may edit
 * it; nothing it does reaches the original.
 *
 * @example
 * ```ts
 * const copy = detachedCopy({ scopes: ['jobs:read'] }) as { scopes: string[] }
 * copy.scopes.push('admin') // the original still holds ['jobs:read']
 * ```
 */
export function detachedCopy(value: unknown): unknown {
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
