/**
 * @module admin-errors
 * Errors of the admin API (and so of the CLI). They carry a stable `code` to switch on. Messages
 * may echo caller input, never a secret pasted by mistake (they reach logs and the CLI's stderr).
 */
import { redactSecrets } from '../secrets/redact-secrets.js';

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

/** Echoes caller input in an error message, with any secret in it redacted. */
function quoteInput(value: unknown): string {
  return redactSecrets(JSON.stringify(value) ?? String(value));
}

/**
 * The `account_not_found` error for a client ID.
 *
 * @example
 * ```ts
 * if (!account) throw accountNotFound(clientId)
 * ```
 */
export function accountNotFound(clientId: unknown): AdminError {
  return new AdminError('account_not_found', `No service account has client ID ${quoteInput(clientId)}`);
}

/**
 * The `secret_not_found` error for a secret ID of an account.
 *
 * @example
 * ```ts
 * const revoked = await store.revokeSecret(clientId, secretId, new Date())
 * if (!revoked) throw secretNotFound(clientId, secretId)
 * ```
 */
export function secretNotFound(clientId: string, secretId: unknown): AdminError {
  return new AdminError('secret_not_found', `Service account ${clientId} has no secret with ID ${quoteInput(secretId)}`);
}

/**
 * The `secret_limit_reached` error: the account has `live` live secrets, `limit` being the most allowed.
 *
 * @example
 * ```ts
 * const live = account.secrets.filter((secret) => secret.revokedAt === null).length
 * const limit = 5
 * if (live >= limit) throw secretLimitReached(clientId, live, limit)
 * ```
 */
export function secretLimitReached(clientId: string, live: number, limit: number): AdminError {
  return new AdminError(
    'secret_limit_reached',
    `Service account ${clientId} already has ${live} live secrets (the limit is ${limit}); revoke one first`,
  );
}
