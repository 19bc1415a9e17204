/**
 * A store whose `findAccount` answers are held until the test lets them go: a slow database, without
 * sleeping. A held read runs on the inner store when it is called (like a query that ran at once and
 * whose answer is slow to come back) and delivers that answer when released, so a change made
 * meanwhile is not in it. The inner store is a MemoryAccountStore by default, or any store (a real
 * PostgreSQL one, say); its change announcements (and change feed states) are passed on, the
 * announcements recorded in `announced`.
 */
import { MemoryAccountStore, type AccountRecord, type AccountStore } from '../../src/index.js';
import { ForwardingStore } from './forwarding-store.js';

/** One `findAccount` call whose answer is held. */
export class HeldRead {
  #settle: { release: () => void; fail: (error: Error) => void } | undefined;
  readonly answer: Promise<AccountRecord | undefined>;
  /** Settles once the inner store has answered (the answer is then what the store held at that time). */
  readonly snapshotTaken: Promise<unknown>;

  constructor(
    readonly clientId: string,
    snapshot: Promise<AccountRecord | undefined>,
  ) {
    this.snapshotTaken = snapshot.catch(() => undefined);
    this.answer = new Promise((resolve, reject) => {
      this.#settle = { release: () => resolve(snapshot), fail: reject };
    });
  }

  /** Delivers the snapshot taken when the read was called. */
  release(): void {
    this.#settle!.release();
  }

  /** Makes the read fail, as a database error would. */
  fail(error: Error): void {
    this.#settle!.fail(error);
  }
}

export class GatedStore extends ForwardingStore {
  /** Number of `findAccount` calls so far. */
  findCalls = 0;
  /** While true, every new `findAccount` answer is held (see {@link GatedStore.held}). */
  holding = false;
  /** Held reads, oldest first, including released ones. */
  readonly held: HeldRead[] = [];
  /** Client IDs the inner store announced as changed, in order. */
  readonly announced: string[] = [];
  readonly init?: AccountStore['init'];
  readonly close?: AccountStore['close'];
  readonly watch?: AccountStore['watch'];
  #waiters: { count: number; resolve: () => void }[] = [];

  /** With `watch: false` the store cannot announce changes (the 500 ms cache bound applies). */
  constructor(inner: AccountStore = new MemoryAccountStore(), options: { watch?: boolean } = {}) {
    super(inner);
    const { init, close, watch } = inner;
    if (init) this.init = () => init.call(inner);
    if (close) this.close = () => close.call(inner);
    if (watch && options.watch !== false) {
      this.watch = (listener, watchOptions) =>
        watch.call(
          inner,
          (clientId) => {
            listener(clientId);
            this.announced.push(clientId);
          },
          watchOptions,
        );
    }
  }

  /** Resolves once `count` reads have been held in total. */
  heldReads(count: number): Promise<HeldRead[]> {
    return new Promise((resolve) => {
      const done = () => resolve(this.held.slice(0, count));
      if (this.held.length >= count) done();
      else this.#waiters.push({ count, resolve: done });
    });
  }

  override findAccount(clientId: string): Promise<AccountRecord | undefined> {
    this.findCalls++;
    const snapshot = super.findAccount(clientId);
    if (!this.holding) return snapshot;
    const read = new HeldRead(clientId, snapshot);
    this.held.push(read);
    this.#waiters = this.#waiters.filter((waiter) => {
      if (this.held.length < waiter.count) return true;
      waiter.resolve();
      return false;
    });
    return read.answer;
  }
}
