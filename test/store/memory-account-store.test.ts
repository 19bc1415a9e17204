/**
 * @module memory-account-store.test
 * MemoryAccountStore against the AccountStore contract suite.
 */
import { MemoryAccountStore } from '../../src/store/memory-account-store.js';
import { describeAccountStore } from '../../src/testing/index.js';

describeAccountStore('MemoryAccountStore', async () => ({ store: new MemoryAccountStore(), cleanup: async () => {} }));
