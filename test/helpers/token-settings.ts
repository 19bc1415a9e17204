/**
 * The resolved settings the access-token unit tests sign and verify with: the test HS256 key (kid
 * `key-1`), issuer `https://api.test`, audience `https://api.test/resources`, and a fixed "now".
 */
import { MemoryAccountStore } from '../../src/index.js';
import { resolveConfig } from '../../src/config.js';
import { TEST_HS256_KEY } from './create-app.js';

export const tokenConfig = resolveConfig({
  store: new MemoryAccountStore(),
  issuer: 'https://api.test',
  audience: 'https://api.test/resources',
  signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY, kid: 'key-1' }],
});

export const TOKEN_TEST_NOW = new Date('2026-11-22T10:00:00Z');
