/**
 * isCrossOriginRequest(), framework-free: which requests a browser marks as sent from another origin.
 * Over HTTP the admin router, the self-service page and requireActor() are tested with it; these rows
 * cover what a plain test server cannot show, a request that came over TLS.
 */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { isCrossOriginRequest } from '../../src/index.js';

function requestOf(headers: Record<string, string>, tls: { encrypted?: boolean; protocol?: string } = {}): IncomingMessage {
  const req = { headers, socket: { encrypted: tls.encrypted } } as unknown as IncomingMessage;
  if (tls.protocol !== undefined) (req as unknown as { protocol: string }).protocol = tls.protocol;
  return req;
}

const HOST = 'app.example.test';

describe('isCrossOriginRequest', () => {
  // Fetch Metadata (W3C): Sec-Fetch-Site says it when the browser sends it.
  it.each([
    ['same-origin', false],
    ['none', false],
    ['same-site', true],
    ['cross-site', true],
  ])('Sec-Fetch-Site: %s → %s', (site, cross) => {
    expect(isCrossOriginRequest(requestOf({ 'sec-fetch-site': site, host: HOST }))).toBe(cross);
  });

  // RFC 6454 §4: an origin is a scheme, a host and a port; §7: `Origin: null` is an opaque origin.
  it.each([
    ['https://app.example.test', { encrypted: true }, false],
    ['https://evil.example', { encrypted: true }, true],
    ['null', {}, true],
    // A plain-http page of the same host is another origin of a request that came over TLS.
    ['http://app.example.test', { encrypted: true }, true],
    ['http://app.example.test', { protocol: 'https' }, true],
    // Over plain HTTP (or behind a proxy Express does not trust) the scheme of the request is unknown: the host decides.
    ['http://app.example.test', {}, false],
    ['https://app.example.test', { protocol: 'http' }, false],
  ] as const)('Origin: %s, arrived with %o → %s', (origin, tls, cross) => {
    expect(isCrossOriginRequest(requestOf({ origin, host: HOST }, tls))).toBe(cross);
  });

  it('a request without either header (a backend client, curl) is not cross-origin', () => {
    expect(isCrossOriginRequest(requestOf({ host: HOST }, { encrypted: true }))).toBe(false);
  });
});
