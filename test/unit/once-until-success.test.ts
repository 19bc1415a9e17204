/**
 * A store's init() (and the PostgreSQL pool) starts once for all callers, and a failure is not
 * remembered: the next call starts again, so a store that was down at first use recovers.
 */
import { describe, expect, it } from 'vitest';
import { onceUntilSuccess } from '../../src/runtime/init-store.js';

describe('onceUntilSuccess', () => {
  it('shares one start among concurrent and later callers', async () => {
    let starts = 0;
    const ready = onceUntilSuccess(async () => ++starts);
    expect(await Promise.all([ready(), ready()])).toEqual([1, 1]);
    expect(await ready()).toBe(1);
    expect(starts).toBe(1);
  });

  it('rejects every caller of a failed start, and starts again on the next call', async () => {
    let starts = 0;
    const ready = onceUntilSuccess(async () => {
      starts++;
      if (starts === 1) throw new Error('database down');
      return starts;
    });
    const first = await Promise.allSettled([ready(), ready()]);
    expect(first.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect(await ready()).toBe(2);
    expect(await ready()).toBe(2);
  });
});
