/**
 * @module describe-federated-credentials
 * The contract tests of federated credentials: `addFederatedCredential` (its cap shared with secrets
 * and keys, its refusal of a live duplicate), `revokeFederatedCredential`,
 * `recordFederatedCredentialUse`, `findFederatedClients` (exact matches only) and the change
 * announcements. They run when the store has the five federated methods, and are reported skipped
 * otherwise (a store without federated credentials).
 */
import type { AddFederatedCredentialResult, AddKeyResult, AddSecretResult } from '../store/account-store.js';
import { supportsKeyCredentials } from '../store/credential-kinds.js';
import { heldTest, type DescribeStorePart } from './store-holding.js';
import { describeCredentialLife, kindStore } from './describe-credential-life.js';
import { cap } from './contract-fixtures.js';

const ROOM = cap(100);
const RACERS = 10;

/**
 * Registers the federated credential tests in a `describe('federated credentials')` of the enclosing
 * suite, on the store `currentStore()` returns. `describeAccountStore` calls it; call it yourself only
 * to run these tests alone.
 *
 * @example
 * ```ts
 * import { describe, expect, it } from 'vitest'
 * import { IdFactory } from './contract-fixtures.js'
 *
 * describeFederatedCredentials(() => store, new IdFactory(), { describe, it, expect })
 * ```
 */
export const describeFederatedCredentials: DescribeStorePart = (currentStore, ids, { describe, it, expect }) => {
  /** The store when it holds federated credentials; otherwise marks the running test skipped and returns undefined. */
  const federatedStore = kindStore(currentStore, 'federated');
  const stored = <T extends object>(credential: T) => ({ ...credential, lastUsedAt: null, revokedAt: null });

  describe('federated credentials', () => {
    describeCredentialLife(
      currentStore,
      {
        kind: 'federated',
        thing: 'credential',
        twins: 'adds of the same trust (default audience)',
        make: () => ids.federated(),
        makeOther: () => ids.federated({ audience: 'api://payments', jwksUri: 'https://oidc.example.com/keys.json' }),
        newId: () => ids.federatedId(),
        // An add for an unknown account leaves no trust behind, and a revocation leaves the account's other trusts.
        checkUnknownAdd: async (store, credential) => {
          expect(await store.findFederatedClients(credential.issuer, credential.subject, 10)).toEqual([]);
        },
        checkAfterRevoke: async (store, clientId, bystander) => {
          expect(await store.findFederatedClients(bystander.issuer, bystander.subject, 10)).toEqual([clientId]);
        },
      },
      ids,
      { it, expect },
    );

    it('addFederatedCredential shares the cap with secrets and keys: live ones count together, revoked ones do not', heldTest(federatedStore, async (store) => {
      const account = await store.createAccount(ids.account()); // one live secret
      const withKey = supportsKeyCredentials(store);
      if (withKey) await store.addKey(account.clientId, ids.key(), ROOM);
      const limit = { maxLiveCredentials: withKey ? 3 : 2 };
      const trust = ids.federated();
      expect(await store.addFederatedCredential(account.clientId, trust, limit)).toEqual(stored(trust));
      expect(await store.addFederatedCredential(account.clientId, ids.federated(), limit)).toBe('limit_reached');
      expect(await store.addSecret(account.clientId, ids.secret(), cap(limit.maxLiveCredentials))).toBe('limit_reached');
      if (withKey) expect(await store.addKey(account.clientId, ids.key(), limit)).toBe('limit_reached');
      await store.revokeFederatedCredential(account.clientId, trust.id, ids.time());
      const next = ids.federated();
      expect(await store.addFederatedCredential(account.clientId, next, limit)).toEqual(stored(next));
      expect((await store.findAccount(account.clientId))?.federated?.map((c) => c.id)).toEqual([trust.id, next.id]);
    }));

    it(`keeps the shared cap under ${RACERS} concurrent adds of federated credentials, secrets and keys: exactly the room left is stored`, heldTest(federatedStore, async (store) => {
      const account = await store.createAccount(ids.account()); // one live secret: room for 3 more under a cap of 4
      const adds: Promise<AddFederatedCredentialResult | AddSecretResult | AddKeyResult>[] = [];
      for (let i = 0; i < RACERS; i++) {
        if (i % 3 === 1) adds.push(store.addSecret(account.clientId, ids.secret(), cap(4)));
        else if (i % 3 === 2 && supportsKeyCredentials(store)) adds.push(store.addKey(account.clientId, ids.key(), { maxLiveCredentials: 4 }));
        else adds.push(store.addFederatedCredential(account.clientId, ids.federated(), { maxLiveCredentials: 4 }));
      }
      const results = await Promise.all(adds);
      expect(results.filter((r) => typeof r === 'object').length).toBe(3);
      expect(results.filter((r) => r === 'limit_reached').length).toBe(RACERS - 3);
      const found = await store.findAccount(account.clientId);
      expect((found?.secrets.length ?? 0) + (found?.keys?.length ?? 0) + (found?.federated?.length ?? 0)).toBe(4);
    }));

    it('addFederatedCredential resolves duplicate and stores nothing for a live credential of the account with the same issuer, subject and audience (a null audience equal to null)', heldTest(federatedStore, async (store) => {
      const account = await store.createAccount(ids.account());
      const defaultAudience = ids.federated();
      const trust = { issuer: defaultAudience.issuer, subject: defaultAudience.subject };
      const explicit = ids.federated({ ...trust, audience: 'api://payments' });
      await store.addFederatedCredential(account.clientId, defaultAudience, ROOM);
      await store.addFederatedCredential(account.clientId, explicit, ROOM);
      expect(await store.addFederatedCredential(account.clientId, ids.federated({ ...trust, audience: null }), ROOM)).toBe('duplicate');
      expect(await store.addFederatedCredential(account.clientId, ids.federated({ ...trust, audience: 'api://payments' }), ROOM)).toBe('duplicate');
      // Another JWK Set URL is no other trust.
      const otherKeys = ids.federated({ ...trust, audience: null, jwksUri: 'https://oidc.example.com/other.json' });
      expect(await store.addFederatedCredential(account.clientId, otherKeys, ROOM)).toBe('duplicate');
      expect((await store.findAccount(account.clientId))?.federated?.map((c) => c.id)).toEqual([defaultAudience.id, explicit.id]);
      // Another audience or subject is another trust; a revoked credential leaves its place free.
      const otherAudience = ids.federated({ ...trust, audience: 'api://billing' });
      expect(await store.addFederatedCredential(account.clientId, otherAudience, ROOM)).toEqual(stored(otherAudience));
      const otherSubject = ids.federated({ issuer: trust.issuer, subject: `${trust.subject}-2` });
      expect(await store.addFederatedCredential(account.clientId, otherSubject, ROOM)).toEqual(stored(otherSubject));
      await store.revokeFederatedCredential(account.clientId, defaultAudience.id, ids.time());
      const again = ids.federated({ ...trust, audience: null });
      expect(await store.addFederatedCredential(account.clientId, again, ROOM)).toEqual(stored(again));
    }));

    it('two accounts may trust the same issuer and subject', heldTest(federatedStore, async (store) => {
      const a = await store.createAccount(ids.account());
      const b = await store.createAccount(ids.account());
      const trust = ids.federated();
      const twin = { ...trust, id: ids.federatedId() };
      expect(await store.addFederatedCredential(a.clientId, trust, ROOM)).toEqual(stored(trust));
      expect(await store.addFederatedCredential(b.clientId, twin, ROOM)).toEqual(stored(twin));
      expect(await store.findFederatedClients(trust.issuer, trust.subject, 10)).toEqual([a.clientId, b.clientId]);
    }));

    it('findFederatedClients matches issuer and subject exactly: no prefix, case or wildcard matching', heldTest(federatedStore, async (store) => {
      const holder = await store.createAccount(ids.account());
      const trust = ids.federated({ subject: 'repo:acme/billing:ref:refs/heads/main' });
      await store.addFederatedCredential(holder.clientId, trust, ROOM);
      const { issuer, subject } = trust;
      expect(await store.findFederatedClients(issuer, subject, 10)).toEqual([holder.clientId]);
      for (const [otherIssuer, otherSubject] of [
        [issuer, 'repo:acme/billing:ref:refs/heads/'], // a prefix
        [issuer, `${subject}x`],
        [issuer, subject.toUpperCase()],
        [issuer, 'repo:acme/billing:ref:refs/heads/ma_n'], // SQL LIKE wildcards
        [issuer, 'repo:acme/billing:%'],
        [issuer, 'repo:acme/billing:*'],
        [issuer, `${subject} `],
        [`${issuer}/`, subject],
        [issuer.toUpperCase(), subject],
        [issuer.slice(0, -1), subject],
      ] as const) {
        // The query rides along in the compared value, so a failure names it (Jest's expect takes no message).
        const found = await store.findFederatedClients(otherIssuer, otherSubject, 10);
        expect({ otherIssuer, otherSubject, found }).toEqual({ otherIssuer, otherSubject, found: [] });
      }
    }));

    it('findFederatedClients lists the accounts with a live credential, disabled ones too, oldest first, each once, at most limit', heldTest(federatedStore, async (store) => {
      const trust = ids.federated();
      const times = [ids.time(), ids.time(), ids.time(), ids.time()];
      // Created out of order: the oldest account comes first whatever the order of creation.
      const newest = await store.createAccount(ids.account({ createdAt: times[3] }));
      const oldest = await store.createAccount(ids.account({ createdAt: times[0] }));
      const disabled = await store.createAccount(ids.account({ createdAt: times[1] }));
      const revoked = await store.createAccount(ids.account({ createdAt: times[2] }));
      for (const account of [newest, oldest, disabled, revoked]) {
        await store.addFederatedCredential(account.clientId, { ...trust, id: ids.federatedId() }, ROOM);
      }
      // A second live credential of one account for another audience: the account is listed once.
      await store.addFederatedCredential(oldest.clientId, { ...trust, id: ids.federatedId(), audience: 'api://payments' }, ROOM);
      await store.setAccountEnabled(disabled.clientId, false);
      const revokedId = (await store.findAccount(revoked.clientId))?.federated?.[0]?.id ?? '';
      await store.revokeFederatedCredential(revoked.clientId, revokedId, ids.time());
      expect(await store.findFederatedClients(trust.issuer, trust.subject, 10)).toEqual([oldest.clientId, disabled.clientId, newest.clientId]);
      expect(await store.findFederatedClients(trust.issuer, trust.subject, 2)).toEqual([oldest.clientId, disabled.clientId]);
      expect(await store.findFederatedClients(trust.issuer, trust.subject, 1)).toEqual([oldest.clientId]);
      const unknown = ids.federated();
      expect(await store.findFederatedClients(unknown.issuer, unknown.subject, 10)).toEqual([]);
    }));

    it('returns copies of federated credentials: mutating a returned one does not change the store', heldTest(federatedStore, async (store) => {
      const account = await store.createAccount(ids.account());
      const trust = ids.federated();
      await store.addFederatedCredential(account.clientId, trust, ROOM);
      const found = await store.findAccount(account.clientId);
      (found?.federated?.[0] as { subject: string } | undefined)!.subject = 'changed';
      (found?.federated as unknown[] | undefined)?.pop();
      expect((await store.findAccount(account.clientId))?.federated).toEqual([stored(trust)]);
    }));

  });
};
