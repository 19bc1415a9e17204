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

/** Input of {@link AdminApi.createAccount}. */
export interface CreateAccountInput {
  /** Shown in audit logs and activity history; 1–200 characters. */
  name: string;
  /** The hiring platform's client account the service account acts for. */
  clientAccountId?: string | null;
  /** Allowed scopes (an array, or one space-separated string); none means unrestricted. */
  scopes?: readonly string[] | string;
}

/** A new secret: `value` is shown this once. */
export interface CreatedSecret {
  readonly id: string;
  readonly value: string;
}

/** Result of {@link AdminApi.createAccount}. */
export interface CreatedAccount {
  readonly clientId: string;
  readonly name: string;
  readonly clientAccountId: string | null;
  readonly scopes: readonly string[];
  readonly secret: CreatedSecret;
}

/** A secret as listed: no value, no hash. */
export interface SecretSummary {
  readonly id: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
  readonly revokedAt: Date | null;
}

/** An account as listed. */
export interface AccountSummary {
  readonly clientId: string;
  readonly name: string;
  readonly clientAccountId: string | null;
  readonly enabled: boolean;
  readonly scopes: readonly string[];
  readonly createdAt: Date;
  readonly secrets: readonly SecretSummary[];
}

/** Result of {@link AdminApi.revokeSecret}. */
export interface RevokedSecret {
  readonly clientId: string;
  readonly secretId: string;
  readonly revokedAt: Date;
}

/** Result of {@link AdminApi.disableAccount} and {@link AdminApi.enableAccount}. */
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
      const name = checkText('name', input.name, 200);
      const clientAccountId =
        input.clientAccountId === undefined || input.clientAccountId === null ? null : checkText('clientAccountId', input.clientAccountId, 200);
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

    async addSecret(clientId) {
      const account = await requireAccount(clientId);
      const live = account.secrets.filter((s) => s.revokedAt === null).length;
      if (live >= config.maxSecretsPerAccount) {
        throw new AdminError(
          'secret_limit_reached',
          `Service account ${clientId} already has ${live} live secrets (the limit is ${config.maxSecretsPerAccount}); revoke one first`,
        );
      }
      const { created, record } = await newSecret();
      const stored = await call('addSecret', () => store.addSecret(clientId, record));
      accounts.invalidate(clientId);
      if (!stored) throw new AdminError('account_not_found', `No service account has client ID ${quoteInput(clientId)}`);
      runtime.audit({ type: 'secret.created', clientId, name: account.name, secretId: created.id });
      return created;
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
