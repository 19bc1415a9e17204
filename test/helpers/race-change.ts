/**
 * The race behind "revoked token accepted when the store is slow": a first request whose store read
 * is held, a change (revoke, disable) made while that read is in flight, then a second request sent
 * once the serving instance knows of the change. The held read is let go only after the second
 * request has consulted the account cache, so a second request that joined it would get its answer,
 * or has joined the first request's check of the same secret (secret-verifier.ts), which reads the
 * account afresh once that check is done.
 */
import { expect, vi } from 'vitest';
import { SecretCheckFlights } from '../../src/secrets/secret-verifier.js';
import { AccountCache } from '../../src/runtime/account-cache.js';
import type { GatedStore } from './gated-store.js';

export interface RaceSteps<R> {
  /** The store of the instance that serves `first` and `second`. */
  readonly store: GatedStore;
  readonly first: () => Promise<R>;
  readonly change: () => Promise<unknown>;
  /** Resolves once the serving instance has learned of the change (by default: at once). */
  readonly changeSeen?: () => Promise<unknown>;
  readonly second: () => Promise<R>;
}

export async function raceChange<R>(steps: RaceSteps<R>): Promise<{ first: R; second: R }> {
  const { store } = steps;
  const cacheReads = vi.spyOn(AccountCache.prototype, 'get');
  const flightLookups = vi.spyOn(SecretCheckFlights.prototype, 'get');
  const joined = (): number => flightLookups.mock.results.filter((result) => result.value !== undefined).length;
  try {
    store.holding = true;
    const firstDone = steps.first();
    const [read] = await store.heldReads(1);
    store.holding = false; // the admin API's own reads, and any fresh read, answer at once
    await read!.snapshotTaken; // the first read has seen the store as it was before the change
    await steps.change();
    await steps.changeSeen?.();
    const readsBefore = cacheReads.mock.calls.length;
    const joinsBefore = joined();
    const secondDone = steps.second();
    await vi.waitFor(() => expect(cacheReads.mock.calls.length - readsBefore + joined() - joinsBefore).toBeGreaterThan(0), { timeout: 5000 });
    read!.release();
    return { first: await firstDone, second: await secondDone };
  } finally {
    cacheReads.mockRestore();
    flightLookups.mockRestore();
  }
}
