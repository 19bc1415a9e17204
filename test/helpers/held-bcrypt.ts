/**
 * bcrypt compares that a test counts and can hold until it releases them, so the bcrypt queue stays
 * full, or secret checks stay undecided, for as long as the test needs (no sleeping). Use with
 *
 * ```ts
 * import { heldBcrypt } from './held-bcrypt.js';
 * vi.mock('../../src/secrets/hash-secret.js', async (importOriginal) =>
 *   (await import('./held-bcrypt.js')).withHeldCompares(await importOriginal()));
 * ```
 */
import type * as HashSecret from '../../src/secrets/hash-secret.js';

let releaseHeld: () => void = () => {};

/** The compares run so far, and the hold. */
export const heldBcrypt = {
  compares: 0,
  held: Promise.resolve(),
  /** From now on, every compare waits until {@link heldBcrypt.release}. */
  hold(): void {
    this.held = new Promise<void>((resolve) => (releaseHeld = resolve));
  },
  /** Lets every waiting compare run, and later ones run at once. */
  release(): void {
    releaseHeld();
    this.held = Promise.resolve();
  },
};

/** The hash-secret module with its compare counted and held. */
export function withHeldCompares(real: typeof HashSecret): typeof HashSecret {
  return {
    ...real,
    verifySecretHash: async (value: string, hash: string): Promise<boolean> => {
      heldBcrypt.compares++;
      await heldBcrypt.held;
      return real.verifySecretHash(value, hash);
    },
  };
}
