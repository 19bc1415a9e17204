// express-service-accounts/testing: its types, type-checked against the installed tarball's
// declarations (copied as .mts and .cts by check-package.sh, so both the import and the require types
// are compiled), never run. vitest's own functions must fit the suite's structural test API.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  describeAccountStore,
  type AccountStoreFixture,
  type AccountStoreMatchers,
  type AccountStoreTestApi,
} from 'express-service-accounts/testing';
import { MemoryAccountStore } from 'express-service-accounts';

const makeStore = async (): Promise<AccountStoreFixture> => ({ store: new MemoryAccountStore(), cleanup: async () => {} });
const api: AccountStoreTestApi = { describe, it, expect, beforeEach, afterEach };
const matchers: AccountStoreMatchers = expect(makeStore);
describeAccountStore('MemoryAccountStore', makeStore, { describe, it, expect, beforeEach, afterEach });
describeAccountStore('MemoryAccountStore (globals)', makeStore);
// @ts-expect-error: the test API needs all five functions
describeAccountStore('MemoryAccountStore', makeStore, { describe, it, expect });

export { api, matchers };
