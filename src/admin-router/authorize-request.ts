/**
 * @module authorize-request
 * Asks the host's `authorize` who is acting, and fails closed: nobody is 401, `false` is 403, and a
 * throw or any answer that is not exactly a tenant administrator or an all-tenants operator is a 500
 * that lets nothing through (a half-filled principal must never widen what someone can see; nor may a
 * client account ID with white space around it, which the admin API would store trimmed).
 */
import type { Request } from 'express';
import { AdminProblem } from './admin-problem.js';
import type { AdminPrincipal, ResolvedAdminRouterOptions } from './admin-router-options.js';

const isText = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

/** The principal as given, or undefined when it is neither of the two shapes. */
function checkPrincipal(value: unknown): AdminPrincipal | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { actor, clientAccountId, allClientAccounts } = value as Record<string, unknown>;
  if (typeof actor !== 'object' || actor === null) return undefined;
  const { id, name } = actor as Record<string, unknown>;
  if (!isText(id) || !isText(name)) return undefined;
  const who = { id, name };
  if (allClientAccounts === true && clientAccountId === undefined) return { actor: who, allClientAccounts: true };
  // Stored as createAccount stores it (trimmed): a tenant ID with white space around it would create
  // accounts in the client account without it, which it can then not even see.
  if (allClientAccounts === undefined && isText(clientAccountId) && clientAccountId === clientAccountId.trim()) return { actor: who, clientAccountId };
  return undefined;
}

/**
 * Runs `authorize` for a request. Resolves with who is acting (a fresh copy, so a later change to the
 * host's object changes nothing) or rejects with a 401, 403 or 500 {@link AdminProblem}.
 *
 * @example
 * ```ts
 * import { resolveAdminRouterOptions, type AdminPrincipal } from './admin-router-options.js'
 *
 * declare function principalOf(req: import('express').Request): AdminPrincipal | undefined // the host's login
 * const options = resolveAdminRouterOptions({ admin: sa.admin, authorize: principalOf })
 * const principal = await authorizeRequest(options, req) // or a 401, 403 or 500 problem
 * ```
 */
export async function authorizeRequest(options: ResolvedAdminRouterOptions, req: Request): Promise<AdminPrincipal> {
  let answer: unknown;
  try {
    answer = await options.authorize(req);
  } catch (cause) {
    throw new AdminProblem('server-error', 'The request could not be completed', { cause });
  }
  if (answer === undefined || answer === null) {
    throw new AdminProblem('unauthorized', 'Sign in to manage service accounts', {
      headers: options.challenge ? { 'WWW-Authenticate': options.challenge } : {},
    });
  }
  if (answer === false) throw new AdminProblem('forbidden', 'You may not manage service accounts');
  const principal = checkPrincipal(answer);
  if (!principal) {
    const cause = new TypeError('authorize returned neither { actor, clientAccountId } nor { actor, allClientAccounts: true }');
    throw new AdminProblem('server-error', 'The request could not be completed', { cause });
  }
  return principal;
}
