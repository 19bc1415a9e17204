/**
 * Build of the published package (see `exports` in package.json):
 *
 * - `.`, `./sql` and `./testing`: CommonJS (`.js` + `.d.ts`, the package being `"type": "commonjs"`)
 *   and ES modules (`.mjs` + `.d.mts`); `exports` lists the `types` of each condition. `./testing`
 *   imports no test framework (the user passes vitest's or Jest's functions), so it has both formats.
 * - the `service-accounts` bin: one CommonJS program (`.cjs`) with a `#!/usr/bin/env node` line.
 * - the self-service page's own files (`src/console/page/`), copied to `dist/console/`.
 *
 * These are tsup's extensions for a CommonJS package, kept on purpose: its declaration build ignores
 * `outExtension`, so only they pair each `.js`/`.mjs` with its own `.d.ts`/`.d.mts` (publint, attw).
 * The three are built together and code-split, so within one format they share one copy of the core
 * (errors, store types): `instanceof OAuthError` holds across the entry points.
 */
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { defineConfig, type Options } from 'tsup';

const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };

const shared: Options = {
  target: 'node20',
  // The version reported as the OpenTelemetry instrumentation scope version (src/version.ts).
  define: { __LIBRARY_VERSION__: JSON.stringify(version) },
  platform: 'node',
  outDir: 'dist',
  sourcemap: true,
  // Every dependency and peer dependency (express, better-sqlite3, pg) stays an import of the user's
  // own copy: nothing from node_modules is bundled.
  skipNodeModulesBundle: true,
  removeNodeProtocol: false,
  // The builds below run in parallel into one folder: none may wipe it (`npm run build` does, first).
  clean: false,
  esbuildOptions(options) {
    // `import './express-augmentation.js'` carries only the global `req.serviceAccount` type, which the
    // declaration build keeps; that esbuild drops the (empty) JavaScript import is what we want.
    options.logOverride = { ...options.logOverride, 'ignored-bare-import': 'silent' };
  },
};

// esbuild keeps a `#!` line of the source; add one only when the source has none (two would not parse).
const cliEntry = 'src/cli/main.ts';
const cliHasShebang = existsSync(cliEntry) && readFileSync(cliEntry, 'utf8').startsWith('#!');

export default defineConfig([
  {
    ...shared,
    entry: { index: 'src/index.ts', 'sql/index': 'src/sql/index.ts', 'testing/index': 'src/testing/index.ts' },
    format: ['cjs', 'esm'],
    splitting: true,
    dts: true,
    // The console router finds its page's files beside the bundle (src/console/console-assets.ts):
    // __dirname in the ES module build too.
    shims: true,
    // The self-service page's script and stylesheet, hand-written and served as they are: copied to
    // dist/console/, where the console router reads them (src/console/console-assets.ts).
    async onSuccess() {
      cpSync('src/console/page', 'dist/console', { recursive: true });
    },
  },
  {
    // A program, not an import target: no declarations.
    ...shared,
    entry: { 'cli/main': cliEntry },
    format: ['cjs'],
    dts: false,
    banner: cliHasShebang ? {} : { js: '#!/usr/bin/env node' },
    outExtension: () => ({ js: '.cjs' }),
  },
]);
