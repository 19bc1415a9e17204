/**
 * @module memory-account-store.test
 * MemoryAccountStore against the AccountStore contract suite.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryAccountStore } from '../../src/store/memory-account-store.js';
import { describeAccountStore } from '../../src/testing/index.js';

describeAccountStore('MemoryAccountStore', async () => ({ store: new MemoryAccountStore(), cleanup: async () => {} }), {
  describe,
  it,
  expect,
  beforeEach,
  afterEach,
});
