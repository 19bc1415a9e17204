/**
 * The example's admin API at /admin: the library's admin router (docs/admin-api.md) behind a bearer
 * token check. The tokens stand in for the host's real login: in an application, `authorize` reads
 * the signed-in person from its own session and maps them to who is acting. Here:
 *
 * - `Authorization: Bearer <ADMIN_TOKEN>` acts as an operator of every client account;
 * - `Authorization: Bearer <token>` of ADMIN_TENANT_TOKENS (`token=clientAccountId,...`) acts as an
 *   administrator of that one client account, who sees and changes only its service accounts.
 *
 * Anything else is 401 with `WWW-Authenticate: Bearer realm="admin"`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { AdminPrincipal, ServiceAccounts } from 'express-service-accounts';
import { loggablePath } from './loggable-path.js';
import type { AdminTokens } from './settings.js';

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/**
 * The rest of /admin: the admin router passes paths it does not serve on to the app, and the example
 * answers them as the router answers its own errors, an RFC 9457 problem.
 */
export const adminNotFound: RequestHandler = (req, res) => {
  // Sent as it is: Express's send() would add a charset, which this media type does not define (RFC 9457 §3).
  res.status(404).set({ 'Content-Type': 'application/problem+json', 'Cache-Control': 'no-store' }).end(
    JSON.stringify({
      type: 'https://github.com/express-service-accounts/express-service-accounts/blob/main/docs/errors.md#admin-not-found',
      title: 'Not found',
      status: 404,
      detail: `The admin API has no route for ${req.method} ${loggablePath(req.baseUrl + req.path)}`,
    }),
  );
};

/** The admin router with the example's bearer check as its `authorize`. */
export function createAdminMount(sa: ServiceAccounts, tokens: AdminTokens): RequestHandler {
  const admitted: { digest: Buffer; principal: AdminPrincipal }[] = [];
  if (tokens.operator !== undefined) {
    admitted.push({ digest: digest(tokens.operator), principal: { actor: { id: 'admin-token', name: 'Operator (ADMIN_TOKEN)' }, allClientAccounts: true } });
  }
  let n = 0;
  for (const [token, clientAccountId] of tokens.tenants) {
    n += 1;
    const actor = { id: `tenant-token-${n}`, name: `Administrator of ${clientAccountId} (ADMIN_TENANT_TOKENS #${n})` };
    admitted.push({ digest: digest(token), principal: { actor, clientAccountId } });
  }
  return sa.adminRouter({
    challenge: 'Bearer realm="admin"',
    authorize: (req) => {
      const presented = /^Bearer ([\x21-\x7e]+)$/i.exec(req.headers.authorization ?? '')?.[1];
      if (presented === undefined) return undefined;
      // Compared as fixed-length digests in constant time: the answer's timing says nothing about a token.
      const candidate = digest(presented);
      let found: AdminPrincipal | undefined;
      for (const entry of admitted) if (timingSafeEqual(candidate, entry.digest)) found = entry.principal;
      return found;
    },
  });
}
