/**
 * @module testing
 * `express-service-accounts/testing`: the contract suite for your own {@link AccountStore}. Needs vitest.
 *
 * @example
 * ```ts
 * import { describeAccountStore } from 'express-service-accounts/testing'
 * describeAccountStore('MyStore', async () => ({ store: new MyStore(), cleanup: async () => {} }))
 * ```
 */
export { describeAccountStore } from './describe-account-store.js';
export type { AccountStoreFixture } from './describe-account-store.js';
