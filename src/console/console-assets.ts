/**
 * @module console-assets
 * The self-service page's script and stylesheet: read once, when a router is created, from the
 * package's `dist/console/` folder (where the build copies them) or, when running from the sources
 * (tests, `npm start`), from `src/console/page/`. Each is kept with its gzip form and an ETag, so a
 * request costs no disk read and no compression.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** One file the page loads. */
export interface ConsoleAsset {
  readonly type: string;
  readonly body: Buffer;
  readonly gzip: Buffer;
  readonly etag: string;
}

/** The files the page loads, by the name it asks for. */
export const CONSOLE_ASSET_TYPES: Readonly<Record<string, string>> = Object.freeze({
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
});

/**
 * The folder holding the page's files: `console/` beside the built bundle, else `page/` beside this
 * source file.
 */
function assetFolder(): string {
  // The bundle (dist/index.js, or a chunk beside it) and the source (src/console/) both define __dirname
  // (tsup's shim in the ES module build).
  for (const folder of [join(__dirname, 'console'), join(__dirname, 'page')]) {
    if (existsSync(join(folder, 'console.js'))) return folder;
  }
  throw new Error(`express-service-accounts: the console page's files are missing (looked in ${__dirname}); reinstall the package`);
}

let loaded: ReadonlyMap<string, ConsoleAsset> | undefined;

/**
 * The page's files, read on first use.
 *
 * @example
 * ```ts
 * const script = loadConsoleAssets().get('console.js')
 * ```
 */
export function loadConsoleAssets(): ReadonlyMap<string, ConsoleAsset> {
  if (loaded) return loaded;
  const folder = assetFolder();
  const assets = new Map<string, ConsoleAsset>();
  for (const [name, type] of Object.entries(CONSOLE_ASSET_TYPES)) {
    const body = readFileSync(join(folder, name));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    assets.set(name, { type, body, gzip: gzipSync(body, { level: 9 }), etag });
  }
  loaded = assets;
  return assets;
}
