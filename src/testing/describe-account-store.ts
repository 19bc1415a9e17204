/**
 * @module describe-account-store
 * The contract suite every {@link AccountStore} must pass, checking only what the interface documents,
 * through the interface. It imports no test framework: it registers its tests with the functions it
 * is given (vitest's or Jest's), so it loads from CommonJS and ES modules alike.
 */
import type { AccountStore } from '../store/account-store.js';
import { resolveTestApi, skipRunningTest, type AccountStoreTestApi } from './account-store-test-api.js';
import { cap, IdFactory, raceBookkeeping, waitFor } from './contract-fixtures.js';
import { describeAccountPolicy } from './describe-account-policy.js';
import { describeAccountResources } from './describe-account-resources.js';
import { describeCredentialExpiry } from './describe-credential-expiry.js';
import { describeFederatedCredentials } from './describe-federated-credentials.js';
import { describeFederatedClaims } from './describe-federated-claims.js';
import { describeKeyCredentials } from './describe-key-credentials.js';
import { describeSecretCap } from './describe-secret-cap.js';
import { describeSecretDigests } from './describe-secret-digests.js';
import { describeTokenDenyList } from './describe-token-deny-list.js';
import { supportsKeyCredentials, supportsFederatedCredentials } from '../store/credential-kinds.js';

/** Room enough for every secret the other tests add: they do not test the cap. */
const ROOM = cap(100);

/**
 * A store to test, and how to dispose of what it left behind once it is closed.
 *
 * @example
 * ```ts
 * const fixture: AccountStoreFixture = { store: new MemoryAccountStore(), cleanup: async () => {} }
 * ```
 */
export interface AccountStoreFixture {
  readonly store: AccountStore;
  /** Runs after `store.close?.()`: drop the database, delete the file... */
  readonly cleanup: () => Promise<void>;
}

/**
 * Registers the contract suite for a store with your test framework. `makeStore` runs before each
 * test and should return a fresh store; the suite calls `store.init?.()` itself, then `store.close?.()`
 * and `cleanup()` after the test. Tests use their own random IDs and only look at the accounts they
 * created, so a shared, non-empty database also works. `watch` tests run only when the store has
 * `watch` (vitest reports them skipped otherwise; Jest, which cannot skip a running test, passes them).
 *
 * `api` is the test framework's `{ describe, it, expect, beforeEach, afterEach }`: pass vitest's
 * imports, or Jest's from `@jest/globals`. Without it the suite uses the globals that Jest and vitest
 * with `globals: true` define, and throws a `TypeError` saying what to pass when there are none.
 *
 * @example
 * ```ts
 * import { afterEach, beforeEach, describe, expect, it } from 'vitest'
 * import { describeAccountStore } from 'express-service-accounts/testing'
 *
 * describeAccountStore('RedisAccountStore', async () => {
 *   const store = new RedisAccountStore({ url: process.env.REDIS_URL, prefix: `test:${Date.now()}:` })
 *   return { store, cleanup: () => flushPrefix(store) }
 * }, { describe, it, expect, beforeEach, afterEach })
 * ```
 */
export function describeAccountStore(
  name: string,
  makeStore: () => Promise<AccountStoreFixture>,
  api?: AccountStoreTestApi,
): void {
  const { describe, it, expect, beforeEach, afterEach } = resolveTestApi(api);
  describe(`${name} (AccountStore contract)`, () => {
    let store: AccountStore;
    let fixture: AccountStoreFixture | undefined;
    const ids = new IdFactory();

    beforeEach(async () => {
      fixture = await makeStore();
      store = fixture.store;
      await store.init?.();
    });

    afterEach(async () => {
      const current = fixture;
      fixture = undefined; // a failed makeStore() must not close the previous store twice
      if (!current) return;
      try {
        await current.store.close?.();
      } finally {
        await current.cleanup();
      }
    });

    it('createAccount stores every field and returns the account as findAccount does', async () => {
      const input = ids.account({ scopes: ['jobs:write', 'candidates:read', 'activity:read'] });
      const created = await store.createAccount(input);
      const expected = {
        clientId: input.clientId,
        name: input.name,
        clientAccountId: input.clientAccountId,
        scopes: ['jobs:write', 'candidates:read', 'activity:read'],
        enabled: true,
        createdAt: input.createdAt,
        secrets: [{ ...input.secret, lastUsedAt: null, revokedAt: null }],
        // A store with key credentials returns `keys`; one without may leave it out.
        ...((supportsKeyCredentials(store) || created.keys !== undefined) && { keys: [] }),
        // Likewise `federated` for a store with federated credentials.
        ...((supportsFederatedCredentials(store) || created.federated !== undefined) && { federated: [] }),
        // Likewise `resources` for a store with account resources.
        ...((typeof store.setAccountResources === 'function' || created.resources !== undefined) && { resources: [] }),
        // Likewise the token policy for a store with account policies (the server's lifetime, no DPoP required).
        ...((typeof store.setAccountPolicy === 'function' || created.accessTokenLifetime !== undefined) && { accessTokenLifetime: null }),
        ...((typeof store.setAccountPolicy === 'function' || created.dpopBoundAccessTokens !== undefined) && { dpopBoundAccessTokens: false }),
      };
      expect(created).toEqual(expected);
      const found = await store.findAccount(input.clientId);
      expect(found).toEqual(expected);
      expect(found?.createdAt).toBeInstanceOf(Date);
      expect(found?.createdAt.getTime()).toBe(input.createdAt.getTime());
      expect(found?.secrets[0]?.createdAt).toBeInstanceOf(Date);
      expect(found?.secrets[0]?.createdAt.getTime()).toBe(input.secret.createdAt.getTime());
    });

    it('createAccount keeps a null client account ID and empty scopes', async () => {
      const input = ids.account({ clientAccountId: null, scopes: [] });
      await store.createAccount(input);
      const found = await store.findAccount(input.clientId);
      expect(found?.clientAccountId).toBeNull();
      expect(found?.scopes).toEqual([]);
    });

    it('createAccount rejects an existing client ID and keeps the first account', async () => {
      const first = ids.account();
      await store.createAccount(first);
      const duplicate = { ...ids.account(), clientId: first.clientId };
      await expect(store.createAccount(duplicate)).rejects.toBeDefined();
      const found = await store.findAccount(first.clientId);
      expect(found?.name).toBe(first.name);
      expect(found?.secrets.map((s) => s.id)).toEqual([first.secret.id]);
    });

    it('findAccount resolves undefined for an unknown client ID', async () => {
      expect(await store.findAccount(ids.clientId())).toBeUndefined();
    });

    it('listAccounts returns every account oldest first, each with its secrets oldest first', async () => {
      const a = await store.createAccount(ids.account());
      const b = await store.createAccount(ids.account());
      const extra = ids.secret();
      await store.addSecret(a.clientId, extra, ROOM);
      const c = await store.createAccount(ids.account());
      const mine = (await store.listAccounts()).filter((x) => [a, b, c].some((y) => y.clientId === x.clientId));
      expect(mine.map((x) => x.clientId)).toEqual([a.clientId, b.clientId, c.clientId]);
      expect(mine[0]?.secrets.map((s) => s.id)).toEqual([a.secrets[0]?.id, extra.id]);
      expect(mine[1]).toEqual(b);
    });

    it('listAccounts({ clientAccountId }) returns every account of that client account, oldest first (others may come too)', async () => {
      const clientAccountId = ids.account().clientAccountId!;
      const a = await store.createAccount(ids.account({ clientAccountId }));
      const other = await store.createAccount(ids.account());
      const b = await store.createAccount(ids.account({ clientAccountId }));
      const listed = await store.listAccounts({ clientAccountId });
      // A store may ignore the filter: its callers keep only the accounts they asked for.
      expect(listed.filter((x) => x.clientAccountId === clientAccountId)).toEqual([a, b]);
      expect((await store.listAccounts()).some((x) => x.clientId === other.clientId)).toBe(true);
    });

    it('setAccountEnabled disables and re-enables, returning the updated account', async () => {
      const account = await store.createAccount(ids.account());
      const disabled = await store.setAccountEnabled(account.clientId, false);
      expect(disabled).toEqual({ ...account, enabled: false });
      expect((await store.findAccount(account.clientId))?.enabled).toBe(false);
      const enabled = await store.setAccountEnabled(account.clientId, true);
      expect(enabled).toEqual(account);
      expect((await store.findAccount(account.clientId))?.enabled).toBe(true);
    });

    it('setAccountEnabled resolves undefined for an unknown client ID', async () => {
      const clientId = ids.clientId();
      expect(await store.setAccountEnabled(clientId, false)).toBeUndefined();
      expect(await store.findAccount(clientId)).toBeUndefined();
    });

    it('addSecret stores the secret after the existing ones and returns it', async () => {
      const account = await store.createAccount(ids.account());
      const secret = ids.secret();
      const added = await store.addSecret(account.clientId, secret, ROOM);
      const expected = { ...secret, lastUsedAt: null, revokedAt: null };
      expect(added).toEqual(expected);
      const found = await store.findAccount(account.clientId);
      expect(found?.secrets).toEqual([...account.secrets, expected]);
    });

    it('addSecret resolves undefined for an unknown client ID and creates nothing', async () => {
      const clientId = ids.clientId();
      expect(await store.addSecret(clientId, ids.secret(), ROOM)).toBeUndefined();
      expect(await store.findAccount(clientId)).toBeUndefined();
    });

    it('revokeSecret sets revokedAt on that secret only', async () => {
      const account = await store.createAccount(ids.account());
      const other = ids.secret();
      await store.addSecret(account.clientId, other, ROOM);
      const target = account.secrets[0];
      const at = ids.time();
      const revoked = await store.revokeSecret(account.clientId, target?.id ?? '', at);
      expect(revoked).toEqual({ ...target, revokedAt: at });
      const found = await store.findAccount(account.clientId);
      expect(found?.secrets[0]?.revokedAt?.getTime()).toBe(at.getTime());
      expect(found?.secrets[1]?.revokedAt).toBeNull();
    });

    it('revokeSecret on a revoked secret keeps the first revokedAt', async () => {
      const account = await store.createAccount(ids.account());
      const secretId = account.secrets[0]?.id ?? '';
      const first = ids.time();
      await store.revokeSecret(account.clientId, secretId, first);
      const again = await store.revokeSecret(account.clientId, secretId, ids.time());
      expect(again?.revokedAt?.getTime()).toBe(first.getTime());
      const found = await store.findAccount(account.clientId);
      expect(found?.secrets[0]?.revokedAt?.getTime()).toBe(first.getTime());
    });

    it('revokeSecret resolves undefined for an unknown account, an unknown secret, or a secret of another account', async () => {
      const a = await store.createAccount(ids.account());
      const b = await store.createAccount(ids.account());
      const secretOfA = a.secrets[0]?.id ?? '';
      expect(await store.revokeSecret(ids.clientId(), secretOfA, ids.time())).toBeUndefined();
      expect(await store.revokeSecret(a.clientId, ids.secretId(), ids.time())).toBeUndefined();
      expect(await store.revokeSecret(b.clientId, secretOfA, ids.time())).toBeUndefined();
      expect((await store.findAccount(a.clientId))?.secrets[0]?.revokedAt).toBeNull();
      expect(await store.findAccount(b.clientId)).toEqual(b);
    });

    it('recordSecretUse sets lastUsedAt of that secret only', async () => {
      const account = await store.createAccount(ids.account());
      const other = ids.secret();
      await store.addSecret(account.clientId, other, ROOM);
      const bystander = await store.createAccount(ids.account());
      const secretId = account.secrets[0]?.id ?? '';
      const first = ids.time();
      await store.recordSecretUse(account.clientId, secretId, first);
      let found = await store.findAccount(account.clientId);
      expect(found?.secrets[0]?.lastUsedAt).toBeInstanceOf(Date);
      expect(found?.secrets[0]?.lastUsedAt?.getTime()).toBe(first.getTime());
      expect(found?.secrets[0]?.revokedAt).toBeNull();
      expect(found?.secrets[1]?.lastUsedAt).toBeNull();
      expect(await store.findAccount(bystander.clientId)).toEqual(bystander);
      const later = ids.time();
      await store.recordSecretUse(account.clientId, secretId, later);
      found = await store.findAccount(account.clientId);
      expect(found?.secrets[0]?.lastUsedAt?.getTime()).toBe(later.getTime());
    });

    // The library records a use on every token request, while an operator may revoke or disable at the
    // same moment: bookkeeping must never write back a secret or an account as it was before.
    it('recordSecretUse and recordSecretDigest racing revokeSecret and setAccountEnabled never undo them', async () => {
      const account = await store.createAccount(ids.account());
      const secretId = account.secrets[0]?.id ?? '';
      const at = ids.time();
      let digests = 0;
      await raceBookkeeping(
        () => [
          store.recordSecretUse(account.clientId, secretId, ids.time()),
          ...(store.recordSecretDigest ? [store.recordSecretDigest(account.clientId, secretId, `digest-${digests++}`)] : []),
        ],
        () => Promise.all([store.revokeSecret(account.clientId, secretId, at), store.setAccountEnabled(account.clientId, false)]),
        async () => {
          const found = await store.findAccount(account.clientId);
          expect(found?.enabled).toBe(false);
          expect(found?.secrets[0]?.revokedAt?.getTime()).toBe(at.getTime());
        },
      );
    });

    it('returns copies: mutating a returned record does not change the store', async () => {
      const input = ids.account({ scopes: ['jobs:write'] });
      const created = await store.createAccount(input);
      mutable(created.scopes).push('admin');
      mutable(created.secrets).pop();
      const found = await store.findAccount(input.clientId);
      if (!found) throw new Error('account not found');
      mutable(found.scopes).length = 0;
      mutable(found.secrets).push({ ...ids.secret(), lastUsedAt: null, revokedAt: null });
      const listed = await store.listAccounts();
      listed.length = 0;
      const again = await store.findAccount(input.clientId);
      expect(again?.scopes).toEqual(['jobs:write']);
      expect(again?.secrets.map((s) => s.id)).toEqual([input.secret.id]);
      expect((await store.listAccounts()).some((a) => a.clientId === input.clientId)).toBe(true);
    });

    describeSecretCap(() => store, ids, { it, expect });

    describeSecretDigests(() => store, ids, { describe, it, expect });

    describeAccountResources(() => store, ids, { describe, it, expect });

    describeAccountPolicy(() => store, ids, { describe, it, expect });
    describeCredentialExpiry(() => store, ids, { describe, it, expect });

    describeKeyCredentials(() => store, ids, { describe, it, expect });

    describeFederatedCredentials(() => store, ids, { describe, it, expect });

    describeFederatedClaims(() => store, ids, { describe, it, expect });

    describeTokenDenyList(() => store, ids, { it, expect });

    describe('watch', () => {
      // The test functions read vitest's test context from `arguments` (see skipRunningTest).
      it('calls the listener with the client ID after each change', async function () {
        if (!store.watch) return skipRunningTest(arguments, 'the store has no watch');
        const calls: string[] = [];
        const stop = await store.watch((clientId) => calls.push(clientId));
        try {
          const input = ids.account();
          const count = (): number => calls.filter((id) => id === input.clientId).length;
          // A store may call more than once per change; each change must bring at least one call.
          await store.createAccount(input);
          await waitFor(() => count() >= 1, 'createAccount');
          const secret = ids.secret();
          await store.addSecret(input.clientId, secret, ROOM);
          await waitFor(() => count() >= 2, 'addSecret');
          await store.revokeSecret(input.clientId, secret.id, ids.time());
          await waitFor(() => count() >= 3, 'revokeSecret');
          await store.setAccountEnabled(input.clientId, false);
          await waitFor(() => count() >= 4, 'setAccountEnabled');
        } finally {
          await stop();
        }
      });

      it('stops calling a listener once its unsubscribe function resolved', async function () {
        if (!store.watch) return skipRunningTest(arguments, 'the store has no watch');
        const stopped: string[] = [];
        const live: string[] = [];
        const stop = await store.watch((clientId) => stopped.push(clientId));
        const stopLive = await store.watch((clientId) => live.push(clientId));
        try {
          await stop();
          const a = await store.createAccount(ids.account());
          await waitFor(() => live.includes(a.clientId), 'createAccount seen by the other listener');
          const b = await store.createAccount(ids.account());
          await waitFor(() => live.includes(b.clientId), 'second createAccount seen by the other listener');
          expect(stopped.filter((id) => id === a.clientId || id === b.clientId)).toEqual([]);
        } finally {
          await stopLive();
        }
      });
    });
  });
}

/** Records are readonly by type; the copy test mutates them on purpose. */
function mutable<T>(array: readonly T[]): T[] {
  return array as T[];
}
