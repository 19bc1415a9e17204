/**
 * A store that cannot announce changes (no `watch`), like most stores a host writes: instances
 * sharing it learn of a revocation only when their cached account expires.
 */
import { MemoryAccountStore, type AccountStore } from '../../src/index.js';

export class WatchlessStore implements AccountStore {
  constructor(readonly inner: MemoryAccountStore = new MemoryAccountStore()) {}
  createAccount: AccountStore['createAccount'] = (input) => this.inner.createAccount(input);
  findAccount: AccountStore['findAccount'] = (clientId) => this.inner.findAccount(clientId);
  listAccounts: AccountStore['listAccounts'] = () => this.inner.listAccounts();
  setAccountEnabled: AccountStore['setAccountEnabled'] = (clientId, enabled) => this.inner.setAccountEnabled(clientId, enabled);
  addSecret: AccountStore['addSecret'] = (clientId, secret) => this.inner.addSecret(clientId, secret);
  revokeSecret: AccountStore['revokeSecret'] = (clientId, secretId, at) => this.inner.revokeSecret(clientId, secretId, at);
  recordSecretUse: AccountStore['recordSecretUse'] = (clientId, secretId, at) => this.inner.recordSecretUse(clientId, secretId, at);
}
