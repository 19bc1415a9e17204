/**
 * docs/security.md, "Paying bcrypt once per secret": "a secret verified by any instance of a
 * deployment is not checked by bcrypt again on another instance, nor after a restart". Instances share
 * a store and their signing keys, as the processes of one deployment do: on one MemoryAccountStore,
 * on one SQLite file (a store object each, as separate processes), and on one PostgreSQL schema
 * (needs POSTGRES_URL). After one instance verified a secret by bcrypt, a new instance (a restart, a
 * scaled-out one) accepts it with no bcrypt compare; revoking the secret or disabling the account is
 * still refused, by every instance, within the 1-second revocation bound; and an instance that does not
 * hold the signing key the digest was made with pays bcrypt, as before.
 *
 * bcrypt compares are counted (test/helpers/held-bcrypt.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import request from 'supertest';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryAccountStore, type AccountStore, type SigningKeyOptions } from '../../src/index.js';
import { createPostgresAccountStore, createSqliteAccountStore } from '../../src/sql/index.js';
import { createTestApp, TEST_HS256_KEY } from '../helpers/create-app.js';
import { heldBcrypt } from '../helpers/held-bcrypt.js';
import { secretWithId } from '../helpers/secret-values.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';

vi.mock('bcrypt', async (importOriginal) => (await import('../helpers/held-bcrypt.js')).withHeldCompares(await importOriginal()));

/** The documented bound on a revocation or a disable reaching every instance. */
const BOUND_MS = 1000;
const OTHER_KEY: SigningKeyOptions = { alg: 'HS256', key: 'another-signing-key-0123456789abcdef-01234' };
const SAME_KEY: SigningKeyOptions = { alg: 'HS256', key: TEST_HS256_KEY };

/** Opens one more store object on the shared data (a process of its own), or the shared store itself. */
type OpenStore = () => AccountStore;

function describeAcrossInstances(name: string, makeOpen: () => OpenStore): void {
  describe(`verified secrets across instances: ${name}`, () => {
    const instances: Array<ReturnType<typeof createTestApp>> = [];
    afterEach(async () => {
      heldBcrypt.release();
      await Promise.all(instances.splice(0).map((instance) => instance.sa.close()));
    });

    let open: OpenStore;
    async function instance(signingKeys: SigningKeyOptions[] = [SAME_KEY]) {
      const started = createTestApp({ store: open(), signingKeys });
      instances.push(started);
      await started.sa.ready();
      return started;
    }
    const token = (app: ReturnType<typeof createTestApp>['app'], clientId: string, secret: string) =>
      request(app).post('/oauth/token').auth(clientId, secret).type('form').send({ grant_type: 'client_credentials' });

    /** An account whose secret the first instance verified by bcrypt, its digest written to the store. */
    async function verifiedOnFirst() {
      open = makeOpen();
      const first = await instance();
      const account = await first.sa.admin.createAccount({ name: 'fleet' });
      heldBcrypt.compares = 0;
      await token(first.app, account.clientId, account.secret.value).expect(200);
      expect(heldBcrypt.compares).toBe(1);
      // The digest is written off the request path.
      const reader = open();
      await vi.waitFor(async () => expect((await reader.findAccount(account.clientId))?.secrets[0]?.verifiedDigest).toMatch(/^v1\./), {
        timeout: 5000,
        interval: 10,
      });
      await reader.close?.();
      return { first, account };
    }

    it('another instance, or one started later, accepts the secret without bcrypt', async () => {
      const { account } = await verifiedOnFirst();
      const second = await instance();
      await token(second.app, account.clientId, account.secret.value).expect(200);
      await token(second.app, account.clientId, account.secret.value).expect(200);
      expect(heldBcrypt.compares).toBe(1);
    });

    it('a wrong value for the same secret is still refused by bcrypt', async () => {
      const { account } = await verifiedOnFirst();
      const second = await instance();
      const wrong = secretWithId(account.secret.id); // of the generated format, naming the same secret
      await token(second.app, account.clientId, wrong).expect(401);
      expect(heldBcrypt.compares).toBe(2);
      await token(second.app, account.clientId, account.secret.value).expect(200);
      expect(heldBcrypt.compares).toBe(2);
    });

    it.each([
      ['its secret revoked', 'revoked'],
      ['its account disabled', 'disabled'],
    ] as const)(`refuses, on every instance within ${BOUND_MS} ms, a verified secret with %s`, async (_what, change) => {
      const { first, account } = await verifiedOnFirst();
      const second = await instance();
      await token(second.app, account.clientId, account.secret.value).expect(200); // cached and remembered there
      if (change === 'revoked') await first.sa.admin.revokeSecret(account.clientId, account.secret.id);
      else await first.sa.admin.disableAccount(account.clientId);
      const changedAt = performance.now();
      let refusedAfter: number | undefined;
      while (performance.now() - changedAt < 3 * BOUND_MS) {
        const res = await token(second.app, account.clientId, account.secret.value);
        if (res.status === 401) {
          refusedAfter = performance.now() - changedAt;
          break;
        }
        expect(res.status).toBe(200);
      }
      expect(refusedAfter).toBeDefined();
      expect(refusedAfter!).toBeLessThan(BOUND_MS);
      // A new instance refuses it from the start, digest or not.
      const third = await instance();
      await token(third.app, account.clientId, account.secret.value).expect(401);
    });

    it('an instance without the signing key the digest was made with pays bcrypt once; one that still holds it does not', async () => {
      const { account } = await verifiedOnFirst();
      // During a rotation: the new key signs, the old one still verifies (and its digests still count).
      const rotating = await instance([OTHER_KEY, SAME_KEY]);
      await token(rotating.app, account.clientId, account.secret.value).expect(200);
      expect(heldBcrypt.compares).toBe(1);
      // After it: the old key is gone, and its digest with it.
      const rotated = await instance([OTHER_KEY]);
      await token(rotated.app, account.clientId, account.secret.value).expect(200);
      expect(heldBcrypt.compares).toBe(2);
    });
  });
}

describeAcrossInstances('one MemoryAccountStore', () => {
  const store = new MemoryAccountStore();
  return () => store;
});

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
describeAcrossInstances('one SQLite file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'esa-verified-'));
  dirs.push(dir);
  const filename = join(dir, 'accounts.db');
  return () => createSqliteAccountStore({ filename, pollIntervalMs: 50 });
});

withPostgres('verified secrets across instances on PostgreSQL', (connectionString) => {
  const schemas = usePostgresSchemas(connectionString);
  describeAcrossInstances('one PostgreSQL schema', () => {
    const schema = schemas.name('verified_');
    return () => createPostgresAccountStore({ connectionString, schema });
  });
});
