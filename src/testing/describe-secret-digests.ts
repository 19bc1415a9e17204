/**
 * @module describe-secret-digests
 * The contract tests of `recordSecretDigest`, the optional method that keeps a verified secret's
 * digest (`SecretRecord.verifiedDigest`) so no instance pays bcrypt twice for one value. They run when
 * the store has the method, and are reported skipped otherwise.
 */
import { heldTest, storeWithMethod, type DescribeStorePart } from './store-holding.js';
import { cap } from './contract-fixtures.js';

const ROOM = cap(100);

/** What the library writes: `v1.`, a key ID and a base64url HMAC-SHA-256 (any string of that size must do). */
const digest = (n: number): string => `v1.k3yId0000000000${n}.${String(n).repeat(43).slice(0, 43)}`;

/**
 * Registers the digest tests in a `describe('verified secret digests')` of the enclosing suite, on the
 * store `currentStore()` returns.
 *
 * @example
 * ```ts
 * import { describe, expect, it } from 'vitest'
 * import { IdFactory } from './contract-fixtures.js'
 *
 * describeSecretDigests(() => store, new IdFactory(), { describe, it, expect })
 * ```
 */
export const describeSecretDigests: DescribeStorePart = (currentStore, ids, { describe, it, expect }) => {
  /** The store when it keeps digests; otherwise marks the running test skipped and returns undefined. */
  const digestStore = storeWithMethod(currentStore, 'recordSecretDigest');

  describe('verified secret digests', () => {
    it('recordSecretDigest sets verifiedDigest of that secret only; findAccount and listAccounts return it', heldTest(digestStore, async (store) => {
      const account = await store.createAccount(ids.account());
      const other = ids.secret();
      await store.addSecret(account.clientId, other, ROOM);
      const bystander = await store.createAccount(ids.account());
      const secretId = account.secrets[0]?.id ?? '';
      expect((await store.findAccount(account.clientId))?.secrets[0]?.verifiedDigest).toBeUndefined();
      await store.recordSecretDigest(account.clientId, secretId, digest(1));
      const found = await store.findAccount(account.clientId);
      expect(found?.secrets[0]).toEqual({ ...account.secrets[0], verifiedDigest: digest(1) });
      expect(found?.secrets[1]?.verifiedDigest).toBeUndefined();
      const listed = (await store.listAccounts()).find((a) => a.clientId === account.clientId);
      expect(listed?.secrets[0]?.verifiedDigest).toBe(digest(1));
      expect(await store.findAccount(bystander.clientId)).toEqual(bystander);
    }));

    it('recordSecretDigest replaces an earlier digest and keeps every other field of the secret', heldTest(digestStore, async (store) => {
      const account = await store.createAccount(ids.account());
      const secretId = account.secrets[0]?.id ?? '';
      const [used, revoked] = [ids.time(), ids.time()];
      await store.recordSecretUse(account.clientId, secretId, used);
      await store.recordSecretDigest(account.clientId, secretId, digest(1));
      await store.recordSecretDigest(account.clientId, secretId, digest(2));
      await store.revokeSecret(account.clientId, secretId, revoked);
      const found = await store.findAccount(account.clientId);
      expect(found?.secrets[0]).toEqual({ ...account.secrets[0], lastUsedAt: used, revokedAt: revoked, verifiedDigest: digest(2) });
    }));

    it('recordSecretDigest ignores an unknown account, an unknown secret, or a secret of another account', heldTest(digestStore, async (store) => {
      const a = await store.createAccount(ids.account());
      const b = await store.createAccount(ids.account());
      const unknown = ids.clientId();
      await store.recordSecretDigest(unknown, a.secrets[0]?.id ?? '', digest(3));
      await store.recordSecretDigest(a.clientId, ids.secretId(), digest(3));
      await store.recordSecretDigest(b.clientId, a.secrets[0]?.id ?? '', digest(3));
      expect(await store.findAccount(unknown)).toBeUndefined();
      expect(await store.findAccount(a.clientId)).toEqual(a);
      expect(await store.findAccount(b.clientId)).toEqual(b);
    }));
  });
};
