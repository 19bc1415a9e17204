/**
 * Provisions a demo account on a store with no account, so `npm start` is usable at once. A restart,
 * or a second instance on a store that has accounts, provisions nothing; instances starting at the same
 * moment on one empty store take turns under a lock (provisioning-lock.ts), so only one provisions.
 */
import type { AdminApi, CreatedAccount } from 'express-service-accounts';
import type { ProvisioningLock } from './provisioning-lock.js';

/** The demo account: scoped, so the `jobs:write` check of POST /api/jobs is exercised. */
export const DEMO_ACCOUNT = { name: 'demo-service-account', scopes: ['jobs:read', 'jobs:write'] } as const;

/**
 * Creates the demo account when the store has no account at all; resolves with it (its secret is in
 * it, to be shown once), or `undefined` when the store already had accounts. With a
 * `maxCredentialLifetime` (seconds), every new secret must expire within it: the demo secret expires
 * at that limit.
 */
export function provisionDemoAccount(admin: AdminApi, lock: ProvisioningLock, maxCredentialLifetime?: number): Promise<CreatedAccount | undefined> {
  return lock(async () => {
    if ((await admin.listAccounts()).length > 0) return undefined;
    const secret = maxCredentialLifetime === undefined ? {} : { secret: { expiresIn: maxCredentialLifetime } };
    return admin.createAccount({ name: DEMO_ACCOUNT.name, scopes: [...DEMO_ACCOUNT.scopes], ...secret });
  });
}
