/**
 * @module tenant-scope
 * The only view of the admin API the router's handlers get: one per request, bound to who is acting.
 * An administrator of client account X sees exactly X's service accounts; any other client ID, in
 * another client account or in none, is "not found" with one and the same answer, so nothing tells
 * them apart. They may not grant a scope the host reserved for operators (`operatorOnlyScopes`), nor,
 * where the host reserves any, create an account without scopes (which passes every scope check).
 * Resources (RFC 8707: which APIs an account's tokens are for) are the operators' to give: they pick
 * among the host's APIs, across client accounts. Every change goes through `admin.withActor(actor)`, so its audit event names the person.
 */
import type { AdminApi } from '../admin/admin-api.js';
import type { AccountPolicyChange } from '../store/account-store.js';
import type {
  AccountPolicy,
  AccountResources,
  AccountStatus,
  AccountSummary,
  CreatedAccount,
  CreatedFederatedCredential,
  CreatedKey,
  CreatedSecret,
  RevokedFederatedCredential,
  RevokedKey,
  RevokedSecret,
} from '../admin/admin-summaries.js';
import { withinClientAccount } from '../client-account-boundary.js';
import { AdminProblem, accountNotVisible } from './admin-problem.js';
import type { AdminPrincipal } from './admin-router-options.js';
import type { AddFederatedCredentialBody, AddKeyBody, AddSecretBody, CreateAccountBody, StaleQuery } from './admin-schemas.js';
import type { StaleCredential } from '../admin/stale-credentials.js';

/**
 * The admin API as one principal may use it.
 *
 * @example
 * ```ts
 * import type { AdminPrincipal } from './admin-router-options.js'
 *
 * declare const principal: AdminPrincipal // what authorizeRequest() resolved for the request
 * const accounts = await scopeAdminApi(sa.admin, principal).listAccounts()
 * ```
 */
export interface ScopedAdminApi {
  /** Every account the principal may see (an operator may narrow to one client account). */
  listAccounts(clientAccountId?: string): Promise<AccountSummary[]>;
  getAccount(clientId: string): Promise<AccountSummary>;
  createAccount(input: CreateAccountBody): Promise<CreatedAccount>;
  addSecret(clientId: string, body?: AddSecretBody): Promise<CreatedSecret>;
  revokeSecret(clientId: string, secretId: string): Promise<RevokedSecret>;
  addKey(clientId: string, body: AddKeyBody): Promise<CreatedKey>;
  revokeKey(clientId: string, keyId: string): Promise<RevokedKey>;
  addFederatedCredential(clientId: string, input: AddFederatedCredentialBody): Promise<CreatedFederatedCredential>;
  revokeFederatedCredential(clientId: string, credentialId: string): Promise<RevokedFederatedCredential>;
  disableAccount(clientId: string): Promise<AccountStatus>;
  enableAccount(clientId: string): Promise<AccountStatus>;
  setResources(clientId: string, resources: readonly string[]): Promise<AccountResources>;
  setPolicy(clientId: string, policy: AccountPolicyChange): Promise<AccountPolicy>;
  /** The stale credentials of the accounts the principal may see. */
  listStaleCredentials(criteria: StaleQuery): Promise<StaleCredential[]>;
}

const OPERATORS_GIVE_RESOURCES = 'Only an operator of every client account may choose the resources (APIs) an account’s tokens are for';

const OPERATORS_GIVE_ALL_SCOPES =
  'Only an operator of every client account may create an account without scopes here: its tokens would pass every scope check, ' +
  'including the scopes reserved for operators. Give the account the scopes it needs';

/** The scopes a create body names (a list, or one space-separated string); none means every scope. */
function namedScopes(scopes: CreateAccountBody['scopes']): readonly string[] {
  if (scopes === undefined) return [];
  return (typeof scopes === 'string' ? scopes.split(' ') : scopes).filter((scope) => scope !== '');
}

/** The first of `scopes` that `reserved` (scopes, or prefixes ending in `*`) holds. */
function reservedScopeIn(scopes: readonly string[], reserved: readonly string[]): string | undefined {
  const matches = (scope: string) => reserved.some((entry) => (entry.endsWith('*') ? scope.startsWith(entry.slice(0, -1)) : scope === entry));
  return scopes.find(matches);
}

/**
 * Binds the admin API to a principal: reads are filtered to its client account, changes check the
 * account is visible first and are attributed to its actor.
 *
 * @example
 * ```ts
 * const scoped = scopeAdminApi(sa.admin, { actor: { id: 'u_1', name: 'Ada' }, clientAccountId: 'acme' }, ['admin:*'])
 * await scoped.disableAccount(clientId) // 404 problem unless the account belongs to acme
 * ```
 */
export function scopeAdminApi(admin: AdminApi, principal: AdminPrincipal, operatorOnlyScopes: readonly string[] = []): ScopedAdminApi {
  const acting = admin.withActor(principal.actor);
  const tenant = 'clientAccountId' in principal ? principal.clientAccountId : undefined;
  const visible = (account: AccountSummary | undefined): account is AccountSummary => withinClientAccount(tenant ?? null, account);
  const getAccount = async (clientId: string): Promise<AccountSummary> => {
    const account = await admin.getAccount(clientId);
    if (!visible(account)) throw accountNotVisible();
    return account;
  };
  // An account never moves between client accounts, so once seen here it stays the caller's.
  const change = <T>(run: (clientId: string) => Promise<T>) => async (clientId: string): Promise<T> => {
    await getAccount(clientId);
    return run(clientId);
  };

  return {
    async listAccounts(clientAccountId) {
      const only = tenant ?? clientAccountId;
      // The admin API keeps only `only`'s accounts (whatever the store returns); the boundary is checked here.
      const accounts = await admin.listAccounts(only === undefined ? undefined : { clientAccountId: only });
      return accounts.filter(visible);
    },
    getAccount,
    async listStaleCredentials(criteria) {
      const stale = await admin.listStaleCredentials(tenant === undefined ? criteria : { ...criteria, clientAccountId: tenant });
      return stale.filter((credential) => withinClientAccount(tenant ?? null, credential));
    },
    async createAccount(input) {
      if (tenant !== undefined && input.clientAccountId !== undefined && input.clientAccountId !== tenant) {
        throw new AdminProblem('forbidden', 'You may create service accounts only in your own client account');
      }
      if (tenant !== undefined && operatorOnlyScopes.length > 0) {
        const scopes = namedScopes(input.scopes);
        // An account without scopes passes every scope check, the reserved ones included.
        if (scopes.length === 0) throw new AdminProblem('forbidden', OPERATORS_GIVE_ALL_SCOPES);
        // A scope whose meaning crosses client accounts is the operators' to grant.
        const reserved = reservedScopeIn(scopes, operatorOnlyScopes);
        if (reserved !== undefined) throw new AdminProblem('forbidden', `Only an operator of every client account may grant the scope ${reserved}`);
      }
      if (tenant !== undefined && input.resources !== undefined && input.resources.length > 0) throw new AdminProblem('forbidden', OPERATORS_GIVE_RESOURCES);
      return acting.createAccount({ ...input, clientAccountId: tenant ?? input.clientAccountId ?? null });
    },
    addSecret: async (clientId, body) => change((id) => acting.addSecret(id, body))(clientId),
    revokeSecret: async (clientId, secretId) => change((id) => acting.revokeSecret(id, secretId))(clientId),
    addKey: async (clientId, { publicKey, ...expiry }) => change((id) => acting.addKey(id, publicKey, expiry))(clientId),
    revokeKey: async (clientId, keyId) => change((id) => acting.revokeKey(id, keyId))(clientId),
    addFederatedCredential: async (clientId, input) => change((id) => acting.addFederatedCredential(id, input))(clientId),
    revokeFederatedCredential: async (clientId, credentialId) => change((id) => acting.revokeFederatedCredential(id, credentialId))(clientId),
    disableAccount: change((clientId) => acting.disableAccount(clientId)),
    enableAccount: change((clientId) => acting.enableAccount(clientId)),
    // A tenant's administrators may tune their own accounts' tokens: within the server's maximum lifetime.
    setPolicy: async (clientId, policy) => change((id) => acting.setPolicy(id, policy))(clientId),
    setResources: async (clientId, resources) => {
      await getAccount(clientId);
      if (tenant !== undefined) throw new AdminProblem('forbidden', OPERATORS_GIVE_RESOURCES);
      return acting.setResources(clientId, resources);
    },
  };
}
