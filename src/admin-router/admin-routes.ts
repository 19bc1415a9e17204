/**
 * @module admin-routes
 * The admin router's operations as data: method, path, schemas, documented answers and handler. The
 * router dispatches on this table and the OpenAPI document is generated from it, so the two cannot
 * disagree. Handlers get only the request's {@link ScopedAdminApi}, never the admin API itself.
 */
import { pageAccounts } from './account-pages.js';
import { CHANGE_PROBLEMS, type AdminRoute } from './admin-route.js';
import { CREDENTIAL_ROUTES } from './credential-routes.js';
import {
  AccountPageSchema,
  AccountResourcesSchema,
  SetResourcesBodySchema,
  type SetResourcesBody,
  AccountPolicySchema,
  SetPolicyBodySchema,
  type SetPolicyBody,
  AccountStatusSchema,
  AccountSummarySchema,
  CreateAccountBodySchema,
  CreatedAccountSchema,
  ListQuerySchema,
  StaleCredentialListSchema,
  StaleQuerySchema,
  type StaleQuery,
  type CreateAccountBody,
  type ListQuery,
} from './admin-schemas.js';

const ACCOUNTS = '/service-accounts';
const ACCOUNT = '/service-accounts/{clientId}';
const changeProblems = CHANGE_PROBLEMS;

/** Every operation of the admin router. */
export const ADMIN_ROUTES: readonly AdminRoute[] = [
  {
    method: 'GET',
    path: '/stale-credentials',
    operationId: 'listStaleCredentials',
    summary: 'List credentials to rotate or revoke',
    description:
      'The live (unrevoked) secrets, public keys and federated credentials of the accounts the caller may see that expire within ' +
      '`expiringWithin` (or have expired), or were last used (never used: created) at least `unusedFor` ago. Give one or both.',
    query: StaleQuerySchema,
    success: { status: 200, description: 'The matching credentials, by account.', schema: StaleCredentialListSchema },
    problems: ['invalid-request'],
    handle: async ({ admin, query }) => ({ status: 200, body: await admin.listStaleCredentials(query as StaleQuery) }),
  },
  {
    method: 'GET',
    path: ACCOUNTS,
    operationId: 'listServiceAccounts',
    summary: 'List service accounts',
    description:
      'The service accounts the caller may see (its own client account’s; every one for an all-tenants operator), ' +
      'oldest first, with their secrets’ dates and last use. More pages: follow `Link: <…>; rel="next"`.',
    query: ListQuerySchema,
    success: { status: 200, description: 'One page of accounts.', schema: AccountPageSchema, headers: ['Link'] },
    problems: ['invalid-request'],
    async handle({ admin, query, path }) {
      const { limit = 100, cursor, clientAccountId } = query as ListQuery;
      const { accounts, nextCursor } = pageAccounts(await admin.listAccounts(clientAccountId), { limit, cursor });
      if (nextCursor === undefined) return { status: 200, body: accounts };
      const next = new URLSearchParams({ ...(clientAccountId !== undefined && { clientAccountId }), limit: String(limit), cursor: nextCursor });
      return { status: 200, body: accounts, headers: { Link: `<${path}?${next.toString()}>; rel="next"` } };
    },
  },
  {
    method: 'POST',
    path: ACCOUNTS,
    operationId: 'createServiceAccount',
    summary: 'Create a service account',
    description:
      'Creates an account in the caller’s client account, with its first secret. The secret’s value is in this response ' +
      'only: it is stored as a hash and can never be shown again. An administrator of one client account may not name ' +
      'another client account, nor grant a scope the host reserves to operators (403 `forbidden`).',
    body: CreateAccountBodySchema,
    success: { status: 201, description: 'The new account and its secret.', schema: CreatedAccountSchema, headers: ['Location'] },
    problems: ['invalid-request', 'unsupported-media-type', 'payload-too-large', 'cross-origin-request', 'not-implemented'],
    async handle({ admin, body, path }) {
      const created = await admin.createAccount(body as CreateAccountBody);
      // RFC 7591 §3.2.1: when the secret expires, in seconds since the epoch; 0 when it never does.
      const expiresAt = created.secret.expiresAt;
      const answer = { ...created, client_secret_expires_at: expiresAt === null ? 0 : Math.floor(expiresAt.getTime() / 1000) };
      return { status: 201, body: answer, headers: { Location: `${path.replace(/\/$/, '')}/${encodeURIComponent(created.clientId)}` } };
    },
  },
  {
    method: 'GET',
    path: ACCOUNT,
    operationId: 'getServiceAccount',
    summary: 'Get a service account',
    description: 'One account with its secrets’ dates and last use. Another client account’s ID is not found, like an unknown one.',
    success: { status: 200, description: 'The account.', schema: AccountSummarySchema },
    problems: ['not-found'],
    handle: async ({ admin, params }) => ({ status: 200, body: await admin.getAccount(params.clientId!) }),
  },
  ...CREDENTIAL_ROUTES,
  {
    method: 'POST',
    path: `${ACCOUNT}/disable`,
    operationId: 'disableServiceAccount',
    summary: 'Disable a service account',
    description: 'Its tokens are refused and no new ones are issued until it is enabled again.',
    success: { status: 200, description: 'The account’s new state.', schema: AccountStatusSchema },
    problems: changeProblems,
    handle: async ({ admin, params }) => ({ status: 200, body: await admin.disableAccount(params.clientId!) }),
  },
  {
    method: 'POST',
    path: `${ACCOUNT}/enable`,
    operationId: 'enableServiceAccount',
    summary: 'Enable a service account',
    description: 'Its live secrets and unexpired tokens work again.',
    success: { status: 200, description: 'The account’s new state.', schema: AccountStatusSchema },
    problems: changeProblems,
    handle: async ({ admin, params }) => ({ status: 200, body: await admin.enableAccount(params.clientId!) }),
  },
  {
    method: 'POST',
    path: `${ACCOUNT}/resources`,
    operationId: 'setServiceAccountResources',
    summary: 'Set the resources of a service account',
    description:
      'Replaces the resources (APIs, RFC 8707) the account’s tokens may be for; an empty list makes its tokens for the ' +
      'server’s own audience again. New tokens follow the new list, and tokens for a resource taken off it are refused, ' +
      'on every server sharing the store within a second. Operators of every client account only (403 `forbidden`).',
    body: SetResourcesBodySchema,
    success: { status: 200, description: 'The account’s resources.', schema: AccountResourcesSchema },
    problems: [...changeProblems, 'not-implemented'],
    handle: async ({ admin, params, body }) => ({
      status: 200,
      body: await admin.setResources(params.clientId!, (body as SetResourcesBody).resources),
    }),
  },
  {
    method: 'POST',
    path: `${ACCOUNT}/policy`,
    operationId: 'setServiceAccountPolicy',
    summary: 'Change the token policy of a service account',
    description:
      'Changes the fields given, and only those: `accessTokenLifetime` (seconds, at most the server’s `maxAccessTokenLifetime`; ' +
      'null for the server’s `tokenLifetime`) and `dpopBoundAccessTokens` (RFC 9449 §5.2). New tokens follow the new policy on ' +
      'every server sharing the store within a second; tokens already issued keep their expiry.',
    body: SetPolicyBodySchema,
    success: { status: 200, description: 'The account’s token policy.', schema: AccountPolicySchema },
    problems: [...changeProblems, 'not-implemented'],
    handle: async ({ admin, params, body }) => ({ status: 200, body: await admin.setPolicy(params.clientId!, body as SetPolicyBody) }),
  },
];

/** A route whose path matched, with its parameters decoded. */
export interface RouteMatch {
  readonly params: Record<string, string>;
  /** Every route on that path, to answer `OPTIONS` and 405 with `Allow`. */
  readonly routes: readonly AdminRoute[];
}

const SEGMENTS = new Map(ADMIN_ROUTES.map((route) => [route.path, route.path.split('/').slice(1)]));

/**
 * Finds the routes of a path (relative to the mount; one trailing slash allowed). Undefined when no
 * route has this path, or a segment is not valid percent-encoding.
 *
 * @example
 * ```ts
 * matchRoutes('/service-accounts/esa_123/disable') // { params: { clientId: 'esa_123' }, routes: [disable] }
 * ```
 */
export function matchRoutes(path: string): RouteMatch | undefined {
  const parts = path.replace(/(.)\/$/, '$1').split('/').slice(1);
  for (const [template, segments] of SEGMENTS) {
    if (segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const matched = segments.every((segment, i) => {
      const part = parts[i]!;
      if (!segment.startsWith('{')) return segment === part;
      if (part === '') return false;
      try {
        params[segment.slice(1, -1)] = decodeURIComponent(part);
        return true;
      } catch {
        return false;
      }
    });
    if (matched) return { params, routes: ADMIN_ROUTES.filter((route) => route.path === template) };
  }
  return undefined;
}
