/**
 * @module bundle
 * A benchmark server compiled once into one CommonJS file (our TypeScript and the library's source;
 * node_modules stay external, loaded as they are). Under valgrind, compiling TypeScript at start-up
 * with tsx would cost a minute per server; the code that runs per request is the same either way.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
// esbuild comes with tsx and tsup (devDependencies); it is what tsx compiles with too.
import { buildSync } from 'esbuild';

/** Compiles `bench/servers/<name>.ts` into `dir/<name>.cjs` and returns that path. */
export function bundleServer(name: string, dir: string): string {
  mkdirSync(dir, { recursive: true });
  const outfile = resolve(dir, `${name}.cjs`);
  buildSync({
    entryPoints: [resolve(__dirname, '..', 'servers', `${name}.ts`)],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    outfile,
    logLevel: 'error',
  });
  return outfile;
}
