/**
 * `sa.config`: what a host reads of an instance's settings (docs/configuration.md). It is frozen and
 * holds only plain settings: no private or shared key, no store, no hook, no Redis client.
 */
import { generateKeyPairSync, KeyObject } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createServiceAccounts, MemoryAccountStore } from '../../src/index.js';
import { TEST_HS256_KEY, TEST_ISSUER } from '../helpers/create-app.js';

/** Every value reachable from `value`, with its path. */
function walk(value: unknown, path = 'config'): Array<[string, unknown]> {
  if (typeof value !== 'object' || value === null) return [[path, value]];
  return [[path, value], ...Object.entries(value).flatMap(([key, child]) => walk(child, `${path}.${key}`))];
}

describe('sa.config', () => {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const store = new MemoryAccountStore();
  const redis = new Redis({ lazyConnect: true });
  const sa = createServiceAccounts({
    store,
    issuer: TEST_ISSUER,
    signingKeys: [
      { alg: 'ES256', key: pem, kid: 'es-2026' },
      { alg: 'HS256', key: TEST_HS256_KEY, kid: 'hs-old' },
    ],
    failureLimit: { max: 5, redis },
    onAudit: () => undefined,
    onEvent: () => undefined,
  });
  afterAll(async () => {
    await sa.close();
    redis.disconnect();
  });

  it('lists the settings, defaults filled in, and the signing key by its ID and algorithm only', () => {
    expect(sa.config).toEqual({
      issuer: TEST_ISSUER,
      audience: TEST_ISSUER,
      tokenLifetime: 3600,
      maxAccessTokenLifetime: 3600,
      clockTolerance: 5,
      realm: 'service-accounts',
      signingKey: { kid: 'es-2026', alg: 'ES256' },
      verificationKeyIds: ['es-2026', 'hs-old'],
      maxSecretsPerAccount: 5,
      secretHashRounds: 10,
      maxCredentialLifetime: null,
      storeTimeout: 2000,
      maxQueuedSecretChecks: 256,
      bodyLimit: 8192,
      allowBrowserRequests: false,
      maxRevokedTokensPerClient: 1000,
      failureLimit: { max: 5, windowSeconds: 60, ipv6Prefix: 64, maxKeys: 100_000, shared: true },
      statusCacheTtl: 30_000,
      traceBearerChecks: false,
    });
  });

  it('holds no key object, key text, store, hook or Redis client anywhere, and is frozen throughout', () => {
    for (const [path, value] of walk(sa.config)) {
      expect(value instanceof KeyObject, path).toBe(false);
      expect(Buffer.isBuffer(value), path).toBe(false);
      expect(typeof value, path).not.toBe('function');
      expect([store, redis, pem, TEST_HS256_KEY], path).not.toContain(value);
      if (typeof value === 'object' && value !== null) expect(Object.isFrozen(value), path).toBe(true);
    }
    expect(JSON.stringify(sa.config)).not.toMatch(/PRIVATE KEY|test-signing-key/);
  });

  it('gives the longest token lifetime an account may have: tokenLifetime unless maxAccessTokenLifetime raises it', () => {
    const raised = createServiceAccounts({ store, issuer: TEST_ISSUER, signingKeys: { alg: 'HS256', key: TEST_HS256_KEY }, tokenLifetime: 600, maxAccessTokenLifetime: 7200 });
    expect([raised.config.tokenLifetime, raised.config.maxAccessTokenLifetime]).toEqual([600, 7200]);
  });

  it('says when the failure limit is off', () => {
    const off = createServiceAccounts({ store, issuer: TEST_ISSUER, signingKeys: { alg: 'HS256', key: TEST_HS256_KEY }, failureLimit: false });
    expect(off.config.failureLimit).toBe(false);
    expect(off.config.signingKey.alg).toBe('HS256');
  });
});
