/**
 * RFC 8414 metadata (src/discovery/authorization-server-metadata.ts): the endpoints it lists are URLs
 * clients fetch as they are, so each must be absolute.
 */
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/create-app.js';

describe('authorizationServerMetadata', () => {
  // RFC 8414 §2: "token_endpoint URL of the authorization server's token endpoint"; §3.2 the values are
  // read as they are, with nothing to resolve a relative reference against.
  it('refuses an endpoint that is not an absolute http(s) URL, naming the option', () => {
    const { sa } = createTestApp();
    const base = { tokenEndpoint: 'https://api.test/oauth/token' };
    const bad: [string, Record<string, string>][] = [
      ['tokenEndpoint', { tokenEndpoint: '/oauth/token' }],
      ['tokenEndpoint', { tokenEndpoint: 'api.test/oauth/token' }],
      ['tokenEndpoint', { tokenEndpoint: 'javascript:alert(1)' }],
      ['jwksUri', { ...base, jwksUri: '/.well-known/jwks.json' }],
      ['revocationEndpoint', { ...base, revocationEndpoint: '/oauth/revoke' }],
      ['introspectionEndpoint', { ...base, introspectionEndpoint: 'introspect' }],
    ];
    for (const [name, options] of bad) {
      expect(() => sa.authorizationServerMetadata(options as never)).toThrow(new RegExp(`^authorizationServerMetadata: ${name} must be an absolute http\\(s\\) URL`));
    }
    expect(sa.authorizationServerMetadata({ ...base, jwksUri: 'https://api.test/.well-known/jwks.json' })).toMatchObject({
      token_endpoint: 'https://api.test/oauth/token',
      revocation_endpoint: 'https://api.test/oauth/revoke',
      introspection_endpoint: 'https://api.test/oauth/introspect',
    });
    expect(sa.authorizationServerMetadata({ tokenEndpoint: 'http://127.0.0.1:3000/oauth/token' }).token_endpoint).toBe('http://127.0.0.1:3000/oauth/token');
  });
});
