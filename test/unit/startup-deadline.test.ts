/**
 * docs/configuration.md, "storeTimeout": it bounds what a request waits for; start-up calls (`init()`,
 * subscribing to the store's changes, the first read of the deny-list) get at least 30 s. A store that
 * answers those a little slower than `storeTimeout` (a cold pool, a long deny-list) still starts, and
 * the same slowness on a request's own read is still answered 503 at `storeTimeout`.
 *
 * No timing is asserted: the slow calls are held until the test releases them, after a timer longer
 * than `storeTimeout` (timers fire in the order they are due, so `storeTimeout` has passed by then).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServiceAccounts, MemoryAccountStore, type AccountChangeListener, type RevokedTokenRecord, type ServiceAccounts } from '../../src/index.js';
import { StoreUnavailableError } from '../../src/errors.js';
import { startupTimeout } from '../../src/runtime/init-store.js';
import { RevokedTokenCache } from '../../src/runtime/revoked-token-cache.js';
import { TEST_HS256_KEY } from '../helpers/create-app.js';

const STORE_TIMEOUT_MS = 20;
/** Longer than storeTimeout: the moment a held start-up call answers. */
const HELD_MS = STORE_TIMEOUT_MS * 4;

const later = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** A memory store whose change subscription and deny-list reads answer only after HELD_MS, or never. */
class SlowStartStore extends MemoryAccountStore {
  denyListReads: 'held' | 'hang' = 'held';
  override async watch(listener: AccountChangeListener): Promise<() => Promise<void>> {
    await later(HELD_MS);
    return super.watch(listener);
  }
  override async listRevokedTokens(now: Date): Promise<RevokedTokenRecord[]> {
    if (this.denyListReads === 'hang') return new Promise(() => undefined);
    await later(HELD_MS);
    return super.listRevokedTokens(now);
  }
}

const instances: ServiceAccounts[] = [];
afterEach(async () => {
  await Promise.all(instances.splice(0).map((sa) => sa.close()));
});

function start(store: SlowStartStore): ServiceAccounts {
  const sa = createServiceAccounts({
    store,
    issuer: 'https://api.test',
    signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY }],
    storeTimeout: STORE_TIMEOUT_MS,
    secretHashRounds: 4,
  });
  instances.push(sa);
  return sa;
}

describe('start-up calls and storeTimeout', () => {
  it('starts although subscribing to changes and the first deny-list read each take longer than storeTimeout', async () => {
    const sa = start(new SlowStartStore());
    await expect(sa.ready()).resolves.toBeUndefined();
  });

  it("still gives a request's own deny-list read storeTimeout: a hanging read fails it (503) instead of waiting", async () => {
    const store = new SlowStartStore();
    const cache = new RevokedTokenCache({ store, storeTimeout: STORE_TIMEOUT_MS, clockTolerance: 5, now: () => new Date(), announcing: () => true });
    await cache.start(startupTimeout(STORE_TIMEOUT_MS)); // held past storeTimeout, within the start-up deadline
    expect(cache.check('some-token-id')).toBe(false); // the list is read and trusted
    store.denyListReads = 'hang';
    cache.onChange('*'); // changes may have been missed: only a read can tell
    await expect(cache.isRevoked('some-token-id')).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it('gives a start-up call at least 30 s, and storeTimeout when that is longer', () => {
    expect(startupTimeout(20)).toBe(30_000);
    expect(startupTimeout(60_000)).toBe(60_000);
  });
});
