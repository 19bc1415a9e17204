/**
 * The POSTGRES_URL convention of the suite: with it, `body(url)` declares the PostgreSQL tests; without
 * it they are skipped with a visible note, except under CI=true, where a missing server is a failure.
 */
import { describe, it } from 'vitest';

export function withPostgres(what: string, body: (url: string) => void): void {
  const url = process.env.POSTGRES_URL;
  if (url) {
    body(url);
  } else if (process.env.CI === 'true') {
    describe(what, () => {
      it('needs POSTGRES_URL in CI', () => {
        throw new Error(`CI=true but POSTGRES_URL is not set: the ${what} tests cannot run`);
      });
    });
  } else {
    console.warn(`POSTGRES_URL not set: ${what} tests skipped`);
    describe.skip(`${what} (set POSTGRES_URL to run)`, () => {
      it('is skipped', () => {});
    });
  }
}
