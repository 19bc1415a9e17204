/**
 * @module testing
 * `express-service-accounts/testing`: the contract suite for your own {@link AccountStore}. It runs on
 * vitest or Jest (pass their `describe`, `it`, `expect`, `beforeEach` and `afterEach`, or rely on
 * their globals) and loads with both `import` and `require`.
 *
 * @example
 * ```ts
 * import { afterEach, beforeEach, describe, expect, it } from 'vitest'
 * import { describeAccountStore } from 'express-service-accounts/testing'
 * describeAccountStore('MyStore', async () => ({ store: new MyStore(), cleanup: async () => {} }), {
 *   describe, it, expect, beforeEach, afterEach,
 * })
 * ```
 */
export { describeAccountStore } from './describe-account-store.js';
export type { AccountStoreFixture } from './describe-account-store.js';
export type { AccountStoreMatchers, AccountStoreTestApi } from './account-store-test-api.js';
