/**
 * A store whose infrastructure is down: every method rejects, as a database that cannot be reached
 * would. The HTTP layer must answer 503 `temporarily_unavailable` and never let a request through.
 */
import type { AccountRecord, AccountStore, SecretRecord } from '../../src/index.js';

export class StoreDownError extends Error {
  constructor(method: string) {
    super(`store unreachable (${method})`);
    this.name = 'StoreDownError';
  }
}

export class FailingStore implements AccountStore {
  /** Method names in call order, so a test can see the store was consulted. */
  readonly calls: string[] = [];

  #fail(method: string): Promise<never> {
    this.calls.push(method);
    return Promise.reject(new StoreDownError(method));
  }

  init(): Promise<void> {
    return this.#fail('init');
  }
  createAccount(): Promise<AccountRecord> {
    return this.#fail('createAccount');
  }
  findAccount(): Promise<AccountRecord | undefined> {
    return this.#fail('findAccount');
  }
  listAccounts(): Promise<AccountRecord[]> {
    return this.#fail('listAccounts');
  }
  setAccountEnabled(): Promise<AccountRecord | undefined> {
    return this.#fail('setAccountEnabled');
  }
  addSecret(): Promise<SecretRecord | undefined> {
    return this.#fail('addSecret');
  }
  revokeSecret(): Promise<SecretRecord | undefined> {
    return this.#fail('revokeSecret');
  }
  recordSecretUse(): Promise<void> {
    return this.#fail('recordSecretUse');
  }
  watch(): Promise<() => Promise<void>> {
    return this.#fail('watch');
  }
}
