/**
 * The caches on the per-request paths read their clock without scheduling timers: lru-cache's default
 * (`ttlResolution: 1`) caches the clock behind a 1 ms `setTimeout`, which schedules a timer on every
 * lookup whenever requests are more than 1 ms apart — work that grows with wall time, not with
 * requests ("requireBearer … instructions per request", docs/performance.md). Entries must still
 * expire on time.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryAccountStore } from '../../src/index.js';
import { hashSecret } from '../../src/secrets/secret-verifier.js';
import { RememberedSecrets } from '../../src/secrets/remembered-secrets.js';
import { AccountCache } from '../../src/runtime/account-cache.js';

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

afterEach(() => {
  vi.restoreAllMocks();
});

describe('per-request cache lookups schedule no timers', () => {
  it('AccountCache.peek on a cached entry, requests more than 1 ms apart', async () => {
    const cache = new AccountCache({ store: new MemoryAccountStore(), storeTimeout: 1000, statusCacheTtl: 30_000 });
    await cache.get('esa_unknown'); // caches "unknown client"
    const timers = vi.spyOn(globalThis, 'setTimeout');
    let scheduled = 0;
    for (let i = 0; i < 3; i++) {
      await wait(3);
      timers.mockClear();
      expect(cache.peek('esa_unknown')).toEqual({ account: undefined });
      scheduled += timers.mock.calls.length;
    }
    expect(scheduled).toBe(0);
  });

  it('AccountCache entries still expire after their lifetime', async () => {
    // The cache's default clock (`performance`), held still by a spy and moved by hand: a lookup must
    // read it afresh, not a copy cached behind a timer. A 1 s lifetime needs the store's change feed
    // (without it, entries live 500 ms at most).
    let now = 1_000_000; // whole milliseconds: with a fraction, (t + ms) - t need not be ms exactly
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const cache = new AccountCache({ store: new MemoryAccountStore(), storeTimeout: 1000, statusCacheTtl: 1000 });
    await cache.start();
    try {
      expect(cache.ttl).toBe(1000);
      await cache.get('esa_unknown');
      expect(cache.peek('esa_unknown')).toBeDefined();
      now += 999;
      expect(cache.peek('esa_unknown')).toBeDefined(); // within its lifetime
      now += 2;
      expect(cache.peek('esa_unknown')).toBeUndefined();
    } finally {
      await cache.stop();
    }
  });

  it('RememberedSecrets.matches on a remembered secret', async () => {
    const remembered = new RememberedSecrets();
    const presented = { clientId: 'esa_client', secretId: 'secret-id', value: 's3cret' };
    remembered.remember(presented, 'the-stored-hash');
    await wait(3);
    const timers = vi.spyOn(globalThis, 'setTimeout');
    expect(remembered.matches(presented, 'the-stored-hash')).toBe(true);
    expect(timers).not.toHaveBeenCalled();
  });
});
