/**
 * The framework-free DPoP parts: the `dpop` option's validation, `htu` normalisation (RFC 3986
 * §6.2.2-6.2.3), stateless nonces, reading the `DPoP` header from the raw header list, and the
 * per-instance replay cache's bounds.
 */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { resolveDpop, type ResolvedDpopConfig } from '../../src/dpop/dpop-options.js';
import { normalizeHtu } from '../../src/dpop/dpop-request-url.js';
import { DpopNonces } from '../../src/dpop/dpop-nonces.js';
import { DpopProofChecker, dpopHeaderOf, readDpopHeader } from '../../src/dpop/dpop-proof.js';
import { MemoryReplayCache, replayOwnerOf } from '../../src/dpop/dpop-replay.js';
import { TemporarilyUnavailableError } from '../../src/errors.js';

describe('the dpop option', () => {
  it('defaults to ES256 and PS256, 60 s, memory replay', () => {
    expect(resolveDpop(undefined, false)).toMatchObject({ algorithms: ['ES256', 'PS256'], algs: 'ES256 PS256', proofMaxAge: 60, nonceAt: 'both', replay: 'memory', maxReplayEntries: 100_000 });
    expect(resolveDpop(false, false)).toBe(false);
  });

  // RFC 9449 §4.3 step 5: "the algorithm in alg ... is not none ... not a MAC".
  it.each([
    [{ algorithms: ['none'] }, /asymmetric only/],
    [{ algorithms: ['HS256'] }, /asymmetric only/],
    [{ algorithms: [] }, /non-empty/],
    [{ origins: ['https://api.example.com/path'] }, /origins only/],
    [{ origins: ['not a url'] }, /not a URL/],
    [{ nonceSecret: 'short' }, /at least 32/],
    [{ nonceAt: 'token-endpoint' }, /needs dpop.nonceSecret/],
    [{ nonceSecret: 'nonce-secret-0123456789abcdef-0123456789', nonceAt: 'resource' }, /"both", "token-endpoint" or "protected-routes"/],
    [{ proofMaxAge: 1000 }, /from 5 to 300/],
    [{ replay: 'redis' }, /needs failureLimit.redis/],
    [{ replay: 'postgres' }, /"memory" or "redis"/],
    [{ extra: true }, /not a known option/],
  ])('refuses %j at start-up', (value, message) => {
    expect(() => resolveDpop(value, false)).toThrow(message);
  });
});

describe('how long a used proof is remembered', () => {
  const secret = 'nonce-secret-0123456789abcdef-0123456789';
  const checker = (nonceAt: 'both' | 'token-endpoint' | 'protected-routes' | undefined) =>
    new DpopProofChecker(resolveDpop(nonceAt === undefined ? {} : { nonceSecret: secret, nonceAt }, false) as ResolvedDpopConfig, 5, nonceAt === undefined ? undefined : new DpopNonces(secret));

  // A proof is remembered as long as it could be accepted again where it was used: by its iat (proofMaxAge + tolerance,
  // and the second in which it is exactly proofMaxAge old), or by a nonce (two 60 s steps + tolerance) where nonces are required.
  it.each([
    [undefined, 66, 66],
    ['both', 125, 125],
    ['token-endpoint', 125, 66],
    ['protected-routes', 66, 125],
  ] as const)('nonceAt %s: %i s at the token endpoint, %i s at protected routes', (nonceAt, token, routes) => {
    expect(checker(nonceAt).replayWindowSeconds(400)).toBe(token);
    expect(checker(nonceAt).replayWindowSeconds(401)).toBe(routes);
  });
});

describe('normalizeHtu (RFC 3986 §6.2.2, §6.2.3)', () => {
  it.each([
    ['HTTPS://API.Example.COM/a', 'https://api.example.com/a'],
    ['https://api.example.com:443/a', 'https://api.example.com/a'],
    ['http://api.example.com:80/a', 'http://api.example.com/a'],
    ['https://api.example.com', 'https://api.example.com/'],
    ['https://api.example.com/a/./b/../c', 'https://api.example.com/a/c'],
    ['https://api.example.com/%7euser/%2f', 'https://api.example.com/~user/%2F'],
    ['https://api.example.com/a?query=1#fragment', 'https://api.example.com/a'],
  ])('%s → %s', (value, normal) => {
    expect(normalizeHtu(value)).toBe(normal);
  });

  it('is undefined for what is not an http(s) URL', () => {
    expect(normalizeHtu('/relative')).toBeUndefined();
    expect(normalizeHtu('ftp://api.example.com/a')).toBeUndefined();
  });
});

describe('DpopNonces', () => {
  const secret = 'nonce-secret-0123456789abcdef-0123456789';
  it('a nonce is valid in its step and the next, on every instance with the secret', () => {
    const at = new Date('2026-11-22T10:00:30Z');
    const nonce = new DpopNonces(secret).current(at);
    const other = new DpopNonces(secret);
    expect(other.validUntil(nonce, at)).toBe(Date.parse('2026-11-22T10:02:00Z'));
    expect(other.validUntil(nonce, new Date('2026-11-22T10:01:59Z'))).toBeDefined();
    expect(other.validUntil(nonce, new Date('2026-11-22T10:02:00Z'))).toBeUndefined();
    expect(new DpopNonces(`${secret}x`).validUntil(nonce, at)).toBeUndefined();
    expect(other.validUntil(undefined, at)).toBeUndefined();
  });
});

describe('readDpopHeader', () => {
  it('reads exactly one DPoP header, in any case; several are null', () => {
    expect(readDpopHeader(['Host', 'a', 'dpop', 'x'])).toBe('x');
    expect(readDpopHeader(['Host', 'a'])).toBeUndefined();
    expect(readDpopHeader(['DPoP', 'x', 'DPOP', 'y'])).toBeNull();
  });

  it('dpopHeaderOf: Node\'s joined header when it settles the count, else the raw list', () => {
    const req = (headers: Record<string, string>, rawHeaders: string[]) => ({ headers, rawHeaders }) as unknown as IncomingMessage;
    expect(dpopHeaderOf(req({ host: 'a' }, ['Host', 'a']))).toBeUndefined();
    expect(dpopHeaderOf(req({ dpop: 'x' }, ['DPoP', 'x']))).toBe('x');
    expect(dpopHeaderOf(req({ dpop: 'x, y' }, ['DPoP', 'x', 'dpop', 'y']))).toBeNull();
    expect(dpopHeaderOf(req({ dpop: 'x, ' }, ['DPoP', 'x', 'dpop', '']))).toBeNull();
  });
});

describe('MemoryReplayCache', () => {
  it('refuses a replay, keeps live entries when full (503), and frees expired ones', () => {
    const events: unknown[] = [];
    const cache = new MemoryReplayCache(1000, 60_000, (event) => void events.push(event));
    expect(cache.firstUse('c:one', 'k1', 'a', 0)).toBe(true);
    expect(cache.firstUse('c:one', 'k1', 'a', 1)).toBe(false);
    // The same jti under another key is another proof.
    expect(cache.firstUse('c:two', 'k2', 'a', 1)).toBe(true);
    for (let i = 1; i < 100; i++) expect(cache.firstUse('c:one', `k${i % 10}`, `j${i}`, 2)).toBe(true);
    // c:one holds its share (a tenth of 1000) over ten keys: refused under a new key too, never evicting.
    expect(() => cache.firstUse('c:one', 'k1', 'more', 3)).toThrow(TemporarilyUnavailableError);
    expect(() => cache.firstUse('c:one', 'fresh-key', 'more2', 3)).toThrow(TemporarilyUnavailableError);
    expect(events).toEqual([{ type: 'dpop_replay_cache.full', scope: 'client', entries: 101 }]);
    expect(cache.firstUse('c:one', 'k1', 'a', 3)).toBe(false);
    // Other clients still get in.
    expect(cache.firstUse('c:three', 'k3', 'b', 3)).toBe(true);
    // After the window, the entries are gone.
    expect(cache.firstUse('c:one', 'k1', 'more', 60_003)).toBe(true);
    expect(cache.size).toBe(1);
  });

  it('counts a service account in its client account\'s share, or in its own without one', () => {
    expect(replayOwnerOf({ clientId: 'esa_a', clientAccountId: 'acme' })).toBe(replayOwnerOf({ clientId: 'esa_b', clientAccountId: 'acme' }));
    expect(replayOwnerOf({ clientId: 'esa_a', clientAccountId: null })).not.toBe(replayOwnerOf({ clientId: 'esa_b', clientAccountId: null }));
    // A client account named like a client ID is still another share.
    expect(replayOwnerOf({ clientId: 'x', clientAccountId: null })).not.toBe(replayOwnerOf({ clientId: 'y', clientAccountId: 'x' }));
  });
});
