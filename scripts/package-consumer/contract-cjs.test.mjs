// Run by vitest (`--globals`) in a project that installed the packed tarball: the AccountStore
// contract suite from the CommonJS build of express-service-accounts/testing, require()d, with no test
// functions passed, so it uses the globals as it would under Jest; against the CommonJS
// MemoryAccountStore. (The file itself is an ES module: vitest cannot be require()d.)
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { MemoryAccountStore } = require('express-service-accounts');
const { describeAccountStore } = require('express-service-accounts/testing');

describeAccountStore('MemoryAccountStore from require', async () => ({
  store: new MemoryAccountStore(),
  cleanup: async () => {},
}));
