/**
 * `resolveConfig` (src/config.ts): "Options are validated here once; a bad option throws a `TypeError`
 * naming it." CONTRACT §3: "Clock tolerance is configurable and at most 5 seconds by default."
 */
import { describe, expect, it } from 'vitest';
import { MemoryAccountStore, type ServiceAccountsOptions } from '../../src/index.js';
import { resolveConfig } from '../../src/config.js';
import { TEST_HS256_KEY } from '../helpers/create-app.js';

const base = (): ServiceAccountsOptions => ({
  store: new MemoryAccountStore(),
  issuer: 'https://api.test',
  signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY }],
});

function expectBadOption(options: unknown, name: string): void {
  let caught: unknown;
  try {
    resolveConfig(options as ServiceAccountsOptions);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(TypeError);
  expect((caught as TypeError).message).toContain(`"${name}"`);
}

describe('resolveConfig', () => {
  it('fills the documented defaults and freezes the result', () => {
    const config = resolveConfig(base());
    expect(config).toMatchObject({
      issuer: 'https://api.test',
      audience: 'https://api.test',
      // SPEC §2.3: "The token is 3600 seconds (one hour) valid."
      tokenLifetime: 3600,
      // CONTRACT §3: "at most 5 seconds by default".
      clockTolerance: 5,
      realm: 'service-accounts',
      maxSecretsPerAccount: 5,
      secretHashRounds: 10,
      bodyLimit: 8192,
      allowBrowserRequests: false,
      failureLimit: { max: 10, windowSeconds: 60, ipv6Prefix: 64 },
      storeTimeout: 2000,
      statusCacheTtl: 30_000,
    });
    expect(Object.isFrozen(config)).toBe(true);
    expect(config.now()).toBeInstanceOf(Date);
    expect(config.keyring.signer.alg).toBe('HS256');
  });

  it('keeps valid overrides', () => {
    const now = () => new Date(0);
    const config = resolveConfig({ ...base(), audience: 'api', clockTolerance: 0, tokenLifetime: 600, realm: 'r', now, failureLimit: false });
    expect(config).toMatchObject({ audience: 'api', clockTolerance: 0, tokenLifetime: 600, realm: 'r', now, failureLimit: false });
  });

  // RFC 7518 §3.2: "A key of the same size as the hash output (for instance, 256 bits for "HS256") or larger MUST be used".
  it('refuses an HS256 key shorter than 32 bytes, naming it', () => {
    expectBadOption({ ...base(), signingKeys: [{ alg: 'HS256', key: 'x'.repeat(31) }] }, 'signingKeys[0].key');
    expectBadOption({ ...base(), signingKeys: [{ alg: 'HS256', key: Buffer.alloc(16) }] }, 'signingKeys[0].key');
    expect(() => resolveConfig({ ...base(), signingKeys: [{ alg: 'HS256', key: 'x'.repeat(32) }] })).not.toThrow();
    // Bytes, not characters: 11 three-byte characters are 33 bytes.
    expect(() => resolveConfig({ ...base(), signingKeys: { alg: 'HS256', key: '\u20ac'.repeat(11) } })).not.toThrow();
  });

  it.each([
    ['an unknown algorithm', { signingKeys: [{ alg: 'HS512', key: TEST_HS256_KEY }] }, 'signingKeys[0].alg'],
    ['alg none', { signingKeys: [{ alg: 'none', key: TEST_HS256_KEY }] }, 'signingKeys[0].alg'],
    ['no signing keys', { signingKeys: [] }, 'signingKeys'],
    ['missing signing keys', { signingKeys: undefined }, 'signingKeys'],
    ['an ES256 key that is not PEM', { signingKeys: [{ alg: 'ES256', key: 'not a pem' }] }, 'signingKeys[0].key'],
    ['duplicate kids', { signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY, kid: 'k' }, { alg: 'HS256', key: `${TEST_HS256_KEY}2`, kid: 'k' }] }, 'signingKeys[1].kid'],
    ['tokenLifetime 0', { tokenLifetime: 0 }, 'tokenLifetime'],
    ['tokenLifetime -1', { tokenLifetime: -1 }, 'tokenLifetime'],
    ['tokenLifetime 1.5', { tokenLifetime: 1.5 }, 'tokenLifetime'],
    ['tokenLifetime as a string', { tokenLifetime: '3600' }, 'tokenLifetime'],
    ['clockTolerance -1', { clockTolerance: -1 }, 'clockTolerance'],
    ['clockTolerance 301', { clockTolerance: 301 }, 'clockTolerance'],
    ['an unknown key', { tokenTTL: 3600 }, 'tokenTTL'],
    ['a misspelt key', { signingKey: { alg: 'HS256', key: TEST_HS256_KEY } }, 'signingKey'],
    ['no store', { store: undefined }, 'store'],
    ['a store that is not one', { store: {} }, 'store'],
    ['an empty issuer', { issuer: '' }, 'issuer'],
    ['an empty audience', { audience: ' ' }, 'audience'],
    ['an empty realm', { realm: '' }, 'realm'],
    // It is sent in WWW-Authenticate: a line break or non-ASCII character there would fail every refusal.
    ['a realm with a line break', { realm: 'a\nb' }, 'realm'],
    ['a non-ASCII realm', { realm: 'réalm ☃' }, 'realm'],
    ['onAudit not a function', { onAudit: 'log' }, 'onAudit'],
    ['now not a function', { now: Date.now() }, 'now'],
    ['allowBrowserRequests not a boolean', { allowBrowserRequests: 'yes' }, 'allowBrowserRequests'],
    ['maxSecretsPerAccount 0', { maxSecretsPerAccount: 0 }, 'maxSecretsPerAccount'],
    ['secretHashRounds 3', { secretHashRounds: 3 }, 'secretHashRounds'],
    ['bodyLimit 10', { bodyLimit: 10 }, 'bodyLimit'],
    ['storeTimeout 0', { storeTimeout: 0 }, 'storeTimeout'],
    ['failureLimit true', { failureLimit: true }, 'failureLimit'],
    ['failureLimit.max 0', { failureLimit: { max: 0 } }, 'failureLimit.max'],
    ['an unknown failureLimit key', { failureLimit: { limit: 5 } }, 'failureLimit.limit'],
    ['failureLimit.ipv6Prefix 0', { failureLimit: { ipv6Prefix: 0 } }, 'failureLimit.ipv6Prefix'],
    ['failureLimit.ipv6Prefix 129', { failureLimit: { ipv6Prefix: 129 } }, 'failureLimit.ipv6Prefix'],
    ['failureLimit.ipv6Prefix 56.5', { failureLimit: { ipv6Prefix: 56.5 } }, 'failureLimit.ipv6Prefix'],
    ['failureLimit.ipv6Prefix as text', { failureLimit: { ipv6Prefix: '64' } }, 'failureLimit.ipv6Prefix'],
  ])('throws a TypeError naming the option for %s', (_name, override, option) => {
    expectBadOption({ ...base(), ...override }, option);
  });

  it('refuses options that are not an object', () => {
    expect(() => resolveConfig(undefined as never)).toThrow(TypeError);
    expect(() => resolveConfig(null as never)).toThrow(TypeError);
  });
});
