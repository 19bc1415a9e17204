/**
 * AccountStore.revokeToken: "the SQL stores delete those 5 minutes past it on each revocation:
 * `expiresAt` is the revoking instance's clock, and an instance whose clock runs behind must still find
 * the entry". Checked on our three stores: real SQLite, real PostgreSQL, and the memory store.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryAccountStore, type AccountStore } from '../../src/index.js';
import { createPostgresAccountStore, createSqliteAccountStore } from '../../src/sql/index.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';
import { newAccount } from './helpers.js';

type DenyListStore = AccountStore & Required<Pick<AccountStore, 'revokeToken' | 'listRevokedTokens'>>;

const MINUTE = 60_000;

function retentionRows(open: () => Promise<{ store: DenyListStore; close(): Promise<void> }>): void {
  it('keeps an entry 5 minutes past its expiry, so an instance whose clock runs behind still finds it, and deletes it after', async () => {
    const { store, close } = await open();
    try {
      const { clientId } = await store.createAccount(newAccount());
      const t0 = Date.now();
      const expiring = { tokenId: randomUUID(), clientId, revokedAt: new Date(t0 - MINUTE), expiresAt: new Date(t0) };
      await store.revokeToken(expiring);
      // Revoked on an instance whose clock reads 4 minutes later: the first entry has "expired" there.
      await store.revokeToken({ tokenId: randomUUID(), clientId, revokedAt: new Date(t0 + 4 * MINUTE), expiresAt: new Date(t0 + 10 * MINUTE) });
      const behind = new Date(t0 - 1000); // an instance whose clock runs behind
      expect((await store.listRevokedTokens(behind)).map((entry) => entry.tokenId)).toContain(expiring.tokenId);
      // Six minutes past its expiry, on the revoking instance's clock: gone.
      await store.revokeToken({ tokenId: randomUUID(), clientId, revokedAt: new Date(t0 + 6 * MINUTE), expiresAt: new Date(t0 + 10 * MINUTE) });
      expect((await store.listRevokedTokens(behind)).map((entry) => entry.tokenId)).not.toContain(expiring.tokenId);
    } finally {
      await close();
    }
  });
}

describe('deny-list retention: memory store', () => {
  retentionRows(async () => ({ store: new MemoryAccountStore() as DenyListStore, close: async () => {} }));
});

describe('deny-list retention: SQLite store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'esa-retention-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  retentionRows(async () => {
    const store = createSqliteAccountStore({ filename: join(dir, `${randomUUID()}.db`) });
    return { store: store as DenyListStore, close: () => store.close() };
  });
});

withPostgres('deny-list retention: PostgreSQL store', (connectionString) => {
  const schemas = usePostgresSchemas(connectionString);
  retentionRows(async () => {
    const schema = schemas.name();
    const store = createPostgresAccountStore({ connectionString, schema, listen: false });
    return {
      store: store as DenyListStore,
      close: async () => {
        await store.close();
        await schemas.drop(schema);
      },
    };
  });
});
