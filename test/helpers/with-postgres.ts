/**
 * The POSTGRES_URL convention of the suite: with it, `body(url)` declares the PostgreSQL tests; without
 * it they are skipped with a visible note, except under CI=true, where a missing server is a failure.
 * `withPrerequisite` is the same convention for any other service or tool a test file needs. Schemas
 * for those tests, and their clean-up, come from `usePostgresSchemas` (postgres-schemas.ts).
 */
import { describe, it } from 'vitest';

export function withPostgres(what: string, body: (url: string) => void): void {
  const url = process.env.POSTGRES_URL;
  withPrerequisite(what, url !== undefined && url !== '', 'POSTGRES_URL', () => body(url!));
}

/** Runs `body` (declaring tests) when `available`; else a visible skip, or a failing test under CI=true. */
export function withPrerequisite(what: string, available: boolean, needs: string, body: () => void): void {
  if (available) {
    body();
  } else if (process.env.CI === 'true') {
    describe(what, () => {
      it(`needs ${needs} in CI`, () => {
        throw new Error(`CI=true but ${needs} is missing: the ${what} tests cannot run`);
      });
    });
  } else {
    console.warn(`${needs} not available: ${what} tests skipped`);
    describe.skip(`${what} (needs ${needs})`, () => {
      it('is skipped', () => {});
    });
  }
}
