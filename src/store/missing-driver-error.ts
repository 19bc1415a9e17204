/**
 * @module missing-driver-error
 * The one message for an optional database driver that is not installed: what the SQL stores throw,
 * what `ready()` and the CLI say, and what an instance reports once when nobody awaits `ready()`.
 */

/**
 * An SQL store's driver (`better-sqlite3` or `pg`, optional peer dependencies) could not be loaded.
 * The message names the package and the command that installs it.
 *
 * @example
 * ```ts
 * declare const error: unknown // what `import('better-sqlite3')` rejected with
 * throw new MissingDriverError('SQLite account store', 'better-sqlite3', { cause: error })
 * // The SQLite account store needs the optional peer dependency "better-sqlite3", which is not installed: npm install better-sqlite3
 * // (or, when it is installed but its native build does not load: "..., which could not be loaded (Error ERR_DLOPEN_FAILED): npm rebuild better-sqlite3")
 * ```
 */
export class MissingDriverError extends Error {
  /** The npm package to install. */
  readonly packageName: string;
  /** The command that installs it. */
  readonly fix: string;

  constructor(store: string, packageName: string, options?: { cause?: unknown }) {
    const installed = !isNotFound(options?.cause, packageName);
    // Installed but not loadable: most often a native build for another Node.js version.
    const fix = installed ? `npm rebuild ${packageName}` : `npm install ${packageName}`;
    const problem = installed ? `could not be loaded (${describeCause(options?.cause)})` : 'is not installed';
    super(`The ${store} needs the optional peer dependency "${packageName}", which ${problem}: ${fix}`, options);
    this.name = 'MissingDriverError';
    this.packageName = packageName;
    this.fix = fix;
  }
}

function isNotFound(cause: unknown, packageName: string): boolean {
  if (!(cause instanceof Error)) return true;
  const code = (cause as { code?: unknown }).code;
  if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') return false;
  // Not found may also be one of the driver's own dependencies: then it is installed, but broken.
  return cause.message.includes(`'${packageName}'`) || cause.message.includes(`"${packageName}"`);
}

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return 'unknown error';
  const code = (cause as { code?: unknown }).code;
  return typeof code === 'string' ? `${cause.name} ${code}` : cause.name;
}

/**
 * The missing driver an error is, or was caused by (a failed store call wraps it), if any.
 *
 * @example
 * ```ts
 * declare const error: unknown // what ready() rejected with
 * const missing = missingDriverOf(error)
 * if (missing) console.error(`install it: ${missing.fix}`)
 * ```
 */
export function missingDriverOf(error: unknown): MissingDriverError | undefined {
  if (error instanceof MissingDriverError) return error;
  if (error instanceof Error && error.cause instanceof MissingDriverError) return error.cause;
  return undefined;
}
