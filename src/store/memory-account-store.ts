/**
 * @module memory-account-store
 * An in-process {@link AccountStore}: for tests, demos and single-process apps that provision at start-up.
 */
import type {
  AccountChangeListener,
  AddSecretOptions,
  AddSecretResult,
  AccountRecord,
  AccountStore,
  NewAccountRecord,
  NewSecretRecord,
  RevokedTokenRecord,
  SecretRecord,
} from './account-store.js';
import { revokedTokenChangeKey } from './revoked-token-change.js';

/**
 * Keeps accounts in memory. Records are copied in and out, so callers can never mutate the store.
 * Changes are announced to watchers in the same process.
 *
 * @example
 * ```ts
 * const sa = createServiceAccounts({ store: new MemoryAccountStore(), issuer, signingKeys })
 * ```
 */
export class MemoryAccountStore implements AccountStore {
  readonly #accounts = new Map<string, AccountRecord>();
  readonly #listeners = new Set<AccountChangeListener>();
  readonly #revokedTokens = new Map<string, RevokedTokenRecord>();

  async createAccount(input: NewAccountRecord): Promise<AccountRecord> {
    if (this.#accounts.has(input.clientId)) throw new Error(`Account ${input.clientId} already exists`);
    const account: AccountRecord = {
      clientId: input.clientId,
      name: input.name,
      clientAccountId: input.clientAccountId,
      scopes: [...input.scopes],
      enabled: true,
      createdAt: input.createdAt,
      secrets: [newSecret(input.secret)],
    };
    this.#accounts.set(account.clientId, account);
    this.#changed(account.clientId);
    return copyAccount(account);
  }

  async findAccount(clientId: string): Promise<AccountRecord | undefined> {
    const account = this.#accounts.get(clientId);
    return account && copyAccount(account);
  }

  async listAccounts(): Promise<AccountRecord[]> {
    return [...this.#accounts.values()].map(copyAccount);
  }

  async setAccountEnabled(clientId: string, enabled: boolean): Promise<AccountRecord | undefined> {
    return this.#update(clientId, (account) => ({ ...account, enabled }));
  }

  async addSecret(clientId: string, secret: NewSecretRecord, options: AddSecretOptions): Promise<AddSecretResult> {
    // Count and insert run with no `await` between them: no other call can add in between.
    const account = this.#accounts.get(clientId);
    if (!account) return undefined;
    if (account.secrets.filter((s) => s.revokedAt === null).length >= options.maxLiveSecrets) return 'limit_reached';
    const stored = newSecret(secret);
    this.#update(clientId, (a) => ({ ...a, secrets: [...a.secrets, stored] }));
    return { ...stored };
  }

  async revokeSecret(clientId: string, secretId: string, at: Date): Promise<SecretRecord | undefined> {
    const secret = this.#accounts.get(clientId)?.secrets.find((s) => s.id === secretId);
    if (!secret) return undefined;
    if (secret.revokedAt) return { ...secret };
    const revoked = { ...secret, revokedAt: at };
    this.#update(clientId, (a) => ({ ...a, secrets: a.secrets.map((s) => (s.id === secretId ? revoked : s)) }));
    return { ...revoked };
  }

  async recordSecretUse(clientId: string, secretId: string, at: Date): Promise<void> {
    const account = this.#accounts.get(clientId);
    if (!account) return;
    // Last use is bookkeeping, not status: no change notification.
    this.#accounts.set(clientId, {
      ...account,
      secrets: account.secrets.map((s) => (s.id === secretId ? { ...s, lastUsedAt: at } : s)),
    });
  }

  async revokeToken(record: RevokedTokenRecord): Promise<RevokedTokenRecord> {
    const first = this.#revokedTokens.get(record.tokenId);
    if (first) return { ...first };
    // Entries past their expiry are forgotten here, as the SQL stores do on each revocation.
    for (const [tokenId, entry] of this.#revokedTokens) {
      if (entry.expiresAt.getTime() <= record.revokedAt.getTime()) this.#revokedTokens.delete(tokenId);
    }
    this.#revokedTokens.set(record.tokenId, { ...record });
    this.#changed(revokedTokenChangeKey(record));
    return { ...record };
  }

  async listRevokedTokens(now: Date): Promise<RevokedTokenRecord[]> {
    return [...this.#revokedTokens.values()].filter((entry) => entry.expiresAt.getTime() > now.getTime()).map((entry) => ({ ...entry }));
  }

  async watch(listener: AccountChangeListener): Promise<() => Promise<void>> {
    this.#listeners.add(listener);
    return async () => {
      this.#listeners.delete(listener);
    };
  }

  #update(clientId: string, change: (account: AccountRecord) => AccountRecord): AccountRecord | undefined {
    const account = this.#accounts.get(clientId);
    if (!account) return undefined;
    const updated = change(account);
    this.#accounts.set(clientId, updated);
    this.#changed(clientId);
    return copyAccount(updated);
  }

  #changed(clientId: string): void {
    for (const listener of this.#listeners) listener(clientId);
  }
}

function newSecret(secret: NewSecretRecord): SecretRecord {
  return { id: secret.id, hash: secret.hash, createdAt: secret.createdAt, lastUsedAt: null, revokedAt: null };
}

function copyAccount(account: AccountRecord): AccountRecord {
  return { ...account, scopes: [...account.scopes], secrets: account.secrets.map((s) => ({ ...s })) };
}
