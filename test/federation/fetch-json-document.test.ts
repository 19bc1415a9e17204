/**
 * Fetching an outside issuer's documents (src/federation/fetch-json-document.ts) against a real
 * issuer on loopback. The rule: keys are fetched "over https (plain http only for loopback issuers
 * when explicitly allowed ...), with a timeout, a size limit, no redirects to other hosts".
 */
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fetchPolicyProblem } from '../../src/federation/address-policy.js';
import { cacheMaxAge, fetchJsonDocument, type FetchJsonDocumentOptions } from '../../src/federation/fetch-json-document.js';
import { startLocalIssuer, type LocalIssuer, type LocalIssuerMode } from '../helpers/local-oidc-issuer.js';

/** Room for a loaded machine: fetches that should succeed are never cut. */
const options: FetchJsonDocumentOptions = { timeout: 2000, maxBytes: 64 * 1024, allowHttpLoopback: true, allowPrivateNetworks: false };
/** For the fetches that should be cut at their deadline. */
const short: FetchJsonDocumentOptions = { ...options, timeout: 200 };
/** The real setTimeout, for waiting on the issuer while the fetch's clock is held. */
const realSetTimeout = globalThis.setTimeout;

let idp: LocalIssuer;
beforeEach(async () => {
  idp = await startLocalIssuer();
});
afterEach(async () => {
  await idp.close();
});

/** A TCP listener on 127.0.0.1 that counts the connections it accepts, and closes each at once. */
async function countingListener(): Promise<{ port: number; accepted: () => number; close: () => Promise<void> }> {
  let accepted = 0;
  const server = createServer((socket: Socket) => {
    accepted += 1;
    socket.destroy();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    port: (server.address() as AddressInfo).port,
    accepted: () => accepted,
    close: () => new Promise((done) => server.close(() => done())),
  };
}

/**
 * Fetches the JWK Set on a held clock (setTimeout and Date faked), `spentMs` of its timeout already
 * spent, and resolves with its failure. The deadline cannot pass before the issuer has the request
 * (waited for in real time): on a real clock, a process descheduled for longer than the time left runs
 * its timers before its I/O when it resumes, and the fetch is cut before the issuer ever saw it. Then
 * the clock is moved to 1 ms before the deadline (still pending) and to the deadline (cut).
 */
async function cutAtDeadline(fetchOptions: FetchJsonDocumentOptions, spentMs = 0): Promise<Error> {
  const before = idp.fetches('jwks');
  const msLeft = fetchOptions.timeout - spentMs;
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  try {
    let settled = false;
    const failure = fetchJsonDocument(idp.jwksUri, { ...fetchOptions, startedAt: Date.now() - spentMs }).then(
      () => new Error('the fetch succeeded'),
      (error: Error) => ((settled = true), error),
    );
    const waitUntil = performance.now() + 5000;
    while (idp.fetches('jwks') === before && !settled && performance.now() < waitUntil) await new Promise((resolve) => realSetTimeout(resolve, 5));
    expect(idp.fetches('jwks'), 'the issuer got the request').toBe(before + 1);
    await vi.advanceTimersByTimeAsync(msLeft - 1);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    return await failure;
  } finally {
    vi.useRealTimers();
  }
}

describe('fetchJsonDocument', () => {
  it('GETs the discovery document and the JWK Set as JSON objects', async () => {
    const discovery = await fetchJsonDocument(idp.discoveryUrl, options);
    expect(discovery.body).toMatchObject({ issuer: idp.issuer, jwks_uri: idp.jwksUri });
    const jwks = await fetchJsonDocument(idp.jwksUri, options);
    expect(jwks.body).toEqual(idp.jwks());
    expect(jwks.maxAge).toBeUndefined();
  });

  // "plain http only for loopback issuers when explicitly allowed"
  it('refuses plain http without allowHttpLoopback, before any request', async () => {
    await expect(fetchJsonDocument(idp.jwksUri, { ...options, allowHttpLoopback: false })).rejects.toThrow(/plain http/);
    expect(idp.requests).toHaveLength(0);
  });

  it('refuses plain http to a host that is not loopback, whatever the setting', async () => {
    expect(fetchPolicyProblem('http://example.com/jwks', true)).toMatch(/https/);
    await expect(fetchJsonDocument('http://example.com/jwks', options)).rejects.toThrow(/https/);
  });

  // A JWK Set URL may be as long as a credential may name one (2048 characters), longer than an issuer.
  it('fetches a JWK Set URL longer than any issuer identifier, up to the JWK Set URL limit', () => {
    const long = `https://keys.example.com/${'k'.repeat(1500)}`;
    expect(fetchPolicyProblem(long, false)).toBeUndefined();
    expect(fetchPolicyProblem(`${long}${'k'.repeat(600)}`, false)).toMatch(/at most 2048 characters/);
  });

  // "with a timeout": the deadline covers connecting, the headers and the body.
  it('cuts a server that accepts the request and never answers at the timeout', async () => {
    await idp.setMode('hang');
    expect((await cutAtDeadline(short)).message).toBe(`${idp.jwksUri} did not answer within 200 ms`);
    expect(idp.fetches('jwks')).toBe(1);
  });

  // Several fetches can share one timeout (discovery, then the JWK Set it names).
  it('counts the timeout from startedAt, and makes no request once it has run out', async () => {
    await expect(fetchJsonDocument(idp.jwksUri, { ...options, startedAt: Date.now() - 2000 })).rejects.toThrow(`${idp.jwksUri} was not fetched: the 2000 ms were spent`);
    expect(idp.requests).toHaveLength(0);
    // 1000 ms left, an answer after 1500 ms: the request is made, and cut at the 1000 ms left.
    await idp.setMode({ delay: 1500 });
    expect((await cutAtDeadline(options, 1000)).message).toBe(`${idp.jwksUri} did not answer within 2000 ms`);
    expect(idp.fetches('jwks')).toBe(1);
  });

  it('fails on a refused connection (the issuer is down)', async () => {
    await idp.setMode('down');
    await expect(fetchJsonDocument(idp.jwksUri, options)).rejects.toThrow(`${idp.jwksUri} could not be fetched: ECONNREFUSED`);
  });

  it('fails on a 200 whose body is not JSON', async () => {
    await idp.setMode('garbage');
    await expect(fetchJsonDocument(idp.jwksUri, options)).rejects.toThrow(`${idp.jwksUri} is not valid JSON`);
  });

  // "a size limit"
  it('refuses a body whose Content-Length is over the limit without reading it', async () => {
    await idp.setMode({ huge: 5 });
    await expect(fetchJsonDocument(idp.jwksUri, options)).rejects.toThrow(`${idp.jwksUri} is larger than 65536 bytes`);
  });

  it('stops reading a body without Content-Length once it passes the limit', async () => {
    await idp.setMode({ huge: 5, announceLength: false });
    await expect(fetchJsonDocument(idp.jwksUri, options)).rejects.toThrow(`${idp.jwksUri} is larger than 65536 bytes`);
  });

  it('answers anything but 200 with a failure', async () => {
    await idp.setMode({ status: 404 });
    await expect(fetchJsonDocument(idp.jwksUri, options)).rejects.toThrow(`${idp.jwksUri} answered HTTP 404`);
    await idp.setMode({ status: 500 });
    await expect(fetchJsonDocument(idp.jwksUri, options)).rejects.toThrow('answered HTTP 500');
    // A 304 or 300 is no redirect to follow.
    await idp.setMode({ status: 304 });
    await expect(fetchJsonDocument(idp.jwksUri, options)).rejects.toThrow('answered HTTP 304');
  });

  // "no redirects to other hosts"
  it('refuses a redirect to another host, even one that is the same server under another name', async () => {
    await idp.setMode({ redirect: idp.movedJwksUri.replace('127.0.0.1', 'localhost') });
    await expect(fetchJsonDocument(idp.jwksUri, options)).rejects.toThrow(`${idp.jwksUri} redirects to another host`);
    expect(idp.fetches('jwks')).toBe(1);
    expect(idp.requests.map((r) => r.path)).toEqual(['/jwks']);
  });

  it('refuses a redirect to another port of the same host', async () => {
    const other = await startLocalIssuer();
    try {
      await idp.setMode({ redirect: other.jwksUri });
      await expect(fetchJsonDocument(idp.jwksUri, options)).rejects.toThrow('redirects to another host');
      expect(other.requests).toHaveLength(0);
    } finally {
      await other.close();
    }
  });

  it('follows a redirect to the same origin, relative or absolute', async () => {
    await idp.setMode({ redirect: '/jwks-moved', status: 301 });
    expect((await fetchJsonDocument(idp.jwksUri, options)).body).toEqual(idp.jwks());
    await idp.setMode({ redirect: idp.movedJwksUri, status: 307 });
    expect((await fetchJsonDocument(idp.jwksUri, options)).body).toEqual(idp.jwks());
    expect(idp.requests.map((r) => r.path)).toEqual(['/jwks', '/jwks-moved', '/jwks', '/jwks-moved']);
  });

  // A fetch leaves nothing behind: once it settles, its connections are closed, whatever the
  // server still sends (a redirect whose body never ends, a body over the limit, a hang).
  it('closes the connection of a redirect whose body never ends once the fetch settles', async () => {
    await idp.setMode({ redirect: '/jwks-moved', endlessBody: true });
    expect((await fetchJsonDocument(idp.jwksUri, options)).body).toEqual(idp.jwks());
    expect(idp.requests.map((r) => r.path)).toEqual(['/jwks', '/jwks-moved']);
    await vi.waitFor(() => expect(idp.openConnections()).toBe(0), { timeout: 1000 });
  });

  it('closes its connection on every outcome: a document, a failure, the size limit, the timeout', async () => {
    const settled = async (mode: LocalIssuerMode): Promise<void> => {
      await idp.setMode(mode);
      if (mode === 'hang') await cutAtDeadline(short);
      else await fetchJsonDocument(idp.jwksUri, options).catch(() => undefined);
      await vi.waitFor(() => expect(idp.openConnections()).toBe(0), { timeout: 1000 });
    };
    await settled('normal');
    await settled({ status: 500 });
    await settled({ redirect: 'https://elsewhere.example.com/jwks', endlessBody: true });
    await settled({ huge: 5, announceLength: false });
    await settled({ huge: 5 });
    await settled('hang');
    expect(idp.fetches('jwks')).toBe(6);
  });

  it('follows at most two same-origin redirects', async () => {
    // Every request to /jwks redirects to /jwks again.
    await idp.setMode({ redirect: idp.jwksUri });
    await expect(fetchJsonDocument(idp.jwksUri, options)).rejects.toThrow(`${idp.jwksUri} redirects too many times`);
    expect(idp.fetches('jwks')).toBe(3);
  });

  it('fails on JSON that is not an object', async () => {
    await idp.setMode({ body: '[{"kty":"RSA"}]' });
    await expect(fetchJsonDocument(idp.jwksUri, options)).rejects.toThrow(`${idp.jwksUri} is not a JSON object`);
    await idp.setMode({ body: 'null' });
    await expect(fetchJsonDocument(idp.jwksUri, options)).rejects.toThrow('is not a JSON object');
  });

  it('reads max-age from Cache-Control (no-store and no-cache count as 0)', async () => {
    idp.cacheControl = 'public, max-age=600';
    expect((await fetchJsonDocument(idp.jwksUri, options)).maxAge).toBe(600);
    idp.cacheControl = 'no-store';
    expect((await fetchJsonDocument(idp.jwksUri, options)).maxAge).toBe(0);
    expect(cacheMaxAge('max-age=10, no-cache')).toBe(0);
    expect(cacheMaxAge('private')).toBeUndefined();
    expect(cacheMaxAge('max-age=abc')).toBeUndefined();
    expect(cacheMaxAge('MAX-AGE="42"')).toBe(42);
  });

  // docs/security.md, "Fetching outside issuers' documents": no document is fetched from a loopback
  // address without federation.allowHttpLoopback, checked on the address connected to, whether the
  // URL names it literally or by a host name that resolves to it: no connection is even made.
  it('connects to no loopback address without allowHttpLoopback, named literally or by a host name', async () => {
    const listener = await countingListener();
    try {
      const refused = { ...options, allowHttpLoopback: false };
      for (const host of ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]']) {
        const url = `https://${host}:${listener.port}/jwks`;
        await expect(fetchJsonDocument(url, refused)).rejects.toThrow(new RegExp(`^${url.replace(/[.[\]]/g, '\\$&')} could not be fetched: \\S+ is a loopback address`));
      }
      expect(listener.accepted()).toBe(0);
      // With the opt-in, the same listener is reached (and the TLS handshake fails): the count is real.
      await expect(fetchJsonDocument(`https://127.0.0.1:${listener.port}/jwks`, options)).rejects.toThrow('could not be fetched');
      expect(listener.accepted()).toBe(1);
    } finally {
      await listener.close();
    }
  });

  // The checked lookup hands the connection the addresses it resolved: a host name that resolves to
  // an allowed address is fetched as before.
  it('fetches through a host name when the addresses it resolves to are allowed', async () => {
    const byName = idp.jwksUri.replace('127.0.0.1', 'localhost');
    expect((await fetchJsonDocument(byName, options)).body).toEqual(idp.jwks());
    expect(idp.fetches('jwks')).toBe(1);
  });

  // "refuse by default to fetch from loopback, private, link-local and unique-local addresses", with
  // an opt-in for private networks; a refusal fails like an unreachable server, through the same path.
  it.each([
    ['a private network address', 'https://10.1.2.3/jwks', '10.1.2.3 is a private network address'],
    ['a unique-local address', 'https://[fd00::1]/jwks', 'fd00::1 is a private network address'],
    ['a cloud metadata service', 'https://169.254.169.254/latest/meta-data', '169.254.169.254 is a link-local or reserved address'],
    ['an IPv4-mapped private address', 'https://[::ffff:192.168.0.1]/jwks', '::ffff:c0a8:1 is a private network address'],
  ])('refuses %s before any connection, as it fails on a closed port', async (_name, url, problem) => {
    await expect(fetchJsonDocument(url, options)).rejects.toThrow(`${url} could not be fetched: ${problem}`);
    await idp.setMode('down');
    await expect(fetchJsonDocument(idp.jwksUri, options)).rejects.toThrow(`${idp.jwksUri} could not be fetched: ECONNREFUSED`);
  });

  // One time shape: a failure is answered one second after the fetch began (or at its deadline when
  // sooner), not when it is known, so the time of the answer does not tell a refused address from a
  // closed port, a reset or an error answer.
  it('answers a refused address and a closed port one second after the start, not before', async () => {
    await idp.setMode('down');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      for (const url of ['https://10.1.2.3/jwks', idp.jwksUri]) {
        let settled = false;
        const failure = fetchJsonDocument(url, { ...options, timeout: 5000 }).catch((error: Error) => {
          settled = true;
          return error;
        });
        await vi.advanceTimersByTimeAsync(999);
        expect(settled).toBe(false);
        await vi.advanceTimersByTimeAsync(1);
        expect(((await failure) as Error).message).toMatch(/could not be fetched: (10\.1\.2\.3 is a private network address|ECONNREFUSED)/);
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it('answers a failure at the deadline when the timeout is under one second', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      let settled = false;
      const failure = fetchJsonDocument('https://10.1.2.3/jwks', { ...options, timeout: 300 }).catch(() => {
        settled = true;
      });
      await vi.advanceTimersByTimeAsync(299);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await failure;
      expect(settled).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
