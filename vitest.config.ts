import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The secret-leak guard of the whole run (issue 6 point 6): see test/helpers/leak-guard.ts.
    setupFiles: ['test/setup/leak-guard.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
