/**
 * An operator who pastes a client secret (or a piece of an access token) where a token ID belongs, as
 * in `service-accounts token revoke esas_...` or `admin.revokeToken(value)`: the value must not be
 * stored in the deny-list, named by the `token.revoked` audit event, or repeated by the error, like
 * every other ID the admin API is given (docs/security.md). Token IDs are the `jti` of our tokens
 * (UUIDs), which never look like a secret.
 */
import { describe, expect, it } from 'vitest';
import { MemoryAccountStore } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { expectAdminError } from '../helpers/expect-admin-error.js';
import { issueToken } from '../helpers/tokens.js';

describe('admin.revokeToken given a secret instead of a token ID', () => {
  it('refuses it with invalid_input, without storing it, auditing it or repeating it', async () => {
    const store = new MemoryAccountStore();
    const t = createTestApp({ store });
    const account = await t.sa.admin.createAccount({ name: 'billing-sync' });
    const token = await issueToken(t.app, account.clientId, account.secret.value);
    const pasted = [
      account.secret.value,
      account.secret.value.toUpperCase(),
      account.secret.value.slice(5), // without its prefix
      token.slice(0, 200), // the start of an access token (its header alone is 50 letters and digits in a row)
    ];
    for (const value of pasted) {
      const err = await expectAdminError(t.sa.admin.revokeToken(value), 'invalid_input');
      expect(err.message).not.toContain(value.slice(10, 40));
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(t.events.filter((e) => e.type === 'token.revoked')).toEqual([]);
    expect(await store.listRevokedTokens!(t.clock.now())).toEqual([]);
    // A real token ID is still revoked.
    await t.sa.admin.revokeToken('0f6a1c2e-58b4-4f59-9a57-2c1d6a1c9e3b');
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(t.events.filter((e) => e.type === 'token.revoked')).toMatchObject([{ tokenId: '0f6a1c2e-58b4-4f59-9a57-2c1d6a1c9e3b', by: 'operator' }]);
    await t.sa.close();
  });
});
