/**
 * Caching, refreshing and outages of outside issuers' keys (src/federation/issuer-key-sets.ts), with
 * an injected clock and a real issuer on loopback. The rule: keys are "cached with the response's
 * max-age inside configured bounds, refreshed on an unknown `kid` at most once per interval per
 * issuer, and shared by concurrent requests (one fetch). An issuer that cannot be reached while its
 * cached keys still verify the token is no outage; an issuer that cannot be reached when keys are
 * needed is a 503 `temporarily_unavailable` with `Retry-After` ..., never a pass and never a crash."
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { resolveFederation, type FederationOptions } from '../../src/federation/federation-options.js';
import { IssuerKeySets, type IssuerKeySetsObserver } from '../../src/federation/issuer-key-sets.js';
import { FederatedKeysUnavailableError } from '../../src/errors.js';
import { verifyIssuerToken } from '../../src/client-auth/federated-method.js';
import { startLocalIssuer, type LocalIssuer } from '../helpers/local-oidc-issuer.js';

const AUDIENCE = 'https://api.example.com';
const START = new Date('2026-03-01T12:00:00Z').getTime();

/** An observer that records its calls, as a class implementing the interface. */
class RecordingObserver implements IssuerKeySetsObserver {
  readonly events: string[] = [];
  unavailable(issuer: string, error: Error): void {
    this.events.push(`unavailable ${issuer}: ${error.message}`);
  }
  recovered(issuer: string, downtimeMs: number): void {
    this.events.push(`recovered ${issuer} after ${downtimeMs} ms`);
  }
}

let idp: LocalIssuer;
let clock: number;
let observer: RecordingObserver;
beforeEach(async () => {
  idp = await startLocalIssuer();
  clock = START;
  observer = new RecordingObserver();
});
afterEach(async () => {
  await idp.close();
});

const advance = (seconds: number): void => {
  clock += seconds * 1000;
};

function keySets(options: FederationOptions = {}): IssuerKeySets {
  return new IssuerKeySets({
    // Room for a loaded machine; the tests of a hanging issuer ask for 200 ms.
    settings: resolveFederation({ allowHttpLoopback: true, fetchTimeout: 2000, ...options }),
    now: () => new Date(clock),
    observer,
  });
}

/** A fresh token at the current clock (each test's tokens live an hour). */
const token = (): Promise<string> => idp.kubernetesToken({ audience: AUDIENCE, now: new Date(clock) });
const verify = async (sets: IssuerKeySets, jwt?: string) => verifyIssuerToken(sets, jwt ?? (await token()), { issuer: idp.issuer, jwksUri: idp.jwksUri }, { audience: AUDIENCE });
/**
 * Waits until a background refresh under way has stored its keys. The issuer counts a fetch when the
 * request arrives, before the keys are stored (and their max-age counted from then), so the next step
 * of a test must not move the clock before this. A token of an unknown `kid` at the same clock joins
 * the refresh under way, and starts no fetch of its own inside the refresh interval.
 */
const refreshLanded = async (sets: IssuerKeySets): Promise<void> => {
  const fetches = idp.fetches('jwks');
  expect(await verify(sets, await idp.sign({ sub: 'x', aud: AUDIENCE }, { kid: 'not-published' }))).toBeUndefined();
  expect(idp.fetches('jwks')).toBe(fetches);
};
const unavailable = async (promise: Promise<unknown>): Promise<FederatedKeysUnavailableError> => {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(FederatedKeysUnavailableError);
  return error as FederatedKeysUnavailableError;
};

describe('IssuerKeySets: cache', () => {
  // "shared by concurrent requests (one fetch)"
  it('shares one fetch among concurrent verifications (discovery and JWK Set alike)', async () => {
    const sets = keySets();
    const jwt = await token();
    const results = await Promise.all(Array.from({ length: 20 }, () => verifyIssuerToken(sets, jwt, { issuer: idp.issuer }, { audience: AUDIENCE })));
    expect(results.every((r) => r !== undefined)).toBe(true);
    expect(idp.fetches('discovery')).toBe(1);
    expect(idp.fetches('jwks')).toBe(1);
  });

  it('uses cached keys without a request until they are stale (no max-age: minCacheSeconds)', async () => {
    const sets = keySets({ minCacheSeconds: 300 });
    expect(await verify(sets)).toBeDefined();
    advance(299);
    expect(await verify(sets)).toBeDefined();
    expect(idp.fetches('jwks')).toBe(1);
    advance(1);
    // Stale: verified at once with the cached keys, refreshed in the background.
    expect(await verify(sets)).toBeDefined();
    await vi.waitFor(() => expect(idp.fetches('jwks')).toBe(2), { timeout: 5000 });
  });

  // "cached with the response's max-age inside configured bounds"
  it("follows the response's max-age within [minCacheSeconds, maxCacheSeconds]", async () => {
    idp.cacheControl = 'max-age=1000';
    const sets = keySets({ minCacheSeconds: 60, maxCacheSeconds: 600 });
    await verify(sets);
    advance(599);
    await verify(sets);
    expect(idp.fetches('jwks')).toBe(1);
    advance(1); // 600 s: max-age 1000 was lowered to maxCacheSeconds
    idp.cacheControl = 'max-age=10';
    await verify(sets);
    await vi.waitFor(() => expect(idp.fetches('jwks')).toBe(2), { timeout: 5000 });
    await refreshLanded(sets);
    advance(59); // max-age 10 was raised to minCacheSeconds
    await verify(sets);
    expect(idp.fetches('jwks')).toBe(2);
    advance(1);
    idp.cacheControl = 'no-store'; // 0, raised to minCacheSeconds as well
    await verify(sets);
    await vi.waitFor(() => expect(idp.fetches('jwks')).toBe(3), { timeout: 5000 });
    await refreshLanded(sets);
    advance(59);
    await verify(sets);
    expect(idp.fetches('jwks')).toBe(3);
  });

  // "refreshed on an unknown `kid` at most once per interval per issuer"
  it('refetches once on a rotated key, then verifies tokens of the new key', async () => {
    const sets = keySets({ refreshInterval: 30 });
    expect(await verify(sets)).toBeDefined();
    const oldToken = await token();
    await idp.rotateKeys();
    advance(30);
    expect(await verify(sets)).toBeDefined();
    expect(idp.fetches('jwks')).toBe(2);
    // The old key left the set: its tokens are refused, and cause no fetch within the interval.
    expect(await verify(sets, oldToken)).toBeUndefined();
    expect(idp.fetches('jwks')).toBe(2);
  });

  it('keeps verifying tokens of the old key when the issuer publishes both', async () => {
    const sets = keySets();
    const oldToken = await token();
    expect(await verify(sets, oldToken)).toBeDefined();
    await idp.rotateKeys({ keepOld: true });
    advance(30);
    expect(await verify(sets)).toBeDefined();
    expect(await verify(sets, oldToken)).toBeDefined();
    expect(idp.fetches('jwks')).toBe(2);
  });

  it('refuses an unknown kid inside the interval without a fetch (a flood makes one fetch per interval)', async () => {
    const sets = keySets({ refreshInterval: 30 });
    await verify(sets);
    const madeUp = (n: number) => idp.sign({ sub: 'x', aud: AUDIENCE }, { kid: `made-up-${n}` });
    const flood = await Promise.all(Array.from({ length: 50 }, (_, n) => madeUp(n)));
    // Inside the interval after the first fetch: no refetch at all.
    for (const jwt of flood.slice(0, 10)) expect(await verify(sets, jwt)).toBeUndefined();
    expect(idp.fetches('jwks')).toBe(1);
    advance(30);
    expect((await Promise.all(flood.map((jwt) => verify(sets, jwt)))).every((r) => r === undefined)).toBe(true);
    expect(idp.fetches('jwks')).toBe(2);
    advance(29);
    for (const jwt of flood.slice(0, 10)) expect(await verify(sets, jwt)).toBeUndefined();
    expect(idp.fetches('jwks')).toBe(2);
    advance(1);
    expect(await verify(sets, flood[0])).toBeUndefined();
    expect(idp.fetches('jwks')).toBe(3);
    // Valid tokens verify all along.
    expect(await verify(sets)).toBeDefined();
  });

  it('never uses cached keys more than 24 hours after their last successful fetch', async () => {
    const sets = keySets({ minCacheSeconds: 86_400, maxCacheSeconds: 604_800 });
    idp.cacheControl = 'max-age=604800';
    await verify(sets);
    advance(86_399);
    expect(await verify(sets)).toBeDefined();
    expect(idp.fetches('jwks')).toBe(1);
    await idp.setMode('down');
    advance(1);
    const error = await unavailable(verify(sets));
    expect(error.issuer).toBe(idp.issuer);
  });

  it('bounds its memory: sources beyond the cap are dropped, least recently used first', async () => {
    const sets = keySets();
    await verify(sets);
    // 1000 other (refused, http without a listener) sources push the first one out. Side by side:
    // each failed fetch is answered one second after it began (before the 2 s fetchTimeout), whenever it failed.
    const jwt = await token();
    await Promise.all(
      Array.from({ length: 1000 }, (_, n) => verifyIssuerToken(sets, jwt, { issuer: idp.issuer, jwksUri: `http://127.0.0.1:1/jwks-${n}` }, { audience: AUDIENCE }).catch(() => undefined)),
    );
    expect(await verify(sets)).toBeDefined();
    expect(idp.fetches('jwks')).toBe(2);
  }, 60_000);
});

describe('IssuerKeySets: outages', () => {
  // "an issuer that cannot be reached when keys are needed is a 503 `temporarily_unavailable` with `Retry-After`"
  it('throws FederatedKeysUnavailableError when the issuer hangs and no keys are cached (cut at the timeout)', async () => {
    await idp.setMode('hang');
    const error = await unavailable(verify(keySets({ refreshInterval: 30, fetchTimeout: 200 })));
    expect(error.message).toBe(`The keys of ${idp.issuer} cannot be fetched: ${idp.jwksUri} did not answer within 200 ms`);
    expect(error.retryAfterSeconds).toBe(30);
    expect(JSON.stringify(error)).not.toContain('eyJ');
  });

  it.each([
    ['down', 'down', 'could not be fetched: ECONNREFUSED'],
    ['answers garbage', 'garbage', 'is not valid JSON'],
    ['answers a huge body', { huge: 2 }, 'is larger than 262144 bytes'],
    ['answers a JSON object that is no JWK Set', { body: '{"keys":"none"}' }, 'is not a JWK Set'],
    ['redirects to another host', { redirect: 'http://localhost:1/jwks' }, 'redirects to another host'],
    ['answers 500', { status: 500 }, 'answered HTTP 500'],
  ] as const)('throws FederatedKeysUnavailableError when the issuer %s and no keys are cached', async (_name, mode, cause) => {
    await idp.setMode(mode);
    const error = await unavailable(verify(keySets()));
    expect(error.message).toContain(cause);
  });

  it('follows a same-host redirect of the JWK Set', async () => {
    await idp.setMode({ redirect: idp.movedJwksUri }, 'jwks');
    expect(await verify(keySets())).toBeDefined();
    expect(idp.requests.map((r) => r.path)).toEqual(['/jwks', '/jwks-moved']);
  });

  // "An issuer that cannot be reached while its cached keys still verify the token is no outage"
  it('verifies at once with stale cached keys while the issuer hangs', async () => {
    // A fetch timeout well above any pause of a loaded machine, so the refresh cannot fail before the
    // first assertion below.
    const sets = keySets({ minCacheSeconds: 60, fetchTimeout: 1500 });
    await verify(sets);
    await idp.setMode('hang');
    advance(61);
    expect(await verify(sets)).toBeDefined();
    // The answer did not wait for the refresh, which still hangs: it has not failed yet.
    expect(observer.events).toEqual([]);
    // The background refresh reaches the issuer after the answer, not before it.
    await vi.waitFor(() => expect(idp.fetches('jwks')).toBe(2), { timeout: 5000 });
    await vi.waitFor(() => expect(observer.events).toHaveLength(1), { timeout: 5000 });
    expect(observer.events[0]).toBe(`unavailable ${idp.issuer}: ${idp.jwksUri} did not answer within 1500 ms`);
    expect(await verify(sets)).toBeDefined();
  });

  it('does not retry a failed fetch before the refresh interval; Retry-After counts down to it', async () => {
    const sets = keySets({ refreshInterval: 30 });
    await idp.setMode('down');
    expect((await unavailable(verify(sets))).retryAfterSeconds).toBe(30);
    await idp.setMode('normal');
    advance(12.5);
    expect((await unavailable(verify(sets))).retryAfterSeconds).toBe(18);
    advance(17.4);
    expect((await unavailable(verify(sets))).retryAfterSeconds).toBe(1);
    expect(idp.requests).toHaveLength(0);
    advance(0.1);
    expect(await verify(sets)).toBeDefined();
    expect(idp.fetches('jwks')).toBe(1);
  });

  it('throws on an unknown kid when the issuer cannot be reached, rather than refuse a possibly valid token', async () => {
    const sets = keySets({ refreshInterval: 30 });
    await verify(sets);
    await idp.rotateKeys();
    await idp.setMode('down');
    advance(30);
    const rotated = await token();
    expect((await unavailable(verify(sets, rotated))).retryAfterSeconds).toBe(30);
    // Inside the interval: no new attempt, still a 503; tokens of the cached key still verify.
    advance(10);
    expect((await unavailable(verify(sets, rotated))).retryAfterSeconds).toBe(20);
    await idp.setMode('normal');
    advance(20);
    expect(await verify(sets, rotated)).toBeDefined();
  });

  it('tells the observer once when a source starts failing and once when it recovers', async () => {
    const sets = keySets({ refreshInterval: 30 });
    await idp.setMode('down');
    for (let n = 0; n < 5; n++) await verify(sets).catch(() => undefined);
    advance(30);
    for (let n = 0; n < 5; n++) await verify(sets).catch(() => undefined);
    expect(observer.events).toEqual([`unavailable ${idp.issuer}: ${idp.jwksUri} could not be fetched: ECONNREFUSED`]);
    await idp.setMode('normal');
    advance(30);
    for (let n = 0; n < 5; n++) expect(await verify(sets)).toBeDefined();
    expect(observer.events).toEqual([`unavailable ${idp.issuer}: ${idp.jwksUri} could not be fetched: ECONNREFUSED`, `recovered ${idp.issuer} after 60000 ms`]);
  });

  it('survives an observer that throws', async () => {
    const sets = new IssuerKeySets({
      settings: resolveFederation({ allowHttpLoopback: true, fetchTimeout: 200 }),
      now: () => new Date(clock),
      observer: {
        unavailable() {
          throw new Error('observer broke');
        },
        recovered() {
          throw new Error('observer broke');
        },
      },
    });
    await idp.setMode('down');
    await unavailable(verify(sets));
    await idp.setMode('normal');
    advance(30);
    expect(await verify(sets)).toBeDefined();
  });
});
