/**
 * @module admin-errors
 * Errors of the admin API (and so of the CLI). They carry a stable `code` to switch on.
 */

/**
 * Stable codes of {@link AdminError}.
 *
 * @example
 * ```ts
 * import type { AdminErrorCode } from 'express-service-accounts'
 *
 * // An admin endpoint of your own, mapping refusals to HTTP statuses.
 * function statusOf(code: AdminErrorCode): number {
 *   switch (code) {
 *     case 'invalid_input':
 *       return 400
 *     case 'account_not_found':
 *     case 'secret_not_found':
 *       return 404
 *     case 'secret_limit_reached':
 *       return 409
 *   }
 * }
 * ```
 */
export type AdminErrorCode = 'invalid_input' | 'account_not_found' | 'secret_not_found' | 'secret_limit_reached';

/**
 * A refused admin operation. Store failures are not AdminErrors: they reject with the store's error.
 *
 * @example
 * ```ts
 * import { AdminError } from 'express-service-accounts'
 *
 * try {
 *   await sa.admin.addSecret(clientId)
 * } catch (err) {
 *   if (!(err instanceof AdminError) || err.code !== 'secret_limit_reached') throw err
 *   console.error(err.message) // "... already has 5 live secrets (the limit is 5); revoke one first"
 * }
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
