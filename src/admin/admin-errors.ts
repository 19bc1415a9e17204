/**
 * @module admin-errors
 * Errors of the admin API (and so of the CLI). They carry a stable `code` to switch on.
 */

/** Stable codes of {@link AdminError}. */
export type AdminErrorCode = 'invalid_input' | 'account_not_found' | 'secret_not_found' | 'secret_limit_reached';

/**
 * A refused admin operation. Store failures are not AdminErrors: they reject with the store's error.
 * @example
 * ```ts
 * try { await sa.admin.addSecret(clientId) } catch (err) { if (err instanceof AdminError && err.code === 'secret_limit_reached') ... }
 * ```
 */
export class AdminError extends Error {
  constructor(
    readonly code: AdminErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AdminError';
  }
}
