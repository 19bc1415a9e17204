/**
 * SecretHasher: the admin API's new secrets are hashed one at a time per instance, and waiting hashes
 * take turns by client account (docs/security.md, "Bounded bcrypt work"), so one client account's
 * burst of creations delays another's by one hash per owner waiting, not by the whole burst.
 * bcrypt runs at the lowest cost the options accept (4 rounds); order is what is checked, not time.
 */
import bcrypt from 'bcrypt';
import { describe, expect, it } from 'vitest';
import { SecretHasher } from '../../src/secrets/secret-verifier.js';

const ROUNDS = 4;

/** Asks for every hash at once (`owner` per hash, in order) and gives the owners in the order their hashes finished. */
async function finishingOrder(owners: readonly string[]): Promise<string[]> {
  const hasher = new SecretHasher(ROUNDS);
  const finished: string[] = [];
  await Promise.all(owners.map((owner, i) => hasher.hash(`secret-${i}`, owner).then(() => void finished.push(owner))));
  return finished;
}

describe('SecretHasher', () => {
  it('a hash for another client account waits behind one hash of a burst, not the whole burst', async () => {
    const burst = Array<string>(8).fill('acme');
    const order = await finishingOrder([...burst, 'globex']);
    expect(order.indexOf('globex')).toBeLessThanOrEqual(2);
  });

  it('turns alternate between client accounts that both wait', async () => {
    const order = await finishingOrder([...Array<string>(4).fill('acme'), ...Array<string>(4).fill('globex')]);
    // After the first two acme hashes (one running, one first in line), the two alternate.
    expect(order).toEqual(['acme', 'acme', 'globex', 'acme', 'globex', 'acme', 'globex', 'globex']);
  });

  it('each hash is a bcrypt hash of its own value', async () => {
    const hasher = new SecretHasher(ROUNDS);
    const [a, b] = await Promise.all([hasher.hash('value-a', 'acme'), hasher.hash('value-b')]);
    expect(a).toMatch(/^\$2[aby]\$04\$/);
    expect(a).not.toBe(b);
    expect(await bcrypt.compare('value-a', a)).toBe(false); // bcrypt is fed a digest, never the raw value
  });
});
