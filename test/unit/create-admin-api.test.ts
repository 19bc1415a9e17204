/**
 * `createAdminApi()` (src/admin/create-admin-api.ts): "the admin API on its own, over a store ... It
 * needs no issuer and no signing key, and starts no timer: it never watches the store." Options: "a
 * bad or unknown option throws a `TypeError` naming it."
 */
import { describe, expect, it } from 'vitest';
import {
  AdminError,
  createAdminApi,
  MemoryAccountStore,
  type AccountChangeListener,
  type AdminApiOptions,
  type AuditEvent,
} from '../../src/index.js';
import { ForwardingStore } from '../helpers/forwarding-store.js';
import { TestClock } from '../helpers/create-app.js';

/** The audit hook runs off the call path (setImmediate): let it run. */
const flushAudit = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A memory store that counts `init()` calls, fails the first `initFailures` of them, and records `watch()`. */
class CountingStore extends ForwardingStore {
  inits = 0;
  watches = 0;
  constructor(private initFailures = 0) {
    super(new MemoryAccountStore());
  }
  async init(): Promise<void> {
    this.inits++;
    if (this.inits <= this.initFailures) throw new Error('database starting up');
  }
  async watch(listener: AccountChangeListener): Promise<() => Promise<void>> {
    this.watches++;
    return (this.inner as MemoryAccountStore).watch(listener);
  }
}

function expectBadOption(options: unknown, name: string): void {
  expect(() => createAdminApi(options as AdminApiOptions)).toThrow(TypeError);
  expect(() => createAdminApi(options as AdminApiOptions)).toThrow(`"${name}"`);
}

describe('createAdminApi', () => {
  it('provisions over a MemoryAccountStore alone, with no issuer or signing keys', async () => {
    const clock = new TestClock();
    const events: AuditEvent[] = [];
    const admin = createAdminApi({ store: new MemoryAccountStore(), secretHashRounds: 4, now: clock.now, onAudit: (e) => void events.push(e) });
    const a = await admin.createAccount({ name: 'standalone', scopes: 'jobs:read' });
    const second = await admin.addSecret(a.clientId);
    await admin.revokeSecret(a.clientId, a.secret.id);
    expect(await admin.disableAccount(a.clientId)).toEqual({ clientId: a.clientId, enabled: false });
    const listed = await admin.listAccounts();
    expect(listed).toEqual([
      {
        clientId: a.clientId,
        name: 'standalone',
        clientAccountId: null,
        enabled: false,
        scopes: ['jobs:read'],
        resources: [],
        accessTokenLifetime: null,
        dpopBoundAccessTokens: false,
        createdAt: clock.now(),
        secrets: [
          { id: a.secret.id, createdAt: clock.now(), lastUsedAt: null, revokedAt: clock.now(), expiresAt: null },
          { id: second.id, createdAt: clock.now(), lastUsedAt: null, revokedAt: null, expiresAt: null },
        ],
        keys: [],
        federated: [],
      },
    ]);
    await flushAudit();
    expect(events.map((e) => e.type)).toEqual(['account.created', 'secret.created', 'secret.created', 'secret.revoked', 'account.disabled']);
    expect(events.every((e) => e.at.getTime() === clock.now().getTime())).toBe(true);
  });

  // "maxSecretsPerAccount: Live (unrevoked) secrets allowed per account; adding one more fails."
  it('applies its own maxSecretsPerAccount', async () => {
    const admin = createAdminApi({ store: new MemoryAccountStore(), secretHashRounds: 4, maxSecretsPerAccount: 2 });
    const a = await admin.createAccount({ name: 'two at most' });
    await admin.addSecret(a.clientId);
    const err = await admin.addSecret(a.clientId).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdminError);
    expect((err as AdminError).code).toBe('secret_limit_reached');
    expect((err as AdminError).message).toMatch(/2 live secrets.*limit is 2/);
  });

  // "The store is initialised (`init()`) lazily by the first call ... it never watches the store."
  it('initialises the store once, on first use, retries a failed init, and never watches', async () => {
    const store = new CountingStore(1);
    const admin = createAdminApi({ store, secretHashRounds: 4 });
    expect(store.inits).toBe(0);
    await expect(admin.listAccounts()).rejects.toThrow(/init failed/);
    await admin.createAccount({ name: 'after a failed init' });
    await admin.listAccounts();
    expect(store.inits).toBe(2);
    expect(store.watches).toBe(0);
  });

  // "a bad or unknown option throws a `TypeError` naming it."
  it('throws a TypeError naming a bad or unknown option', () => {
    const store = new MemoryAccountStore();
    expect(() => createAdminApi(null as unknown as AdminApiOptions)).toThrow(TypeError);
    expectBadOption({}, 'store');
    expectBadOption({ store: {} }, 'store');
    // `issuer` is known (it names the default audience of federated credentials), but must be a non-empty string.
    expectBadOption({ store, issuer: '' }, 'issuer');
    expectBadOption({ store, issuer: 42 }, 'issuer');
    expectBadOption({ store, allowedIssuers: 'https://token.actions.githubusercontent.com' }, 'allowedIssuers');
    expectBadOption({ store, allowedIssuers: ['http://example.com'] }, 'allowedIssuers[0]');
    expectBadOption({ store, signingKeys: [] }, 'signingKeys');
    expectBadOption({ store, maxSecretsPerAccount: 0 }, 'maxSecretsPerAccount');
    expectBadOption({ store, maxSecretsPerAccount: 2.5 }, 'maxSecretsPerAccount');
    expectBadOption({ store, secretHashRounds: 3 }, 'secretHashRounds');
    expectBadOption({ store, storeTimeout: '2000' }, 'storeTimeout');
    expectBadOption({ store, onAudit: 'console' }, 'onAudit');
    expectBadOption({ store, now: Date.now() }, 'now');
  });
});
