/**
 * A store that cannot announce changes (no `watch`), like most stores a host writes: instances
 * sharing it learn of a revocation only when their cached account expires.
 */
import { MemoryAccountStore } from '../../src/index.js';
import { ForwardingStore } from './forwarding-store.js';

export class WatchlessStore extends ForwardingStore {
  constructor(override readonly inner: MemoryAccountStore = new MemoryAccountStore()) {
    super(inner);
  }
}
