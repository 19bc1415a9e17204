// Run by vitest in a project that installed the packed tarball: the AccountStore contract suite from
// the ES module build of express-service-accounts/testing, given vitest's functions, against the
// MemoryAccountStore of the ES module build.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryAccountStore } from 'express-service-accounts';
import { describeAccountStore } from 'express-service-accounts/testing';

describeAccountStore(
  'MemoryAccountStore from import',
  async () => ({ store: new MemoryAccountStore(), cleanup: async () => {} }),
  { describe, it, expect, beforeEach, afterEach },
);
