/**
 * @module version
 * The library's version, reported as the OpenTelemetry instrumentation scope version. Replaced at
 * build time from package.json (tsup `define`); `0.0.0-dev` when the sources run untransformed.
 */
declare const __LIBRARY_VERSION__: string | undefined;

export const LIBRARY_VERSION: string = typeof __LIBRARY_VERSION__ === 'string' ? __LIBRARY_VERSION__ : '0.0.0-dev';
