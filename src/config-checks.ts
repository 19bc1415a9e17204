/**
 * @module config-checks
 * The checks options are validated with, shared by `resolveConfig()` and `createAdminApi()`: each
 * throws a `TypeError` naming the bad option.
 */

/**
 * Throws the `TypeError` every bad option gets, naming the option and what takes it (`owner`: the
 * package for its top-level options, or a factory such as `requireBearer`).
 *
 * @example
 * ```ts
 * if (typeof options.now !== 'function') fail('now', 'must be a function')
 * ```
 */
export function fail(name: string, problem: string, owner = 'express-service-accounts'): never {
  throw new TypeError(`${owner}: option "${name}" ${problem}`);
}

/**
 * Refuses a non-object and any key not in `known`, naming `owner` as {@link fail} does.
 *
 * @example
 * ```ts
 * checkKnownKeys(options, new Set(['store', 'now']))
 * ```
 */
export function checkKnownKeys(options: unknown, known: ReadonlySet<string>, owner = 'express-service-accounts'): void {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${owner}: options must be an object`);
  }
  for (const key of Object.keys(options)) {
    if (!known.has(key)) fail(key, 'is not a known option', owner);
  }
}

/**
 * An integer option from `min` to `max`, or `fallback` when it is missing.
 *
 * @example
 * ```ts
 * const storeTimeout = integer('storeTimeout', options.storeTimeout, 2000, 1, 60_000)
 * ```
 */
export function integer(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(name, `must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

/**
 * A required string option that is not blank.
 *
 * @example
 * ```ts
 * const issuer = nonEmptyString('issuer', options.issuer)
 * ```
 */
export function nonEmptyString(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') fail(name, 'must be a non-empty string');
  return value;
}

/**
 * An optional function option, `undefined` when missing.
 *
 * @example
 * ```ts
 * const onAudit = optionalFunction('onAudit', options.onAudit)
 * ```
 */
export function optionalFunction<F>(name: string, value: F | undefined): F | undefined {
  if (value !== undefined && typeof value !== 'function') fail(name, 'must be a function');
  return value;
}
