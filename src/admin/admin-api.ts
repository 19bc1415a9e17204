/**
 * @module admin-api
 * Provisioning: create and list accounts, add and revoke secrets, disable and enable accounts.
 * A secret's value is returned once, by the call that creates it, and is never stored or shown again.
 * Every change drops this instance's cached status at once and is announced to the audit hook.
 */
import { generateClientId, generateSecret, isSecretId } from '../secrets/generate-credentials.js';
import { hashSecret } from '../secrets/hash-secret.js';
import { redactSecrets } from '../secrets/redact-secrets.js';
import type { AccountRecord, SecretRecord } from '../store/account-store.js';
import { callStore } from '../store/call-store.js';
import type { Runtime } from '../runtime.js';
import { AdminError } from './admin-errors.js';
import { rejectCredentialLookalike } from './reject-credential-lookalike.js';

/**
 * Input of {@link AdminApi.createAccount}.
 *
 * @example
 * ```ts
 * import type { CreateAccountInput } from 'express-service-accounts'
 *
 * const input: CreateAccountInput = {
 *   name: 'procurement-portal',
 *   clientAccountId: 'acme-corp',
 *   scopes: 'jobs:read jobs:write', // or ['jobs:read', 'jobs:write']
 * }
 * const account = await sa.admin.createAccount(input)
 * ```
 */
export interface CreateAccountInput {
  /**
   * Shown in audit logs and activity history; 1–200 printable characters. Refused (`invalid_input`)
   * when it contains a client secret anywhere or is exactly a client ID.
   */
  name: string;
  /**
   * The client account (your customer or tenant) the service account acts for;
   * `req.serviceAccount.clientAccountId`. Refused like `name` when it holds a credential.
   */
  clientAccountId?: string | null;
  /** Allowed scopes (an array, or one space-separated string); none means unrestricted. */
  scopes?: readonly string[] | string;
}

/**
 * A new secret: `value` is shown this once.
 *
 * @example
 * ```ts
 * import type { CreatedSecret } from 'express-service-accounts'
 *
 * // Rotation, step 1: a second secret for the client to switch to (docs/rotation.md).
 * const secret: CreatedSecret = await sa.admin.addSecret(clientId)
 * console.log(`new secret ${secret.id}: ${secret.value}`) // shown this once: only its hash is stored
 * ```
 */
export interface CreatedSecret {
  readonly id: string;
  readonly value: string;
}

/**
 * Result of {@link AdminApi.createAccount}.
 *
 * @example
 * ```ts
 * import type { CreatedAccount } from 'express-service-accounts'
 *
 * // A provisioning script: the secret's value is returned this once, never stored or shown again.
 * const account: CreatedAccount = await sa.admin.createAccount({ name: 'procurement-portal', scopes: ['jobs:write'] })
 * console.log(JSON.stringify({ client_id: account.clientId, client_secret: account.secret.value }))
 * ```
 */
export interface CreatedAccount {
  readonly clientId: string;
  readonly name: string;
  readonly clientAccountId: string | null;
  readonly scopes: readonly string[];
  readonly secret: CreatedSecret;
}

/**
 * A secret as listed: no value, no hash.
 *
 * @example
 * ```ts
 * import type { SecretSummary } from 'express-service-accounts'
 *
 * // Live secrets nobody has used for 90 days: candidates for revocation.
 * const cutoff = Date.now() - 90 * 24 * 60 * 60 * 1000
 * const account = await sa.admin.getAccount(clientId)
 * const stale: SecretSummary[] = (account?.secrets ?? []).filter(
 *   (secret) => secret.revokedAt === null && (secret.lastUsedAt ?? secret.createdAt).getTime() < cutoff,
 * )
 * ```
 */
export interface SecretSummary {
  readonly id: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
  readonly revokedAt: Date | null;
}

/**
 * An account as listed.
 *
 * @example
 * ```ts
 * import type { AccountSummary } from 'express-service-accounts'
 *
 * const accounts: AccountSummary[] = await sa.admin.listAccounts()
 * for (const account of accounts) {
 *   const live = account.secrets.filter((secret) => secret.revokedAt === null).length
 *   console.log(`${account.clientId} ${account.name}: ${account.enabled ? 'enabled' : 'disabled'}, ${live} live secret(s)`)
 * }
 * ```
 */
export interface AccountSummary {
  readonly clientId: string;
  readonly name: string;
  readonly clientAccountId: string | null;
  readonly enabled: boolean;
  readonly scopes: readonly string[];
  readonly createdAt: Date;
  readonly secrets: readonly SecretSummary[];
}

/**
 * Result of {@link AdminApi.revokeSecret}.
 *
 * @example
 * ```ts
 * import type { RevokedSecret } from 'express-service-accounts'
 *
 * // Tokens issued against the secret are refused on every instance within a second.
 * const revoked: RevokedSecret = await sa.admin.revokeSecret(clientId, secretId)
 * console.log(`${revoked.clientId}: secret ${revoked.secretId} revoked at ${revoked.revokedAt.toISOString()}`)
 * ```
 */
export interface RevokedSecret {
  readonly clientId: string;
  readonly secretId: string;
  readonly revokedAt: Date;
}

/**
 * Result of {@link AdminApi.disableAccount} and {@link AdminApi.enableAccount}.
 *
 * @example
 * ```ts
 * import type { AccountStatus } from 'express-service-accounts'
 *
 * // Its tokens are refused (`invalid_token`, "disabled") until the account is enabled again.
 * const status: AccountStatus = await sa.admin.disableAccount(clientId)
 * console.log(`${status.clientId} enabled: ${status.enabled}`) // enabled: false
 * ```
 */
export interface AccountStatus {
  readonly clientId: string;
  readonly enabled: boolean;
}

/**
 * The admin API, from `createServiceAccounts(...).admin`. All methods are async and go through the
 * `AccountStore`; they throw {@link AdminError} for refused input and reject with the store's error
 * when the store fails.
 *
 * @example
 * ```ts
 * const { clientId, secret } = await sa.admin.createAccount({ name: 'procurement-portal', scopes: ['jobs:write'] })
 * ```
 */
export interface AdminApi {
  /**
   * Creates an account and its first secret. Throws `invalid_input` for a bad name, client account ID
   * or scope, including a name or client account ID that holds a client secret or is a client ID
   * (both are shown in listings and audit events); the message never repeats the value.
   */
  createAccount(input: CreateAccountInput): Promise<CreatedAccount>;
  listAccounts(): Promise<AccountSummary[]>;
  getAccount(clientId: string): Promise<AccountSummary | undefined>;
  /** Adds a secret for rotation; fails with `secret_limit_reached` past `maxSecretsPerAccount` live secrets. */
  addSecret(clientId: string): Promise<CreatedSecret>;
  /** Revokes a secret and, with it, every token issued against it, on every instance within 1 s. */
  revokeSecret(clientId: string, secretId: string): Promise<RevokedSecret>;
  disableAccount(clientId: string): Promise<AccountStatus>;
  enableAccount(clientId: string): Promise<AccountStatus>;
}

const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Echoes caller input in an error message, never a secret pasted by mistake (messages reach logs and the CLI's stderr). */
function quoteInput(value: unknown): string {
  return redactSecrets(JSON.stringify(value) ?? String(value));
}

function checkText(field: string, value: unknown, max: number): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > max || CONTROL.test(value)) {
    throw new AdminError('invalid_input', `${field} must be 1 to ${max} printable characters`);
  }
  return value.trim();
}

function checkScopes(value: CreateAccountInput['scopes']): string[] {
  if (value === undefined) return [];
  const list = typeof value === 'string' ? value.split(' ') : Array.isArray(value) ? value : undefined;
  if (!list) throw new AdminError('invalid_input', 'scopes must be an array of strings or a space-separated string');
  const scopes = list.filter((s) => s !== '');
  for (const s of scopes) {
    if (typeof s !== 'string' || !SCOPE_TOKEN.test(s)) {
      throw new AdminError('invalid_input', `invalid scope ${JSON.stringify(s)}: use printable ASCII without spaces, quotes or backslashes (RFC 6749 §3.3)`);
    }
  }
  return [...new Set(scopes)];
}

function summarizeSecret(secret: SecretRecord): SecretSummary {
  return { id: secret.id, createdAt: secret.createdAt, lastUsedAt: secret.lastUsedAt, revokedAt: secret.revokedAt };
}

function summarize(account: AccountRecord): AccountSummary {
  return {
    clientId: account.clientId,
    name: account.name,
    clientAccountId: account.clientAccountId,
    enabled: account.enabled,
    scopes: [...account.scopes],
    createdAt: account.createdAt,
    secrets: account.secrets.map(summarizeSecret),
  };
}

/** Builds the admin API of one runtime. */
export function createAdminApi(runtime: Runtime): AdminApi {
  const { config, accounts } = runtime;
  const store = config.store;
  const call = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    await runtime.ready();
    return callStore(fn, config.storeTimeout, what);
  };
  const requireAccount = async (clientId: string): Promise<AccountRecord> => {
    const account = typeof clientId === 'string' ? await call('findAccount', () => store.findAccount(clientId)) : undefined;
    if (!account) throw new AdminError('account_not_found', `No service account has client ID ${quoteInput(clientId)}`);
    return account;
  };
  const newSecret = async (): Promise<{ created: CreatedSecret; record: { id: string; hash: string; createdAt: Date } }> => {
    const created = generateSecret();
    const hash = await hashSecret(created.value, config.secretHashRounds);
    return { created, record: { id: created.id, hash, createdAt: config.now() } };
  };
  const secretLimitReached = (clientId: string, live: number): AdminError =>
    new AdminError(
      'secret_limit_reached',
      `Service account ${clientId} already has ${live} live secrets (the limit is ${config.maxSecretsPerAccount}); revoke one first`,
    );
  const liveSecrets = (account: AccountRecord): number => account.secrets.filter((s) => s.revokedAt === null).length;
  const addingSecret = new Map<string, Promise<void>>();
  const addSecretNow = async (clientId: string): Promise<CreatedSecret> => {
    const account = await requireAccount(clientId);
    const live = liveSecrets(account);
    if (live >= config.maxSecretsPerAccount) throw secretLimitReached(clientId, live);
    const { created, record } = await newSecret();
    const stored = await call('addSecret', () => store.addSecret(clientId, record));
    accounts.invalidate(clientId);
    if (!stored) throw new AdminError('account_not_found', `No service account has client ID ${quoteInput(clientId)}`);
    // Another process (the CLI, another instance) may have added one at the same time: recount, and take
    // ours back, unseen, if together we went past the cap.
    const after = await requireAccount(clientId);
    if (liveSecrets(after) > config.maxSecretsPerAccount) {
      await call('revokeSecret', () => store.revokeSecret(clientId, created.id, config.now()));
      accounts.invalidate(clientId);
      throw secretLimitReached(clientId, liveSecrets(after) - 1);
    }
    runtime.audit({ type: 'secret.created', clientId, name: account.name, secretId: created.id });
    return created;
  };
  const setEnabled = async (clientId: string, enabled: boolean): Promise<AccountStatus> => {
    await requireAccount(clientId);
    const account = await call('setAccountEnabled', () => store.setAccountEnabled(clientId, enabled));
    accounts.invalidate(clientId);
    if (!account) throw new AdminError('account_not_found', `No service account has client ID ${quoteInput(clientId)}`);
    runtime.audit({ type: enabled ? 'account.enabled' : 'account.disabled', clientId, name: account.name });
    return { clientId, enabled: account.enabled };
  };

  return {
    async createAccount(input) {
      if (typeof input !== 'object' || input === null) throw new AdminError('invalid_input', 'createAccount needs { name }');
      const name = rejectCredentialLookalike('name', checkText('name', input.name, 200));
      const clientAccountId =
        input.clientAccountId === undefined || input.clientAccountId === null
          ? null
          : rejectCredentialLookalike('clientAccountId', checkText('clientAccountId', input.clientAccountId, 200));
      const scopes = checkScopes(input.scopes);
      const { created, record } = await newSecret();
      const clientId = generateClientId();
      await call('createAccount', () =>
        store.createAccount({ clientId, name, clientAccountId, scopes, createdAt: record.createdAt, secret: record }),
      );
      accounts.invalidate(clientId);
      runtime.audit({ type: 'account.created', clientId, name });
      runtime.audit({ type: 'secret.created', clientId, name, secretId: created.id });
      return { clientId, name, clientAccountId, scopes, secret: created };
    },

    async listAccounts() {
      return (await call('listAccounts', () => store.listAccounts())).map(summarize);
    },

    async getAccount(clientId) {
      const account = await call('findAccount', () => store.findAccount(clientId));
      return account && summarize(account);
    },

    addSecret(clientId) {
      // Calls for one account run one after another here, so concurrent calls cannot all pass the cap check.
      const previous = addingSecret.get(clientId) ?? Promise.resolve();
      const adding = previous.catch(() => {}).then(() => addSecretNow(clientId));
      const settled: Promise<void> = adding.then(
        () => undefined,
        () => undefined,
      );
      addingSecret.set(clientId, settled);
      void settled.then(() => {
        if (addingSecret.get(clientId) === settled) addingSecret.delete(clientId);
      });
      return adding;
    },

    async revokeSecret(clientId, secretId) {
      const account = await requireAccount(clientId);
      if (typeof secretId !== 'string' || !isSecretId(secretId) || !account.secrets.some((s) => s.id === secretId)) {
        throw new AdminError('secret_not_found', `Service account ${clientId} has no secret with ID ${quoteInput(secretId)}`);
      }
      const revoked = await call('revokeSecret', () => store.revokeSecret(clientId, secretId, config.now()));
      accounts.invalidate(clientId);
      if (!revoked?.revokedAt) throw new AdminError('secret_not_found', `Service account ${clientId} has no secret with ID ${quoteInput(secretId)}`);
      runtime.audit({ type: 'secret.revoked', clientId, name: account.name, secretId });
      return { clientId, secretId, revokedAt: revoked.revokedAt };
    },

    disableAccount: (clientId) => setEnabled(clientId, false),
    enableAccount: (clientId) => setEnabled(clientId, true),
  };
}
