/**
 * A store that passes every required call to an inner store: the base of the test stores that change
 * one behaviour of a real store (no `watch`, slow reads). Optional methods are the subclass's choice.
 */
import type { AccountRecord, AccountStore, NewAccountRecord, NewSecretRecord, SecretRecord, AddSecretOptions, AddSecretResult } from '../../src/index.js';

export class ForwardingStore implements AccountStore {
  constructor(readonly inner: AccountStore) {}
  createAccount(input: NewAccountRecord): Promise<AccountRecord> {
    return this.inner.createAccount(input);
  }
  findAccount(clientId: string): Promise<AccountRecord | undefined> {
    return this.inner.findAccount(clientId);
  }
  listAccounts(): Promise<AccountRecord[]> {
    return this.inner.listAccounts();
  }
  setAccountEnabled(clientId: string, enabled: boolean): Promise<AccountRecord | undefined> {
    return this.inner.setAccountEnabled(clientId, enabled);
  }
  addSecret(clientId: string, secret: NewSecretRecord, options: AddSecretOptions): Promise<AddSecretResult> {
    return this.inner.addSecret(clientId, secret, options);
  }
  revokeSecret(clientId: string, secretId: string, at: Date): Promise<SecretRecord | undefined> {
    return this.inner.revokeSecret(clientId, secretId, at);
  }
  recordSecretUse(clientId: string, secretId: string, at: Date): Promise<void> {
    return this.inner.recordSecretUse(clientId, secretId, at);
  }
}
