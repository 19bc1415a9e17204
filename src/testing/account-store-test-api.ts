/**
 * @module account-store-test-api
 * The test framework functions the AccountStore contract suite runs on, typed structurally by the few
 * calls the suite makes, so vitest's and Jest's functions both fit and the suite imports neither.
 */

/**
 * The matchers the contract suite uses: a subset that vitest's and Jest's `expect` share.
 *
 * @example
 * ```ts
 * import { expect } from 'vitest'
 * const matchers: AccountStoreMatchers = expect(await store.findAccount('esa_unknown'))
 * matchers.toBeUndefined()
 * ```
 */
export interface AccountStoreMatchers {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toBeNull(): void;
  toBeUndefined(): void;
  toBeInstanceOf(expected: unknown): void;
  /** `await expect(promise).rejects.toBeDefined()`: the promise rejects. */
  readonly rejects: { toBeDefined(): PromiseLike<unknown> };
}

/**
 * The test framework functions the contract suite registers its tests with: pass vitest's (or
 * Jest's) `describe`, `it`, `expect`, `beforeEach` and `afterEach`. Each is typed by the calls the
 * suite makes, nothing more, so both frameworks' functions fit.
 *
 * @example
 * ```ts
 * import { afterEach, beforeEach, describe, expect, it } from 'vitest'
 * const api: AccountStoreTestApi = { describe, it, expect, beforeEach, afterEach }
 * ```
 */
export interface AccountStoreTestApi {
  /** Groups tests: `describe(name, body)`. */
  readonly describe: (name: string, body: () => void) => void;
  /**
   * Registers a test. The suite's test functions declare no parameter (Jest would take one for a
   * `done` callback); vitest's test context, when passed, is used only to mark a test skipped.
   */
  readonly it: (name: string, test: () => Promise<void>) => void;
  /** `expect(actual)` with the {@link AccountStoreMatchers}. */
  readonly expect: (actual: unknown) => AccountStoreMatchers;
  /** Runs a hook before each test of the enclosing `describe`. */
  readonly beforeEach: (hook: () => Promise<void>) => void;
  /** Runs a hook after each test of the enclosing `describe`, also after a failed one. */
  readonly afterEach: (hook: () => Promise<void>) => void;
}

const TEST_API_NAMES = ['describe', 'it', 'expect', 'beforeEach', 'afterEach'] as const;

const PASS_THEM =
  "pass your test framework's functions as the third argument, e.g. with vitest: " +
  "import { afterEach, beforeEach, describe, expect, it } from 'vitest'; " +
  'describeAccountStore(name, makeStore, { describe, it, expect, beforeEach, afterEach })';

/**
 * The test functions to use: `api` when given, else the globals that Jest (and vitest with
 * `globals: true`) define. A missing function is a setup mistake: it throws a `TypeError` when the
 * suite is registered, saying what to pass.
 *
 * @example
 * ```ts
 * import * as vitest from 'vitest'
 *
 * const { describe, it, expect, beforeEach, afterEach } = resolveTestApi(vitest) // Jest: resolveTestApi(undefined), its globals
 * ```
 */
export function resolveTestApi(api: AccountStoreTestApi | undefined): AccountStoreTestApi {
  const source = (api ?? globalThis) as Partial<Record<(typeof TEST_API_NAMES)[number], unknown>>;
  const missing = TEST_API_NAMES.filter((name) => typeof source[name] !== 'function');
  if (missing.length > 0) {
    const list = missing.join(', ');
    throw new TypeError(
      api === undefined
        ? `describeAccountStore: no global ${list} (Jest and vitest with \`globals: true\` define them): ${PASS_THEM}`
        : `describeAccountStore: the test functions passed lack ${list}: ${PASS_THEM}`,
    );
  }
  const resolved = source as AccountStoreTestApi;
  return {
    describe: resolved.describe,
    it: resolved.it,
    expect: resolved.expect,
    beforeEach: resolved.beforeEach,
    afterEach: resolved.afterEach,
  };
}

/**
 * Marks the running test skipped when the framework can: vitest passes a test context with `skip()`
 * as the test function's first argument. The suite's test functions read it from `arguments`, as a
 * declared parameter would make Jest wait for a `done` callback. Jest cannot skip a running test, so
 * there the test just ends, having checked nothing.
 *
 * @example
 * ```ts
 * import { it } from 'vitest'
 *
 * it('uses watch', async function () {
 *   if (!store.watch) return skipRunningTest(arguments, 'the store has no watch')
 * })
 * ```
 */
export function skipRunningTest(testArguments: IArguments, note: string): void {
  const context: unknown = testArguments[0];
  // vitest's context is a function object (calling it reports that `done` callbacks are gone).
  const isObject = (typeof context === 'object' && context !== null) || typeof context === 'function';
  if (isObject && 'skip' in context && typeof context.skip === 'function') context.skip(note);
}
