/**
 * The live-secret cap across instances. Options: "maxSecretsPerAccount: Live (unrevoked) secrets
 * allowed per account; adding one more fails." The store enforces it atomically
 * (`AccountStore.addSecret`: "A refused call stores nothing, not even a revoked row").
 */
import { describe, expect, it } from 'vitest';
import { AdminError, MemoryAccountStore } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';

describe('admin API: the live-secret cap', () => {
  it('holds when two instances add at once, and a refused add leaves no row behind', async () => {
    const store = new MemoryAccountStore();
    const first = createTestApp({ maxSecretsPerAccount: 3, store });
    const second = createTestApp({ maxSecretsPerAccount: 3, store });
    const a = await first.sa.admin.createAccount({ name: 'two-instances' });
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? first : second).sa.admin.addSecret(a.clientId)),
    );
    const added = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.id] : []));
    expect(added).toHaveLength(2);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as AdminError).code).toBe('secret_limit_reached');
    const listed = await first.sa.admin.getAccount(a.clientId);
    expect(listed?.secrets.map((s) => s.id).sort()).toEqual([a.secret.id, ...added].sort());
    expect(listed?.secrets.every((s) => s.revokedAt === null)).toBe(true);
  });
});
