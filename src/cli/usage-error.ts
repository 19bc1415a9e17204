/**
 * @module usage-error
 * A command line the CLI understood but cannot act on (a bad `--store` URL, a bad option value):
 * exit code 2, like commander's own usage errors.
 */

/** A usage error found after commander parsed the command line. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
