/**
 * @module describe-account-store.test
 * The contract suite itself (src/testing): which test functions it registers with (the ones passed,
 * else the globals, else a TypeError saying what to pass), and how it skips the `watch` tests for a
 * store without `watch`.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type {
  AccountRecord,
  AccountStore,
  NewAccountRecord,
  NewSecretRecord,
  SecretRecord,
  AddSecretOptions,
  AddSecretResult,
} from '../../src/store/account-store.js';
import { MemoryAccountStore } from '../../src/store/memory-account-store.js';
import { skipRunningTest } from '../../src/testing/account-store-test-api.js';
import { describeAccountStore, type AccountStoreTestApi } from '../../src/testing/index.js';

const TEST_FUNCTIONS = ['describe', 'it', 'expect', 'beforeEach', 'afterEach'] as const;
const makeStore = async () => ({ store: new MemoryAccountStore(), cleanup: async () => {} });

/** Test functions that only record what the suite registers. */
class RecordingTestApi implements AccountStoreTestApi {
  readonly suites: string[] = [];
  readonly tests: string[] = [];
  readonly hooks: string[] = [];
  readonly describe = (name: string, body: () => void): void => {
    this.suites.push(name);
    body();
  };
  readonly it = (name: string): void => {
    this.tests.push(name);
  };
  readonly expect = expect;
  readonly beforeEach = (): void => {
    this.hooks.push('beforeEach');
  };
  readonly afterEach = (): void => {
    this.hooks.push('afterEach');
  };
}

/** A store with every method but `watch`, as a host's own store may be. */
class WatchlessAccountStore implements AccountStore {
  readonly #inner = new MemoryAccountStore();
  createAccount(input: NewAccountRecord): Promise<AccountRecord> {
    return this.#inner.createAccount(input);
  }
  findAccount(clientId: string): Promise<AccountRecord | undefined> {
    return this.#inner.findAccount(clientId);
  }
  listAccounts(): Promise<AccountRecord[]> {
    return this.#inner.listAccounts();
  }
  setAccountEnabled(clientId: string, enabled: boolean): Promise<AccountRecord | undefined> {
    return this.#inner.setAccountEnabled(clientId, enabled);
  }
  addSecret(clientId: string, secret: NewSecretRecord, options: AddSecretOptions): Promise<AddSecretResult> {
    return this.#inner.addSecret(clientId, secret, options);
  }
  revokeSecret(clientId: string, secretId: string, at: Date): Promise<SecretRecord | undefined> {
    return this.#inner.revokeSecret(clientId, secretId, at);
  }
  recordSecretUse(clientId: string, secretId: string, at: Date): Promise<void> {
    return this.#inner.recordSecretUse(clientId, secretId, at);
  }
}

describe('describeAccountStore: test functions', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('registers with the test functions passed', () => {
    const api = new RecordingTestApi();
    describeAccountStore('MyStore', makeStore, api);
    expect(api.suites).toEqual(['MyStore (AccountStore contract)', 'verified secret digests', 'account resources', 'account policy', 'credential expiry', 'key credentials', 'federated credentials', 'federated claim conditions', 'watch']);
    expect(api.tests).toContain('findAccount resolves undefined for an unknown client ID');
    expect(api.tests).toContain('stops calling a listener once its unsubscribe function resolved');
    expect(api.hooks).toEqual(['beforeEach', 'afterEach']);
  });

  it('registers with the global test functions when none are passed (Jest, vitest `globals: true`)', () => {
    const api = new RecordingTestApi();
    for (const name of TEST_FUNCTIONS) vi.stubGlobal(name, api[name]);
    describeAccountStore('MyStore', makeStore);
    expect(api.suites).toEqual(['MyStore (AccountStore contract)', 'verified secret digests', 'account resources', 'account policy', 'credential expiry', 'key credentials', 'federated credentials', 'federated claim conditions', 'watch']);
    expect(api.tests.length).toBeGreaterThan(10);
  });

  it('without test functions or globals, throws a TypeError saying what to pass', () => {
    for (const name of TEST_FUNCTIONS) expect(name in globalThis, `global ${name}`).toBe(false);
    expect(() => describeAccountStore('MyStore', makeStore)).toThrow(
      new TypeError(
        'describeAccountStore: no global describe, it, expect, beforeEach, afterEach (Jest and vitest with ' +
          "`globals: true` define them): pass your test framework's functions as the third argument, e.g. " +
          "with vitest: import { afterEach, beforeEach, describe, expect, it } from 'vitest'; " +
          'describeAccountStore(name, makeStore, { describe, it, expect, beforeEach, afterEach })',
      ),
    );
  });

  it('names the test functions missing from what was passed', () => {
    const partial = { describe, it, expect } as unknown as AccountStoreTestApi;
    expect(() => describeAccountStore('MyStore', makeStore, partial)).toThrow(TypeError);
    expect(() => describeAccountStore('MyStore', makeStore, partial)).toThrow(
      /^describeAccountStore: the test functions passed lack beforeEach, afterEach: pass .* \{ describe, it, expect, beforeEach, afterEach \}\)$/,
    );
  });
});

describe('skipRunningTest', () => {
  function runTest(...args: unknown[]): void {
    const test = function (): void {
      skipRunningTest(arguments, 'the store has no watch');
    };
    Reflect.apply(test, undefined, args);
  }

  it("calls context.skip(note) of vitest's test context, a function object", () => {
    const context = Object.assign(() => {}, { skip: vi.fn() });
    runTest(context);
    expect(context.skip).toHaveBeenCalledWith('the store has no watch');
    const plain = { skip: vi.fn() };
    runTest(plain);
    expect(plain.skip).toHaveBeenCalledWith('the store has no watch');
  });

  it('does nothing without a test context (Jest passes none)', () => {
    expect(() => runTest()).not.toThrow();
    expect(() => runTest({})).not.toThrow();
  });
});

describe('a store without watch', () => {
  const states = new Map<string, string | undefined>();
  afterEach((context) => {
    states.set(context.task.name, context.task.result?.state);
  });

  describeAccountStore('WatchlessAccountStore', async () => ({ store: new WatchlessAccountStore(), cleanup: async () => {} }), {
    describe,
    it,
    expect,
    beforeEach,
    afterEach,
  });

  it('had the watch tests reported skipped', () => {
    expect(states.get('calls the listener with the client ID after each change')).toBe('skip');
    expect(states.get('stops calling a listener once its unsubscribe function resolved')).toBe('skip');
    expect(states.get('findAccount resolves undefined for an unknown client ID')).not.toBe('skip');
  });

  // docs/writing-a-store.md: the key methods are optional; a store without them holds secrets only.
  it('had the key credential tests reported skipped, as it has no key methods', () => {
    expect(states.get('recordKeyUse sets lastUsedAt of that key only')).toBe('skip');
    expect(states.get('consumeAssertionId keeps assertion IDs apart per issuer')).toBe('skip');
  });

  // AccountStore.addFederatedCredential: optional; a store without the federated methods holds none.
  it('had the federated credential tests reported skipped, as it has no federated methods', () => {
    expect(states.get('recordFederatedCredentialUse sets lastUsedAt of that credential only')).toBe('skip');
    expect(states.get('two accounts may trust the same issuer and subject')).toBe('skip');
  });
});
