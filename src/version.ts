/**
 * @module version
 * The library's version, reported as the OpenTelemetry instrumentation scope version. Replaced at
 * build time from package.json (tsup `define`); read from package.json when the sources run as they
 * are (tsx, vitest), so metrics name the real version there too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

declare const __LIBRARY_VERSION__: string | undefined;

/** The `version` of the package.json one folder above src/, or `0.0.0-dev` if there is none. */
function versionOfSources(): string {
  try {
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version?: unknown };
    return typeof version === 'string' ? version : '0.0.0-dev';
  } catch {
    return '0.0.0-dev';
  }
}

export const LIBRARY_VERSION: string = typeof __LIBRARY_VERSION__ === 'string' ? __LIBRARY_VERSION__ : versionOfSources();
