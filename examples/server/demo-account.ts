/**
 * Provisions a demo account on a store with no account, so `npm start` is usable at once. A restart,
 * or a second instance on a store that has accounts, provisions nothing.
 *
 * Two instances starting at the same moment on an empty store must not both provision one. On SQLite
 * both run on one host, so a lock file beside the database serialises "list, then create". On
 * PostgreSQL the instances may run on different hosts and the public API has no lock: two instances
 * started within the same few milliseconds on an empty database can each provision a demo account
 * (harmless, and both are printed). Start one instance first, or provision with the CLI instead.
 */
import { closeSync, openSync, statSync, unlinkSync } from 'node:fs';
import type { AdminApi, CreatedAccount } from 'express-service-accounts';

/** The demo account: scoped, so the `jobs:write` check of POST /api/jobs is exercised. */
export const DEMO_ACCOUNT = { name: 'demo-service-account', scopes: ['jobs:read', 'jobs:write'] } as const;

const LOCK_WAIT_MS = 15_000;
const STALE_LOCK_MS = 10_000; // a lock this old was left by a crashed instance

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

async function withLockFile<T>(file: string, work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      closeSync(openSync(file, 'wx', 0o600));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      try {
        if (Date.now() - statSync(file).mtimeMs > STALE_LOCK_MS) unlinkSync(file);
      } catch {
        // released or removed meanwhile: try again
      }
      if (Date.now() > deadline) throw new Error(`Timed out waiting for the provisioning lock ${file}`);
      await sleep(25);
    }
  }
  try {
    return await work();
  } finally {
    try {
      unlinkSync(file);
    } catch {
      // already gone
    }
  }
}

/**
 * Creates the demo account when the store has no account at all; resolves with it (its secret is in
 * it, to be shown once), or `undefined` when the store already had accounts.
 */
export async function provisionDemoAccount(admin: AdminApi, lockFile: string | undefined): Promise<CreatedAccount | undefined> {
  const provision = async (): Promise<CreatedAccount | undefined> => {
    if ((await admin.listAccounts()).length > 0) return undefined;
    return admin.createAccount({ name: DEMO_ACCOUNT.name, scopes: [...DEMO_ACCOUNT.scopes] });
  };
  return lockFile === undefined ? provision() : withLockFile(lockFile, provision);
}
