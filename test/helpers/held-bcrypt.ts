/**
 * bcrypt compares that a test counts and can hold until it releases them, all at once or one at a
 * time, so the bcrypt queue stays full, or secret checks stay undecided, for as long as the test needs,
 * and the gate's order shows in the order of the answers (no sleeping). The `bcrypt` package itself is
 * mocked, so every compare the library makes is seen, wherever it is called from.
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

let holding = false;
/** Compares waiting for their release, in the order they were called. */
const waiting: Array<() => void> = [];

/** The compares run so far, and the hold. */
export const heldBcrypt = {
  compares: 0,
  /** From now on, every compare waits until it is released. */
  hold(): void {
    holding = true;
  },
  /** Lets every waiting compare run, and later ones run at once. */
  release(): void {
    holding = false;
    for (const run of waiting.splice(0)) run();
  },
  /** Compares held now. */
  get held(): number {
    return waiting.length;
  },
  /** Lets the compare that has waited longest run; the others, and later ones, stay held. */
  releaseOldest(): void {
    const run = waiting.shift();
    if (!run) throw new Error('no bcrypt compare is held');
    run();
  },
};

/** The `bcrypt` package with its compare counted and held (hashing is left as it is). */
export function withHeldCompares(real: BcryptModule): BcryptModule {
  const compare = async (data: string | Buffer, encrypted: string): Promise<boolean> => {
    heldBcrypt.compares++;
    if (holding) await new Promise<void>((run) => waiting.push(run));
    return real.default.compare(data, encrypted);
  };
  return { ...real, compare, default: { ...real.default, compare } } as BcryptModule;
}
