/**
 * bcrypt compares that a test counts and can hold until it releases them, so the bcrypt queue stays
 * full, or secret checks stay undecided, for as long as the test needs (no sleeping). The `bcrypt`
 * package itself is mocked, so every compare the library makes is seen, wherever it is called from.
 * Use with
 *
 * ```ts
 * import { heldBcrypt } from './held-bcrypt.js';
 * vi.mock('bcrypt', async (importOriginal) => (await import('./held-bcrypt.js')).withHeldCompares(await importOriginal()));
 * ```
 */
import type * as Bcrypt from 'bcrypt';

/** The `bcrypt` package as imported: its functions, and the same as its default export. */
type BcryptModule = typeof Bcrypt & { readonly default: typeof Bcrypt };

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

/** The `bcrypt` package with its compare counted and held (hashing is left as it is). */
export function withHeldCompares(real: BcryptModule): BcryptModule {
  const compare = async (data: string | Buffer, encrypted: string): Promise<boolean> => {
    heldBcrypt.compares++;
    await heldBcrypt.held;
    return real.default.compare(data, encrypted);
  };
  return { ...real, compare, default: { ...real.default, compare } } as BcryptModule;
}
