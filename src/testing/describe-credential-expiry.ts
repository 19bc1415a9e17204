/**
 * @module describe-credential-expiry
 * The contract tests of credential expiry: a store with `keepsCredentialExpiry` stores the
 * `expiresAt` of new secrets (the first one of `createAccount` included), keys and federated
 * credentials, and returns it from `findAccount` and `listAccounts`; a credential given none has none.
 * The store never reads a clock: an expired credential is still live to it (the core refuses it), so it
 * still counts against the cap until revoked. Reported skipped for a store without the flag.
 */
import type { AccountStore } from '../store/account-store.js';
import { supportsFederatedCredentials, supportsKeyCredentials } from '../store/credential-kinds.js';
import { skipRunningTest, type AccountStoreTestApi } from './account-store-test-api.js';
import { cap, type IdFactory } from './contract-fixtures.js';
import { heldTest } from './store-holding.js';

const NO_EXPIRY = 'the store does not keep credential expiry (keepsCredentialExpiry)';

/** A time far enough ahead to be an expiry, and one already past (the store stores either as given). */
const LATER = new Date('2031-03-04T05:06:07.089Z');
const PAST = new Date('2020-01-02T03:04:05.678Z');

/** The ID and expiry of what an add method returned (or what it returned, when no credential). */
const idAndExpiry = (result: unknown): unknown =>
  typeof result === 'object' && result !== null ? { id: (result as { id: unknown }).id, expiresAt: (result as { expiresAt?: unknown }).expiresAt ?? null } : result;

/**
 * Registers the expiry tests in a `describe('credential expiry')` of the enclosing suite, on the store
 * `currentStore()` returns.
 *
 * @example
 * ```ts
 * import { describe, expect, it } from 'vitest'
 * import { IdFactory } from './contract-fixtures.js'
 *
 * describeCredentialExpiry(() => store, new IdFactory(), { describe, it, expect })
 * ```
 */
export function describeCredentialExpiry(
  currentStore: () => AccountStore,
  ids: IdFactory,
  { describe, it, expect }: Pick<AccountStoreTestApi, 'describe' | 'it' | 'expect'>,
): void {
  const expiryStore = (testArguments: IArguments): AccountStore | undefined => {
    const store = currentStore();
    if (store.keepsCredentialExpiry === true) return store;
    skipRunningTest(testArguments, NO_EXPIRY);
    return undefined;
  };

  describe('credential expiry', () => {
    it("createAccount keeps its first secret's expiresAt; findAccount and listAccounts return it", heldTest(expiryStore, async (store) => {
      const input = ids.account();
      const created = await store.createAccount({ ...input, secret: { ...input.secret, expiresAt: LATER } });
      expect(created.secrets[0]?.expiresAt).toEqual(LATER);
      expect((await store.findAccount(input.clientId))?.secrets[0]?.expiresAt).toEqual(LATER);
      const listed = (await store.listAccounts()).find((account) => account.clientId === input.clientId);
      expect(listed?.secrets[0]?.expiresAt).toEqual(LATER);
    }));

    it('addSecret keeps expiresAt (returned, and read back); a secret given none has none', heldTest(expiryStore, async (store) => {
      const account = await store.createAccount(ids.account());
      const expiring = { ...ids.secret(), expiresAt: LATER };
      const stored = await store.addSecret(account.clientId, expiring, cap(5));
      expect(idAndExpiry(stored)).toEqual({ id: expiring.id, expiresAt: LATER });
      const read = await store.findAccount(account.clientId);
      expect(read?.secrets.find((secret) => secret.id === expiring.id)?.expiresAt).toEqual(LATER);
      // "null or absent: never" (SecretRecord.expiresAt)
      expect(read?.secrets[0]?.expiresAt ?? null).toBeNull();
    }));

    it('revoking an expiring secret keeps its expiresAt', heldTest(expiryStore, async (store) => {
      const account = await store.createAccount(ids.account());
      const expiring = { ...ids.secret(), expiresAt: LATER };
      await store.addSecret(account.clientId, expiring, cap(5));
      const revoked = await store.revokeSecret(account.clientId, expiring.id, new Date());
      expect(revoked?.expiresAt).toEqual(LATER);
      expect(revoked?.revokedAt).toBeInstanceOf(Date);
    }));

    it('a secret past its expiresAt still counts against the cap until revoked (the store reads no clock)', heldTest(expiryStore, async (store) => {
      const account = await store.createAccount(ids.account());
      const expired = { ...ids.secret(), expiresAt: PAST };
      expect(idAndExpiry(await store.addSecret(account.clientId, expired, cap(2)))).toEqual({ id: expired.id, expiresAt: PAST });
      expect(await store.addSecret(account.clientId, ids.secret(), cap(2))).toBe('limit_reached');
      await store.revokeSecret(account.clientId, expired.id, new Date());
      const next = ids.secret();
      expect(idAndExpiry(await store.addSecret(account.clientId, next, cap(2)))).toEqual({ id: next.id, expiresAt: null });
    }));

    it('addKey keeps expiresAt', heldTest(expiryStore, async (store, testArguments) => {
      if (!supportsKeyCredentials(store)) return skipRunningTest(testArguments, 'the store has no key credentials');
      const account = await store.createAccount(ids.account());
      const key = { ...ids.key(), expiresAt: LATER };
      expect(idAndExpiry(await store.addKey(account.clientId, key, cap(5)))).toEqual({ id: key.id, expiresAt: LATER });
      expect((await store.findAccount(account.clientId))?.keys?.find((k) => k.id === key.id)?.expiresAt).toEqual(LATER);
    }));

    it('addFederatedCredential keeps expiresAt', heldTest(expiryStore, async (store, testArguments) => {
      if (!supportsFederatedCredentials(store)) return skipRunningTest(testArguments, 'the store has no federated credentials');
      const account = await store.createAccount(ids.account());
      const credential = { ...ids.federated(), expiresAt: LATER };
      expect(idAndExpiry(await store.addFederatedCredential(account.clientId, credential, cap(5)))).toEqual({ id: credential.id, expiresAt: LATER });
      const listed = (await store.listAccounts()).find((a) => a.clientId === account.clientId);
      expect(listed?.federated?.find((c) => c.id === credential.id)?.expiresAt).toEqual(LATER);
    }));

    // AccountStore.findFederatedClients: "When `now` is given, a credential past its `expiresAt` at `now`
    // is left out like a revoked one".
    it('findFederatedClients(issuer, subject, limit, now) leaves out credentials past their expiresAt at now', heldTest(expiryStore, async (store, testArguments) => {
      if (!supportsFederatedCredentials(store)) return skipRunningTest(testArguments, 'the store has no federated credentials');
      const trust = ids.federated();
      const expired = await store.createAccount(ids.account({ createdAt: ids.time() }));
      const live = await store.createAccount(ids.account({ createdAt: ids.time() }));
      await store.addFederatedCredential(expired.clientId, { ...trust, id: ids.federatedId(), expiresAt: PAST }, cap(5));
      await store.addFederatedCredential(live.clientId, { ...trust, id: ids.federatedId(), expiresAt: LATER }, cap(5));
      expect(await store.findFederatedClients(trust.issuer, trust.subject, 10, new Date())).toEqual([live.clientId]);
      // At an instant before either expiry, both; without now, expiry is not looked at.
      expect(await store.findFederatedClients(trust.issuer, trust.subject, 10, new Date(PAST.getTime() - 1))).toEqual([expired.clientId, live.clientId]);
      expect(await store.findFederatedClients(trust.issuer, trust.subject, 10)).toEqual([expired.clientId, live.clientId]);
    }));
  });
}
