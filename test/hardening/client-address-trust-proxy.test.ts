/**
 * Which address the failure limiter counts follows Express's `trust proxy` setting exactly as `req.ip`
 * does (docs/security.md, "Which address is counted"): with the setting off (Express's default) an
 * X-Forwarded-For header is ignored and the socket's address is counted; with it on, the forwarded
 * address is; a sub-app that mounts the token router inherits its parent's setting. Each request uses
 * a fresh unknown client ID, so only the address can lock.
 */
import express5 from 'express';
import express4 from 'express4';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/create-app.js';
import { listen, tokenRequest, type LiveServer } from './helpers.js';

const WRONG = 'esas_0000000000000000_' + '0'.repeat(50); // refused before bcrypt: fast, still a failure
let n = 0;
const attempt = (server: LiveServer, forwardedFor: string) =>
  tokenRequest(server, { grant_type: 'client_credentials', client_id: `esa_unknown${n++}`, client_secret: WRONG }, { 'x-forwarded-for': forwardedFor });

describe.each([4, 5] as const)('failure limiter and trust proxy, Express %i', (version) => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  type Router = ReturnType<typeof createTestApp>['sa']['tokenRouter'];
  /**
   * Serves the test app (with `trust proxy` set when asked), or the host app `host` builds around the
   * token router, and closes it after the test.
   */
  async function serve(max: number, setup: { trustProxy: boolean } | { host: (router: Router) => Parameters<typeof listen>[0] }): Promise<LiveServer> {
    const { app, sa } = createTestApp({ express: version, failureLimit: { max, windowSeconds: 60 } });
    if ('trustProxy' in setup && setup.trustProxy) app.set('trust proxy', true);
    const live = await listen('host' in setup ? setup.host(sa.tokenRouter) : app);
    close = async () => {
      await live.close();
      await sa.close();
    };
    return live;
  }

  it('with trust proxy off (the default), X-Forwarded-For is ignored: the socket address is counted', async () => {
    const live = await serve(2, { trustProxy: false });
    expect((await attempt(live, '203.0.113.1')).status).toBe(401);
    expect((await attempt(live, '203.0.113.2')).status).toBe(401);
    // A third forwarded address gets no fresh budget: all three came from 127.0.0.1.
    expect((await attempt(live, '203.0.113.3')).status).toBe(429);
  });

  it('with trust proxy on, each forwarded address has its own budget', async () => {
    const live = await serve(1, { trustProxy: true });
    expect((await attempt(live, '203.0.113.1')).status).toBe(401);
    expect((await attempt(live, '203.0.113.2')).status).toBe(401);
    expect((await attempt(live, '203.0.113.1')).status).toBe(429);
  });

  it('a sub-app mounting the token router inherits its parent app\'s trust proxy', async () => {
    const live = await serve(1, { host: (router) => {
      const express = (version === 4 ? express4 : express5) as unknown as typeof express5;
      const parent = express();
      parent.set('trust proxy', true);
      const child = express();
      child.use('/oauth', router);
      parent.use(child);
      return parent;
    } });
    expect((await attempt(live, '203.0.113.1')).status).toBe(401);
    expect((await attempt(live, '203.0.113.2')).status).toBe(401);
    expect((await attempt(live, '203.0.113.1')).status).toBe(429);
  });

  it('with trust proxy off, an ip getter the host defined on app.request is still what is counted', async () => {
    const live = await serve(1, {
      host: (router) => {
        const express = (version === 4 ? express4 : express5) as unknown as typeof express5;
        const app = express();
        // A host that knows its edge puts the client's address in a header of its own.
        Object.defineProperty(app.request, 'ip', {
          configurable: true,
          get(this: { headers: Record<string, string | undefined> }) {
            return this.headers['x-client-address'];
          },
        });
        app.use('/oauth', router);
        return app;
      },
    });
    const from = (address: string) =>
      tokenRequest(live, { grant_type: 'client_credentials', client_id: `esa_unknown${n++}`, client_secret: WRONG }, { 'x-client-address': address });
    expect((await from('198.51.100.1')).status).toBe(401);
    expect((await from('198.51.100.2')).status).toBe(401);
    expect((await from('198.51.100.1')).status).toBe(429);
  });
});

// docs/security.md: "an ID a caller typed is shown only when it has the form of an ID, and anything that
// could be part of a secret is left out". Behind `trust proxy: true`, `req.ip` is the first entry of
// X-Forwarded-For, whatever the caller wrote there: the audit event shows it only when it is an address.
describe('the address of a client.authentication_failed audit event', () => {
  const flushAudit = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

  it('is the forwarded address when it is an IP address, and left out when the caller wrote anything else', async () => {
    const t = createTestApp({ failureLimit: false });
    t.app.set('trust proxy', true);
    const account = await t.sa.admin.createAccount({ name: 'forwarded' });
    const live = await listen(t.app);
    try {
      const fields = { grant_type: 'client_credentials', client_id: account.clientId, client_secret: WRONG };
      await tokenRequest(live, fields, { 'x-forwarded-for': '203.0.113.7, 10.0.0.1' });
      await tokenRequest(live, fields, { 'x-forwarded-for': `${account.secret.value}, 10.0.0.1` });
      await tokenRequest(live, fields, { 'x-forwarded-for': 'not an address at all' });
      // A port some proxies add (Azure App Service): the address without it.
      await tokenRequest(live, fields, { 'x-forwarded-for': '203.0.113.8:51234' });
      await tokenRequest(live, fields, { 'x-forwarded-for': '[2001:db8::1]:443' });
      await flushAudit();
      const failures = t.events.filter((event) => event.type === 'client.authentication_failed');
      expect(failures.map((event) => event.type === 'client.authentication_failed' && event.address)).toEqual(['203.0.113.7', undefined, undefined, '203.0.113.8', '2001:db8::1']);
      expect(JSON.stringify(failures)).not.toContain(account.secret.value.slice(5, 30));
    } finally {
      await live.close();
      await t.sa.close();
    }
  });
});
