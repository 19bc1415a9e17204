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

describe('example server settings: TOKEN_ISSUER', () => {
  it('keeps an http(s) URL, with or without a path', () => {
    expect(readSettings({ TOKEN_ISSUER: 'https://api.example.com/t1' }).issuer).toBe('https://api.example.com/t1');
  });

  // An issuer has no query or fragment (RFC 8414 §2): with one, the metadata's token endpoint would be
  // `https://api.example.com/?a=b/oauth/token`. A URL that does not parse stopped the server with "Invalid URL".
  it.each(['https://api.example.com/?tenant=a', 'https://api.example.com/?', 'https://api.example.com/#top', 'http://[bad', 'https://'])(
    'refuses %s, naming the variable',
    (issuer) => {
      expect(() => readSettings({ TOKEN_ISSUER: issuer })).toThrow(/^TOKEN_ISSUER must be an http\(s\) URL without a query or fragment/);
    },
  );
});
