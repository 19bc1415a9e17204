/**
 * The example server's settings as read from its environment: what a person who copies an admin token
 * into ADMIN_TENANT_TOKENS gets.
 */
import { describe, expect, it } from 'vitest';
import { readSettings } from '../../examples/server/settings.js';

describe('example server settings: ADMIN_TENANT_TOKENS', () => {
  it('keeps a token that ends in base64 padding whole: each pair is split at its last "="', () => {
    const settings = readSettings({ ADMIN_TENANT_TOKENS: 'c2VjcmV0LXRva2Vu===acme, dG9r==globex', FEDERATION_ALLOWED_ISSUERS: 'none' });
    expect([...(settings.admin?.tenants ?? [])]).toEqual([
      ['c2VjcmV0LXRva2Vu==', 'acme'],
      ['dG9r=', 'globex'],
    ]);
  });

  // Before padding was read, a pair split at its first '=': a client account ID holding one must keep its meaning.
  it('keeps a client account ID that holds "=" whole, as before', () => {
    const settings = readSettings({ ADMIN_TENANT_TOKENS: 'acme-token=team=a,dG9r===team=b', FEDERATION_ALLOWED_ISSUERS: 'none' });
    expect([...(settings.admin?.tenants ?? [])]).toEqual([
      ['acme-token', 'team=a'],
      ['dG9r==', 'team=b'],
    ]);
  });

  it('still refuses a pair without a client account', () => {
    expect(() => readSettings({ ADMIN_TENANT_TOKENS: 'token=' })).toThrow(/ADMIN_TENANT_TOKENS must be token=clientAccountId pairs/);
  });
});
