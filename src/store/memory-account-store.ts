/**
 * @module memory-account-store
 * An in-process {@link AccountStore}: for tests, demos and single-process apps that provision at start-up.
 */
import type {
  AccountPolicyChange,
  AccountChangeListener,
  AccountListFilter,
  AddKeyOptions,
  AddKeyResult,
  AddSecretOptions,
  AddSecretResult,
  AccountRecord,
  AccountStore,
  AddFederatedCredentialResult,
  RevokeTokenOptions,
  RevokeTokenResult,
  FederatedCredentialRecord,
  KeyRecord,
  NewFederatedCredentialRecord,
  NewAccountRecord,
  NewKeyRecord,
  NewSecretRecord,
  RevokedTokenRecord,
  SecretRecord,
} from './account-store.js';
import { EXPIRED_ENTRY_RETENTION_MS, revokedTokenChangeKey } from './revoked-token-change.js';
import {
  CREDENTIAL_KINDS,
  countLiveCredentials,
  credentialsOf,
  federatedOf,
  findOfKind,
  hasExpired,
  isLiveTwin,
  keysOf,
  type CredentialKindName,
  type CredentialRecords,
} from './credential-kinds.js';

/** How often, at most, `consumeAssertionId` sweeps out expired assertion IDs. */
const ASSERTION_SWEEP_MS = 60_000;

/**
 * Keeps accounts in memory. Records are copied in and out, so callers can never mutate the store.
 * Changes are announced to watchers in the same process. Used assertion IDs are remembered by this
 * process only, so several processes must share a persistent store instead.
 *
 * @example
 * ```ts
 * const sa = createServiceAccounts({ store: new MemoryAccountStore(), issuer, signingKeys })
 * ```
 */
export class MemoryAccountStore implements AccountStore {
  /** Keeps the `expiresAt` of new credentials. */
  readonly keepsCredentialExpiry: boolean = true;
  /** Keeps the claim conditions of new federated credentials. */
  readonly keepsClaimConditions: boolean = true;
  readonly #accounts = new Map<string, AccountRecord>();
  readonly #listeners = new Set<AccountChangeListener>();
  readonly #revokedTokens = new Map<string, RevokedTokenRecord>();
  /** Used assertion IDs (`[issuer, jti]` as JSON) → when they expire, in ms since the epoch. */
  readonly #assertionIds = new Map<string, number>();
  #lastSweep = 0;

  async createAccount(input: NewAccountRecord): Promise<AccountRecord> {
    if (this.#accounts.has(input.clientId)) throw new Error(`Account ${input.clientId} already exists`);
    const account: AccountRecord = {
      clientId: input.clientId,
      name: input.name,
      clientAccountId: input.clientAccountId,
      scopes: [...input.scopes],
      resources: [...(input.resources ?? [])],
      accessTokenLifetime: input.accessTokenLifetime ?? null,
      dpopBoundAccessTokens: input.dpopBoundAccessTokens ?? false,
      enabled: true,
      createdAt: input.createdAt,
      secrets: [newSecret(input.secret)],
      keys: [],
      federated: [],
    };
    this.#accounts.set(account.clientId, account);
    this.#changed(account.clientId);
    return copyAccount(account);
  }

  async findAccount(clientId: string): Promise<AccountRecord | undefined> {
    const account = this.#accounts.get(clientId);
    return account && copyAccount(account);
  }

  async listAccounts(filter: AccountListFilter = {}): Promise<AccountRecord[]> {
    const { clientAccountId } = filter;
    const accounts = [...this.#accounts.values()];
    return (clientAccountId === undefined ? accounts : accounts.filter((account) => account.clientAccountId === clientAccountId)).map(copyAccount);
  }

  async setAccountEnabled(clientId: string, enabled: boolean): Promise<AccountRecord | undefined> {
    return this.#update(clientId, (account) => ({ ...account, enabled }));
  }

  async setAccountResources(clientId: string, resources: readonly string[]): Promise<AccountRecord | undefined> {
    return this.#update(clientId, (account) => ({ ...account, resources: [...resources] }));
  }

  async setAccountPolicy(clientId: string, policy: AccountPolicyChange): Promise<AccountRecord | undefined> {
    return this.#update(clientId, (account) => ({
      ...account,
      ...(policy.accessTokenLifetime !== undefined && { accessTokenLifetime: policy.accessTokenLifetime }),
      ...(policy.dpopBoundAccessTokens !== undefined && { dpopBoundAccessTokens: policy.dpopBoundAccessTokens }),
    }));
  }

  async addSecret(clientId: string, secret: NewSecretRecord, options: AddSecretOptions): Promise<AddSecretResult> {
    return this.#add<'secret', never>('secret', clientId, newSecret(secret), options);
  }

  async revokeSecret(clientId: string, secretId: string, at: Date): Promise<SecretRecord | undefined> {
    return this.#revoke('secret', clientId, secretId, at);
  }

  async recordSecretUse(clientId: string, secretId: string, at: Date): Promise<void> {
    this.#recordUse('secret', clientId, secretId, at);
  }

  async recordSecretDigest(clientId: string, secretId: string, digest: string): Promise<void> {
    const account = this.#accounts.get(clientId);
    if (!account) return;
    // Bookkeeping, not status: no change notification.
    this.#accounts.set(clientId, {
      ...account,
      secrets: account.secrets.map((s) => (s.id === secretId ? { ...s, verifiedDigest: digest } : s)),
    });
  }

  async addKey(clientId: string, key: NewKeyRecord, options: AddKeyOptions): Promise<AddKeyResult> {
    const { expiresAt: keyExpiresAt, ...rest } = key;
    const stored: KeyRecord = { ...rest, lastUsedAt: null, revokedAt: null, ...expiryOf(keyExpiresAt) };
    return this.#add('key', clientId, stored, options, (account) =>
      keysOf(account).some((k) => k.revokedAt === null && k.thumbprint === key.thumbprint) ? 'duplicate' : undefined,
    );
  }

  async revokeKey(clientId: string, keyId: string, at: Date): Promise<KeyRecord | undefined> {
    return this.#revoke('key', clientId, keyId, at);
  }

  async recordKeyUse(clientId: string, keyId: string, at: Date): Promise<void> {
    this.#recordUse('key', clientId, keyId, at);
  }

  async addFederatedCredential(clientId: string, credential: NewFederatedCredentialRecord, options: AddKeyOptions): Promise<AddFederatedCredentialResult> {
    const stored: FederatedCredentialRecord = {
      id: credential.id,
      issuer: credential.issuer,
      subject: credential.subject,
      audience: credential.audience,
      jwksUri: credential.jwksUri,
      createdAt: credential.createdAt,
      lastUsedAt: null,
      revokedAt: null,
      // Frozen: the copies handed out share it.
      ...(credential.claims !== undefined && Object.keys(credential.claims).length > 0 && { claims: Object.freeze({ ...credential.claims }) }),
      ...expiryOf(credential.expiresAt),
    };
    return this.#add('federated', clientId, stored, options, (account) =>
      federatedOf(account).some((existing) => isLiveTwin(existing, credential)) ? 'duplicate' : undefined,
    );
  }

  async revokeFederatedCredential(clientId: string, credentialId: string, at: Date): Promise<FederatedCredentialRecord | undefined> {
    return this.#revoke('federated', clientId, credentialId, at);
  }

  async recordFederatedCredentialUse(clientId: string, credentialId: string, at: Date): Promise<void> {
    this.#recordUse('federated', clientId, credentialId, at);
  }

  async findFederatedClients(issuer: string, subject: string, limit: number, now?: Date): Promise<string[]> {
    // Exact comparison only: an outside token names one subject, never a pattern.
    const holders = [...this.#accounts.values()].filter((account) =>
      federatedOf(account).some(
        (c) => c.revokedAt === null && c.issuer === issuer && c.subject === subject && (now === undefined || !hasExpired(c, now.getTime())),
      ),
    );
    // Oldest account first, then by client ID, as the SQL stores order them.
    holders.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0));
    return holders.slice(0, Math.max(0, limit)).map((account) => account.clientId);
  }

  async consumeAssertionId(issuer: string, jti: string, expiresAt: Date, now: Date): Promise<boolean> {
    const at = now.getTime();
    if (at - this.#lastSweep >= ASSERTION_SWEEP_MS) {
      this.#lastSweep = at;
      for (const [id, expiry] of this.#assertionIds) if (expiry <= at) this.#assertionIds.delete(id);
    }
    const id = JSON.stringify([issuer, jti]);
    const expiry = this.#assertionIds.get(id);
    if (expiry !== undefined && expiry > at) return false;
    this.#assertionIds.set(id, expiresAt.getTime());
    return true;
  }

  async revokeToken(record: RevokedTokenRecord, options?: RevokeTokenOptions): Promise<RevokeTokenResult> {
    const first = this.#revokedTokens.get(record.tokenId);
    if (first) return { ...first };
    // Entries long past their expiry are forgotten here, as the SQL stores do on each revocation; the
    // same walk counts the client's live entries for its cap.
    const at = record.revokedAt.getTime();
    let mine = 0;
    for (const [tokenId, entry] of this.#revokedTokens) {
      const expiresAt = entry.expiresAt.getTime();
      if (expiresAt <= at - EXPIRED_ENTRY_RETENTION_MS) this.#revokedTokens.delete(tokenId);
      else if (expiresAt > at && record.clientId !== null && entry.clientId === record.clientId) mine += 1;
    }
    if (record.clientId !== null && options?.maxPerClient !== undefined && mine >= options.maxPerClient) return 'limit_reached';
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

  /**
   * Adds a credential of any kind after the account's others, unless `refuse` refuses it (a live twin)
   * or the account's live credentials of every kind fill the cap. Checks and insert run with no
   * `await` between them: no other call can add in between.
   */
  #add<K extends CredentialKindName, D extends 'duplicate'>(
    kind: K,
    clientId: string,
    stored: CredentialRecords[K],
    options: { readonly maxLiveCredentials: number },
    refuse?: (account: AccountRecord) => D | undefined,
  ): CredentialRecords[K] | undefined | 'limit_reached' | D {
    const account = this.#accounts.get(clientId);
    if (!account) return undefined;
    const refusal = refuse?.(account);
    if (refusal !== undefined) return refusal;
    if (countLiveCredentials(account) >= options.maxLiveCredentials) return 'limit_reached';
    const { field } = CREDENTIAL_KINDS[kind];
    this.#update(clientId, (a) => ({ ...a, [field]: [...credentialsOf(a, kind), stored] }));
    return copyCredential(kind, stored);
  }

  /** Revokes a credential of any kind once: a second revocation returns the first revokedAt. */
  #revoke<K extends CredentialKindName>(kind: K, clientId: string, id: string, at: Date): CredentialRecords[K] | undefined {
    const credential = findOfKind(this.#accounts.get(clientId), kind, id);
    if (!credential) return undefined;
    if (credential.revokedAt) return copyCredential(kind, credential);
    const revoked: CredentialRecords[K] = { ...credential, revokedAt: at };
    const { field } = CREDENTIAL_KINDS[kind];
    this.#update(clientId, (a) => ({ ...a, [field]: credentialsOf(a, kind).map((c) => (c.id === id ? revoked : c)) }));
    return copyCredential(kind, revoked);
  }

  /** Records a use of a credential of any kind. Bookkeeping, not status: no change notification. */
  #recordUse(kind: CredentialKindName, clientId: string, id: string, at: Date): void {
    const account = this.#accounts.get(clientId);
    if (!account) return;
    const { field } = CREDENTIAL_KINDS[kind];
    this.#accounts.set(clientId, { ...account, [field]: credentialsOf(account, kind).map((c) => (c.id === id ? { ...c, lastUsedAt: at } : c)) });
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
  return { id: secret.id, hash: secret.hash, createdAt: secret.createdAt, lastUsedAt: null, revokedAt: null, ...expiryOf(secret.expiresAt) };
}

/** `expiresAt` as records carry it: present only for a credential that expires (absent: never). */
function expiryOf(expiresAt: Date | null | undefined): { expiresAt?: Date } {
  return expiresAt ? { expiresAt } : {};
}

function copyKey(key: KeyRecord): KeyRecord {
  return { ...key, publicKey: { ...key.publicKey } };
}

/** A copy of a credential the caller may mutate: a key's public key is an object of its own. */
function copyCredential<K extends CredentialKindName>(kind: K, credential: CredentialRecords[K]): CredentialRecords[K] {
  return (kind === 'key' ? copyKey(credential as KeyRecord) : { ...credential }) as CredentialRecords[K];
}

function copyAccount(account: AccountRecord): AccountRecord {
  return {
    ...account,
    scopes: [...account.scopes],
    resources: [...(account.resources ?? [])],
    secrets: account.secrets.map((s) => ({ ...s })),
    keys: keysOf(account).map(copyKey),
    federated: federatedOf(account).map((c) => ({ ...c })),
  };
}
