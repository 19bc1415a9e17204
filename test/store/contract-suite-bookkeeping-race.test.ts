/**
 * @module contract-suite-bookkeeping-race.test
 * The contract suite (src/testing) must refuse a store whose bookkeeping writes (`recordSecretUse`,
 * called on every token request) can undo a revocation or a disable made at the same time. The
 * library relies on a revocation sticking (CONTRACT §3: a revoked secret or disabled account stops
 * working within 1 s and stays stopped). A host store that follows the shape of the writing-a-store
 * template (read the account, change one secret, write the account back) on an asynchronous database,
 * with its adds and revocations atomic but its bookkeeping unlocked, loses such a revocation: the
 * use writes back the secret as it read it, live again.
 */
import { describe, expect, it } from 'vitest';
import type { AccountRecord, AccountStore, NewAccountRecord, NewSecretRecord, SecretRecord } from '../../src/store/account-store.js';
import { describeAccountStore } from '../../src/testing/index.js';
import { raceBookkeeping } from '../../src/testing/contract-fixtures.js';

/** An account store on an asynchronous document database: one document per account. */
class DocumentAccountStore implements AccountStore {
  readonly #documents = new Map<string, AccountRecord>();
  readonly #locks = new Map<string, Promise<unknown>>();

  async #get(clientId: string): Promise<AccountRecord | undefined> {
    await new Promise((resolve) => setImmediate(resolve));
    const document = this.#documents.get(clientId);
    return document && structuredClone(document);
  }

  async #put(account: AccountRecord): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    this.#documents.set(account.clientId, structuredClone(account));
  }

  /** The document's lock: what the atomic methods (create, add, revoke, enable) hold. */
  #locked<T>(clientId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(clientId) ?? Promise.resolve();
    const next = previous.then(work, work);
    this.#locks.set(clientId, next.catch(() => undefined));
    return next;
  }

  async createAccount(input: NewAccountRecord): Promise<AccountRecord> {
    return this.#locked(input.clientId, async () => {
      if (await this.#get(input.clientId)) throw new Error(`client ID ${input.clientId} already exists`);
      const { secret, ...fields } = input;
      const account: AccountRecord = { ...fields, scopes: [...input.scopes], enabled: true, secrets: [newSecret(secret)], keys: [] };
      await this.#put(account);
      return structuredClone(account);
    });
  }

  findAccount(clientId: string): Promise<AccountRecord | undefined> {
    return this.#get(clientId);
  }

  async listAccounts(filter: { clientAccountId?: string | null } = {}): Promise<AccountRecord[]> {
    await new Promise((resolve) => setImmediate(resolve));
    const all = [...this.#documents.values()].map((account) => structuredClone(account));
    return filter.clientAccountId === undefined ? all : all.filter((account) => account.clientAccountId === filter.clientAccountId);
  }

  setAccountEnabled(clientId: string, enabled: boolean): Promise<AccountRecord | undefined> {
    return this.#locked(clientId, async () => {
      const account = await this.#get(clientId);
      if (!account) return undefined;
      const updated = { ...account, enabled };
      await this.#put(updated);
      return updated;
    });
  }

  addSecret(clientId: string, secret: NewSecretRecord, options: { maxLiveCredentials: number }): Promise<SecretRecord | undefined | 'limit_reached'> {
    return this.#locked(clientId, async () => {
      const account = await this.#get(clientId);
      if (!account) return undefined;
      if (account.secrets.filter((s) => s.revokedAt === null).length >= options.maxLiveCredentials) return 'limit_reached';
      const added = newSecret(secret);
      await this.#put({ ...account, secrets: [...account.secrets, added] });
      return { ...added };
    });
  }

  revokeSecret(clientId: string, secretId: string, at: Date): Promise<SecretRecord | undefined> {
    return this.#locked(clientId, async () => {
      const account = await this.#get(clientId);
      const secret = account?.secrets.find((s) => s.id === secretId);
      if (!account || !secret) return undefined;
      if (secret.revokedAt) return secret;
      const revoked = { ...secret, revokedAt: at };
      await this.#put({ ...account, secrets: account.secrets.map((s) => (s.id === secretId ? revoked : s)) });
      return revoked;
    });
  }

  /**
   * @param slowBookkeeping a recording reads the account at once and writes it back a millisecond
   *   later (a slow write): recordings started after the changes then write after the stale ones and
   *   hide them, unless the suite looks before those later recordings run.
   */
  constructor(private readonly slowBookkeeping = false) {}

  /** Bookkeeping, so left unlocked: read the account, set the secret's lastUsedAt, write the account back. */
  async recordSecretUse(clientId: string, secretId: string, at: Date): Promise<void> {
    const account = this.slowBookkeeping ? structuredClone(this.#documents.get(clientId)) : await this.#get(clientId);
    if (!account) return;
    if (this.slowBookkeeping) await new Promise((resolve) => setTimeout(resolve, 1));
    await this.#put({ ...account, secrets: account.secrets.map((s) => (s.id === secretId ? { ...s, lastUsedAt: at } : s)) });
  }
}

function newSecret(secret: NewSecretRecord): SecretRecord {
  return { id: secret.id, hash: secret.hash, createdAt: secret.createdAt, lastUsedAt: null, revokedAt: null };
}

/** Runs the contract suite on a store, outside vitest's collector: the names of the tests that failed. */
async function failedContractTests(makeStore: () => AccountStore): Promise<string[]> {
  interface Scope {
    readonly before: (() => Promise<void>)[];
    readonly after: (() => Promise<void>)[];
  }
  const tests: { name: string; scopes: Scope[]; run: () => Promise<void> }[] = [];
  const stack: Scope[] = [];
  describeAccountStore('document store', async () => ({ store: makeStore(), cleanup: async () => {} }), {
    describe: (_name, body) => {
      stack.push({ before: [], after: [] });
      body();
      stack.pop();
    },
    it: (name, run) => tests.push({ name, scopes: [...stack], run }),
    expect: (actual) => expect(actual),
    beforeEach: (hook) => stack.at(-1)!.before.push(hook),
    afterEach: (hook) => stack.at(-1)!.after.push(hook),
  });
  const failed: string[] = [];
  for (const test of tests) {
    try {
      for (const scope of test.scopes) for (const hook of scope.before) await hook();
      await test.run();
    } catch {
      failed.push(test.name);
    } finally {
      for (const scope of [...test.scopes].reverse()) for (const hook of scope.after) await hook().catch(() => undefined);
    }
  }
  return failed;
}

describe('the store contract suite', () => {
  it('a store whose recordSecretUse can write back a secret revoked meanwhile really loses the revocation', async () => {
    const store = new DocumentAccountStore();
    const now = new Date();
    const account = await store.createAccount({
      clientId: 'svc_race', name: 'race', clientAccountId: null, scopes: [], createdAt: now,
      secret: { id: 'sec_race', hash: 'h', createdAt: now },
    });
    const revokedAt = new Date(now.getTime() + 1);
    const revoking = store.revokeSecret(account.clientId, 'sec_race', revokedAt);
    await null; // the revocation has read the account
    await Promise.all([revoking, store.recordSecretUse(account.clientId, 'sec_race', now)]);
    expect((await store.findAccount(account.clientId))?.secrets[0]?.revokedAt).toBeNull();
  });

  it('refuses that store: at least one of its tests fails on it', async () => {
    const failed = await failedContractTests(() => new DocumentAccountStore());
    expect(failed).toEqual(['recordSecretUse and recordSecretDigest racing revokeSecret and setAccountEnabled never undo them']);
  });

  // A store whose stale write lands a millisecond late: recordings started once the changes are done
  // write the revoked secret back after it, so a suite that looks only at the end sees it revoked.
  it('refuses that store when its stale writes land late, before later recordings hide them', async () => {
    const failed = await failedContractTests(() => new DocumentAccountStore(true));
    expect(failed).toEqual(['recordSecretUse and recordSecretDigest racing revokeSecret and setAccountEnabled never undo them']);
  });

  it('a recording that fails while the changes run fails the race, and leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const failing = () => new Promise<void>((_resolve, reject) => setImmediate(() => reject(new Error('record failed'))));
      const slowChange = () => new Promise<void>((resolve) => setTimeout(resolve, 20));
      await expect(raceBookkeeping(() => [failing()], slowChange, async () => undefined)).rejects.toThrow('record failed');
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });
});
