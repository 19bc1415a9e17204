/**
 * @module admin-api
 * Provisioning: create and list accounts, add and revoke secrets (admin-secrets.ts), public keys
 * (admin-keys.ts) and federated credentials (admin-federated.ts), disable and enable accounts, revoke
 * a token. A secret's value is returned once, by the call that creates it, and is never stored or
 * shown again. Every change is reported to {@link AdminContext.changed} at once and announced to the audit hook.
 */
import type { AuditActor } from '../audit/audit-events.js';
import { generateClientId } from '../credentials/generate-credentials.js';
import type { AccountListFilter, AccountRecord } from '../store/account-store.js';
import { callStore } from '../runtime/call-store.js';
import { supportsCredentialExpiry, supportsKind } from '../store/credential-kinds.js';
import { AdminError, accountNotFound } from './admin-errors.js';
import { checkAccountInput, checkPolicy, checkResources, type CreateAccountInput } from './admin-input.js';
import type { AccountPolicyChange } from '../store/account-store.js';
import { resolveExpiry } from './credential-expiry.js';
import { findStaleCredentials, type StaleCredential, type StaleCredentialCriteria } from './stale-credentials.js';
import { isClientIdLookup } from '../client-auth/presented-credentials.js';
import { buildFederatedOperations, type FederatedOperations } from './admin-federated.js';
import { buildKeyOperations, type KeyOperations } from './admin-keys.js';
import { SecretMaker, type SecretOperations } from './admin-secrets.js';
import type { AdminContext } from './admin-context.js';
import {
  summarizeAccount,
  type AccountPolicy,
  type AccountResources,
  type AccountStatus,
  type AccountSummary,
  type CreatedAccount,
  type RevokedToken,
} from './admin-summaries.js';
import { revokeTokenById } from './revoke-token-by-id.js';

/**
 * The admin API, from `createServiceAccounts(...).admin` or {@link createAdminApi}. All methods are async and go through the
 * `AccountStore`; they throw {@link AdminError} for refused input and reject with the store's error
 * when the store fails.
 *
 * @example
 * ```ts
 * const { clientId, secret } = await sa.admin.createAccount({ name: 'procurement-portal', scopes: ['jobs:write'] })
 * ```
 */
export interface AdminApi extends SecretOperations, KeyOperations, FederatedOperations {
  /**
   * Creates an account and its first secret. Throws `invalid_input` for a bad name, client account ID
   * or scope, including a name or client account ID that holds a client secret or is a client ID
   * (both are shown in listings and audit events); the message never repeats the value.
   */
  createAccount(input: CreateAccountInput): Promise<CreatedAccount>;
  /**
   * Every account, oldest first; with `filter.clientAccountId`, only that client account's, read as
   * such from a store that can (see `AccountStore.listAccounts`).
   */
  listAccounts(filter?: AccountListFilter): Promise<AccountSummary[]>;
  /**
   * The live (unrevoked) credentials of every kind that expire within `criteria.expiringWithin` (or
   * have expired), or were last used (never used: created) at least `criteria.unusedFor` ago: what
   * to rotate or revoke next (docs/rotation.md). Throws `invalid_input` when neither is given or one
   * is not a duration (`14d`, `12h`, `30m`, `4s`, or seconds).
   */
  listStaleCredentials(criteria: StaleCredentialCriteria): Promise<StaleCredential[]>;
  getAccount(clientId: string): Promise<AccountSummary | undefined>;
  /**
   * Revokes one access token by its ID (its `jti`: the `tokenId` of audit events and of
   * `req.serviceAccount`), on every instance within 1 s; the other tokens of its account keep working.
   * Revoking a token twice keeps the first `revokedAt`. The ID is not checked against issued tokens
   * (none are stored): an unknown ID is listed all the same. Throws `invalid_input` for an ID that is
   * not 1–256 printable characters, or that looks like a client secret or an access token (never
   * repeated); throws `not_supported` when the store has no token deny-list.
   */
  revokeToken(tokenId: string): Promise<RevokedToken>;
  disableAccount(clientId: string): Promise<AccountStatus>;
  enableAccount(clientId: string): Promise<AccountStatus>;
  /**
   * Replaces the resources (RFC 8707) the account's tokens may be for; `[]` for none, so its tokens
   * are for the server's `audience` again. Takes effect on every instance within 1 s: new tokens are
   * for the new list, and tokens issued for a resource taken off the list are refused. Throws
   * `invalid_input` for a resource that is not an absolute URI without fragment or user information, or a plain name;
   * throws `not_supported` when the store cannot hold resources (it lacks `setAccountResources`).
   */
  setResources(clientId: string, resources: readonly string[]): Promise<AccountResources>;
  /**
   * Changes the account's token policy (docs/account-policy.md): the fields given, and only those.
   * `accessTokenLifetime` is its tokens' lifetime in seconds, from 1 to the server's
   * `maxAccessTokenLifetime`, or `null` for the server's `tokenLifetime`; `dpopBoundAccessTokens`
   * requires DPoP-bound tokens (RFC 9449 §5.2). Takes effect on every instance within 1 s for new
   * tokens; tokens already issued keep their `exp`. Throws `invalid_input` for a value out of range;
   * throws `not_supported` when the store cannot hold a policy (it lacks `setAccountPolicy`).
   *
   * @example
   * ```ts
   * await sa.admin.setPolicy(clientId, { accessTokenLifetime: 900 })      // 15-minute tokens
   * await sa.admin.setPolicy(clientId, { dpopBoundAccessTokens: true })   // DPoP proofs required
   * await sa.admin.setPolicy(clientId, { accessTokenLifetime: null })     // the server's lifetime again
   * ```
   */
  setPolicy(clientId: string, policy: AccountPolicyChange): Promise<AccountPolicy>;
  /**
   * The same API, acting for a person: every audit event of a change made through it names them as
   * `actor`. The admin router calls each operation through the `actor` its `authorize` returned.
   *
   * @example
   * ```ts
   * await sa.admin.withActor({ id: 'u_42', name: 'Ada Lovelace' }).disableAccount(clientId)
   * // onAudit receives { type: 'account.disabled', clientId, name, actor: { id: 'u_42', name: 'Ada Lovelace' }, at }
   * ```
   */
  withActor(actor: AuditActor): AdminApi;
  /**
   * The longest a new credential may live, in whole seconds: the server's `maxCredentialLifetime`. Every new
   * secret, key and federated credential then needs an expiry at most this far ahead. Absent when the
   * server sets no bound (an expiry is optional). The self-service page reads it to offer only the
   * expiries the server accepts.
   */
  readonly maxCredentialLifetime?: number;
  /**
   * The longest access token lifetime, in whole seconds, that {@link AdminApi.setPolicy} may give an
   * account: the server's `maxAccessTokenLifetime` (for `createAdminApi()`, its own
   * `maxAccessTokenLifetime` option: give it the server's). The self-service page offers only the
   * lifetimes up to it.
   */
  readonly maxAccessTokenLifetime?: number;
  /**
   * False when the server was created with `dpop: false`: it issues no DPoP-bound tokens (RFC 9449),
   * and an account cannot be made to require them. The self-service page then offers that choice
   * only to clear it. `createAdminApi()` does not know the server's DPoP setting and says true.
   */
  readonly dpopAvailable?: boolean;
  /**
   * What the account store can hold besides accounts and secrets: public keys (`keys`), federated
   * credentials (`federated`), a per-account token policy (`accountPolicy`), account resources
   * (`resources`), credential expiry (`credentialExpiry`), claim conditions of federated credentials
   * (`claimConditions`) and single revoked tokens (`tokenRevocation`). A host's own store may leave
   * those out (docs/writing-a-store.md); the operations that need them then fail with
   * `not_supported`. The self-service page offers only what the store can hold.
   *
   * @example
   * ```ts
   * if (sa.admin.supports?.keys === false) console.log('this store holds secrets only')
   * if (sa.admin.supports?.credentialExpiry === false) console.log('credentials cannot be given an expiry')
   * ```
   */
  readonly supports?: {
    readonly keys: boolean;
    readonly federated: boolean;
    readonly accountPolicy: boolean;
    readonly resources?: boolean;
    readonly credentialExpiry?: boolean;
    readonly claimConditions?: boolean;
    readonly tokenRevocation?: boolean;
  };
}

/**
 * Builds the admin API over a context: `createServiceAccounts()` gives it its runtime's hooks,
 * {@link createAdminApi} standalone ones.
 *
 * @example
 * ```ts
 * const admin = buildAdminApi({ config, ready: () => runtime.ready(), audit: runtime.audit, changed: (id) => runtime.accounts.invalidate(id) })
 * ```
 */
export function buildAdminApi(context: AdminContext): AdminApi {
  const refuseUnusableDpop = (required: boolean | undefined): void => {
    if (required === true && context.dpopDisabled === true) {
      throw new AdminError(
        'invalid_input',
        'this server has DPoP turned off (dpop: false), so it cannot issue the DPoP-bound tokens dpopBoundAccessTokens requires: the account could get no token (docs/dpop.md)',
      );
    }
  };
  const { config, audit, changed } = context;
  const store = config.store;
  const call = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    await context.ready();
    return callStore(fn, config.storeTimeout, what);
  };
  /** Every account, or one client account's: asked of the store, and kept here too (a store may ignore the filter). */
  const accountsOf = async (clientAccountId: string | undefined): Promise<AccountRecord[]> => {
    if (clientAccountId === undefined) return call('listAccounts', () => store.listAccounts());
    const listed = await call('listAccounts', () => store.listAccounts({ clientAccountId }));
    return listed.filter((account) => account.clientAccountId === clientAccountId);
  };
  const requireAccount = async (clientId: string): Promise<AccountRecord> => {
    const account = isClientIdLookup(clientId) ? await call('findAccount', () => store.findAccount(clientId)) : undefined;
    if (!account) throw accountNotFound(clientId);
    return account;
  };
  const secrets = new SecretMaker(context, { call, requireAccount });
  const setEnabled = async (clientId: string, enabled: boolean): Promise<AccountStatus> => {
    await requireAccount(clientId);
    const account = await call('setAccountEnabled', () => store.setAccountEnabled(clientId, enabled));
    changed(clientId);
    if (!account) throw accountNotFound(clientId);
    audit({ type: enabled ? 'account.enabled' : 'account.disabled', clientId, name: account.name });
    return { clientId, enabled: account.enabled };
  };

  const requireResourceStore = (): void => {
    if (typeof store.setAccountResources !== 'function') {
      throw new AdminError('not_supported', 'This account store cannot hold account resources: it lacks setAccountResources (see docs/writing-a-store.md)');
    }
  };

  // Whether the store can keep an account's token policy; the console offers Token settings only then.
  const holdsPolicy = typeof store.setAccountPolicy === 'function';
  const requirePolicyStore = (): void => {
    if (!holdsPolicy) {
      throw new AdminError('not_supported', 'This account store cannot hold account token policies: it lacks setAccountPolicy (see docs/writing-a-store.md)');
    }
  };

  return {
    async createAccount(input) {
      const { name, clientAccountId, scopes, resources, accessTokenLifetime, dpopBoundAccessTokens } = checkAccountInput(input, config.maxAccessTokenLifetime);
      refuseUnusableDpop(dpopBoundAccessTokens);
      // A store that cannot keep them would silently make the account's tokens good for the server's audience.
      if (resources.length > 0) requireResourceStore();
      // Likewise a policy: silently dropped, the account would get the server's lifetime and unbound tokens.
      const hasPolicy = accessTokenLifetime !== null || dpopBoundAccessTokens;
      if (hasPolicy) requirePolicyStore();
      const expiresAt = resolveExpiry(input.secret, config, 'secret.expiresIn');
      const { created, record } = await secrets.make(expiresAt, clientAccountId);
      const clientId = generateClientId();
      await call('createAccount', () =>
        store.createAccount({
          clientId,
          name,
          clientAccountId,
          scopes,
          ...(resources.length > 0 && { resources }),
          ...(hasPolicy && { accessTokenLifetime, dpopBoundAccessTokens }),
          createdAt: record.createdAt,
          secret: record,
        }),
      );
      changed(clientId);
      audit({ type: 'account.created', clientId, name });
      audit({ type: 'secret.created', clientId, name, secretId: created.id, ...(expiresAt && { expiresAt }) });
      return { clientId, name, clientAccountId, scopes, resources, accessTokenLifetime, dpopBoundAccessTokens, secret: created };
    },

    async setPolicy(clientId, policy) {
      const checked = checkPolicy(policy, config.maxAccessTokenLifetime);
      refuseUnusableDpop(checked.dpopBoundAccessTokens);
      requirePolicyStore();
      const previous = await requireAccount(clientId);
      const account = await call('setAccountPolicy', () => store.setAccountPolicy!(clientId, checked));
      changed(clientId);
      if (!account) throw accountNotFound(clientId);
      const after = policyOf(account);
      audit({ type: 'account.policy_changed', clientId, name: account.name, ...after, before: policyOf(previous) });
      return { clientId, ...after };
    },

    async setResources(clientId, resources) {
      const checked = checkResources(resources);
      requireResourceStore();
      const previous = await requireAccount(clientId);
      const account = await call('setAccountResources', () => store.setAccountResources!(clientId, checked));
      changed(clientId);
      if (!account) throw accountNotFound(clientId);
      const before = { resources: [...(previous.resources ?? [])] };
      audit({ type: 'account.resources_changed', clientId, name: account.name, resources: checked, before });
      return { clientId, resources: [...(account.resources ?? checked)] };
    },

    async listAccounts(filter) {
      return (await accountsOf(filter?.clientAccountId)).map((account) => summarizeAccount(account, config.issuer));
    },

    async listStaleCredentials(criteria) {
      const now = config.now();
      findStaleCredentials([], criteria, now); // the criteria checked before the store is read
      return findStaleCredentials(await accountsOf(criteria.clientAccountId), criteria, now);
    },

    async getAccount(clientId) {
      const account = isClientIdLookup(clientId) ? await call('findAccount', () => store.findAccount(clientId)) : undefined;
      return account && summarizeAccount(account, config.issuer);
    },

    revokeToken: (tokenId) => revokeTokenById(tokenId, { config, changed, audit, call }),

    disableAccount: (clientId) => setEnabled(clientId, false),
    enableAccount: (clientId) => setEnabled(clientId, true),

    ...secrets.operations(),
    ...buildKeyOperations(context, { call, requireAccount }),
    ...buildFederatedOperations(context, { call, requireAccount }),
    // One place adds the actor, so every change event (present and future operations) carries it.
    // The actor is checked and copied here, before any change: a change must never be made unattributed.
    withActor: (actor) => {
      const copied = checkActor(actor);
      return buildAdminApi({ ...context, hasher: secrets.hasher, audit: (event) => context.audit(Object.assign({}, event, { actor: copied })) });
    },
    ...(config.maxCredentialLifetime !== undefined && { maxCredentialLifetime: config.maxCredentialLifetime }),
    maxAccessTokenLifetime: config.maxAccessTokenLifetime,
    dpopAvailable: context.dpopDisabled !== true,
    supports: {
      keys: supportsKind(store, 'key'),
      federated: supportsKind(store, 'federated'),
      accountPolicy: holdsPolicy,
      resources: typeof store.setAccountResources === 'function',
      credentialExpiry: supportsCredentialExpiry(store),
      claimConditions: supportsKind(store, 'federated') && store.keepsClaimConditions === true,
      tokenRevocation: typeof store.revokeToken === 'function' && typeof store.listRevokedTokens === 'function',
    },
  };
}

/** An account's token policy as summaries and audit events show it (a store may leave the fields out). */
function policyOf(account: AccountRecord): { accessTokenLifetime: number | null; dpopBoundAccessTokens: boolean } {
  return { accessTokenLifetime: account.accessTokenLifetime ?? null, dpopBoundAccessTokens: account.dpopBoundAccessTokens ?? false };
}

/** The acting person as audit events carry it, or a `TypeError` (a host's bug) when it is not one. */
function checkActor(actor: unknown): AuditActor {
  const { id, name } = (actor ?? {}) as { id?: unknown; name?: unknown };
  if (typeof id !== 'string' || id === '' || typeof name !== 'string' || name === '') {
    throw new TypeError('express-service-accounts: withActor(actor) needs an actor with a non-empty string id and name');
  }
  return { id, name };
}
