/**
 * Shares of the outside issuers' key cache (src/federation/source-shares.ts): whoever registers
 * federated credentials chooses their JWK Set URLs, so one client account that uses more sources than
 * the cache holds (1000) must not push another client account's issuers out. Each client account keeps
 * at most 100 sources; past that its own least recently used one leaves. Fetches are counted on real
 * local servers; the clock never moves, so every fetch counted is one a cache miss caused.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveFederation } from '../../src/federation/federation-options.js';
import { IssuerKeySets, type FederatedKeySource } from '../../src/federation/issuer-key-sets.js';
import { MAX_OWNERS, MAX_SOURCES_PER_OWNER, SourceShares } from '../../src/federation/source-shares.js';
import { startLocalIssuer, type LocalIssuer } from '../helpers/local-oidc-issuer.js';

const CACHE_SIZE = 1000;
const now = new Date('2026-03-01T12:00:00Z');

let victim: LocalIssuer;
/** An issuer of its own that serves one JWK Set at every path, and counts the requests. */
const many = createServer();
let manyOrigin = '';
let manyFetches = 0;

beforeAll(async () => {
  victim = await startLocalIssuer();
  const { publicKey } = await generateKeyPair('ES256');
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] });
  many.on('request', (_req, res) => {
    manyFetches++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
  });
  await new Promise<void>((done) => many.listen(0, '127.0.0.1', done));
  manyOrigin = `http://127.0.0.1:${(many.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await victim.close();
  await new Promise<void>((done) => many.close(() => done()));
});

const keySets = () => new IssuerKeySets({ settings: resolveFederation({ allowHttpLoopback: true, fetchTimeout: 2000 }), now: () => now });
/** Uses a source as a token verified with its keys would (any key set verifies here). */
const use = (sets: IssuerKeySets, source: FederatedKeySource) => sets.verify(source, async () => ({ result: 'ok', mayBeRotated: false }));
const nth = (i: number, owner: string | null): FederatedKeySource => ({ issuer: manyOrigin, jwksUri: `${manyOrigin}/jwks/${i}`, owner });

describe('the key cache’s shares per client account', () => {
  it(`one client account using ${CACHE_SIZE + 10} sources pushes out neither another client account’s issuer nor an operator’s`, async () => {
    const sets = keySets();
    const globex: FederatedKeySource = { issuer: victim.issuer, jwksUri: victim.jwksUri, owner: 'globex' };
    const operators = nth(-1, null);
    expect(await use(sets, globex)).toBe('ok');
    expect(await use(sets, operators)).toBe('ok');
    const before = { globex: victim.fetches('jwks'), many: manyFetches };
    expect(before.globex).toBe(1);

    for (let i = 0; i < CACHE_SIZE + 10; i++) expect(await use(sets, nth(i, 'acme'))).toBe('ok');
    expect(manyFetches - before.many).toBe(CACHE_SIZE + 10);

    expect(await use(sets, globex)).toBe('ok');
    expect(await use(sets, operators)).toBe('ok');
    expect(victim.fetches('jwks')).toBe(before.globex);
    expect(manyFetches - before.many).toBe(CACHE_SIZE + 10); // the operator's source was still cached
  }, 60_000);

  it(`a client account keeps its ${MAX_SOURCES_PER_OWNER} most recent sources; an older one is fetched again, unless another holds it`, async () => {
    const sets = keySets();
    await use(sets, nth(0, 'acme'));
    await use(sets, nth(1, 'acme'));
    await use(sets, nth(1, 'initech')); // held by another client account too
    for (let i = 2; i <= MAX_SOURCES_PER_OWNER + 1; i++) await use(sets, nth(i, 'acme'));
    const fetched = manyFetches;
    await use(sets, nth(MAX_SOURCES_PER_OWNER + 1, 'acme')); // recent: cached
    await use(sets, nth(1, 'acme')); // out of acme's share, still initech's: cached
    expect(manyFetches).toBe(fetched);
    await use(sets, nth(0, 'acme')); // out of acme's share: fetched again
    expect(manyFetches).toBe(fetched + 1);
  });
});

describe('SourceShares', () => {
  it(`never drops the source being held when tracking a new client account pushes out the ${MAX_OWNERS}th least recent one`, () => {
    const cache = new Set<string>();
    const shares = new SourceShares((key) => cache.delete(key));
    const use = (key: string, owner: string) => {
      cache.add(key);
      shares.hold(key, owner);
    };
    use('shared', 'initech'); // initech's only source; initech becomes the least recent client account
    for (let i = 1; i < MAX_OWNERS; i++) use(`own-${i}`, `tenant-${i}`);
    use('shared', 'acme'); // tracking acme forgets initech, which held "shared" alone until now
    expect(cache.has('shared')).toBe(true);
    // acme holds it: it leaves only past acme's own share.
    for (let i = 0; i < MAX_SOURCES_PER_OWNER - 1; i++) use(`acme-${i}`, 'acme');
    expect(cache.has('shared')).toBe(true);
    use('acme-last', 'acme');
    expect(cache.has('shared')).toBe(false);
  });
});
