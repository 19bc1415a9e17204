/**
 * The verified-token cache (in src/token-check/token-check.ts) is keyed by the token's signature
 * segment, which is cheaper to hash than the whole token; it must still answer only for the exact token
 * that verified (RFC 7515 §5.2: the signature covers the header and payload it was computed over).
 */
import { describe, expect, it } from 'vitest';
import { InvalidTokenError } from '../../src/index.js';
import { signAccessToken } from '../../src/access-tokens/access-token.js';
import { VerifiedTokenCache } from '../../src/token-check/token-check.js';
import { TOKEN_TEST_NOW, tokenConfig } from '../helpers/token-settings.js';

const config = tokenConfig;
const now = TOKEN_TEST_NOW;
const issue = (scopes: string[]) => signAccessToken(config, { clientId: 'esa_client', secretId: 'S1', scopes, now, lifetime: 60 });
const cacheOf = () => new VerifiedTokenCache({ keyring: config.keyring, issuer: config.issuer, audience: config.audience, clockTolerance: 0 });

describe('VerifiedTokenCache', () => {
  it('answers a repeated token from the cache with the same claims', () => {
    const cache = cacheOf();
    const { token, claims } = issue(['a']);
    const first = cache.verify(token, now);
    expect(first).toEqual(claims);
    expect(cache.verify(`${token}`, now)).toBe(first);
  });

  it('refuses a token that reuses a cached signature over another payload', () => {
    const cache = cacheOf();
    const good = issue(['a']).token;
    cache.verify(good, now);
    const [header, , signature] = good.split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ ...issue(['admin']).claims })).toString('base64url');
    const forged = `${header}.${forgedPayload}.${signature}`;
    expect(() => cache.verify(forged, now)).toThrow(InvalidTokenError);
    expect(cache.verify(good, now).scope).toBe('a');
  });

  it('refuses a cached token once it has expired', () => {
    const cache = cacheOf();
    const { token } = issue(['a']);
    cache.verify(token, now);
    expect(() => cache.verify(token, new Date(now.getTime() + 60_000))).toThrow(InvalidTokenError);
  });
});

describe('VerifiedTokenCache bound', () => {
  it('keeps at most `max` tokens, dropping the oldest; a dropped token verifies again', () => {
    const cache = new VerifiedTokenCache({ keyring: config.keyring, issuer: config.issuer, audience: config.audience, clockTolerance: 0 }, 2);
    const [a, b, c] = [issue(['a']), issue(['b']), issue(['c'])];
    const first = cache.verify(a.token, now);
    cache.verify(b.token, now);
    cache.verify(c.token, now);
    const again = cache.verify(a.token, now);
    expect(again).toEqual(a.claims);
    expect(again).not.toBe(first); // verified anew, not served from the cache
  });
});
