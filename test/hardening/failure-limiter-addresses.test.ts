/**
 * The per-address count of the failure limiter (docs/security.md, "Which address is counted"), over a
 * real listening server with `trust proxy` and X-Forwarded-For: IPv6 clients are counted per /64 by
 * default (`failureLimit.ipv6Prefix`), so one host cannot get a fresh budget from every address of its
 * prefix, and `::ffff:127.0.0.1` is the same client as `127.0.0.1`. Each request uses a fresh unknown
 * client ID, so only the address can lock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FailureLimitOptions } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { listen, tokenRequest, type LiveServer } from './helpers.js';

const WRONG = 'esas_0000000000000000_' + '0'.repeat(50); // refused before bcrypt: fast, still a failure
let n = 0;
const attempt = (server: LiveServer, address: string) =>
  tokenRequest(server, { grant_type: 'client_credentials', client_id: `esa_unknown${n++}`, client_secret: WRONG }, { 'x-forwarded-for': address });

describe('failure limiter: which address is counted', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  async function server(failureLimit: FailureLimitOptions): Promise<LiveServer> {
    const { app, sa } = createTestApp({ failureLimit });
    app.set('trust proxy', true);
    const live = await listen(app);
    close = async () => {
      await live.close();
      await sa.close();
    };
    return live;
  }

  it('counts two addresses of one IPv6 /64 under one budget (the default prefix)', async () => {
    const s = await server({ max: 2, windowSeconds: 60 });
    expect((await attempt(s, '2001:db8:1:2::1')).status).toBe(401);
    expect((await attempt(s, '2001:db8:1:2:aaaa:bbbb:cccc:dddd')).status).toBe(401);
    expect((await attempt(s, '2001:db8:1:2::ffff')).status).toBe(429);
    // Another /64 has its own budget.
    expect((await attempt(s, '2001:db8:1:3::1')).status).toBe(401);
  });

  it('counts an IPv4-mapped IPv6 address and its IPv4 address under one budget', async () => {
    const s = await server({ max: 2, windowSeconds: 60 });
    expect((await attempt(s, '::ffff:127.0.0.1')).status).toBe(401);
    expect((await attempt(s, '127.0.0.1')).status).toBe(401);
    expect((await attempt(s, '::ffff:7f00:1')).status).toBe(429);
    expect((await attempt(s, '127.0.0.1')).status).toBe(429);
  });

  it('follows failureLimit.ipv6Prefix: with 128, each IPv6 address is counted on its own', async () => {
    const s = await server({ max: 1, windowSeconds: 60, ipv6Prefix: 128 });
    expect((await attempt(s, '2001:db8::1')).status).toBe(401);
    expect((await attempt(s, '2001:db8::2')).status).toBe(401);
    expect((await attempt(s, '2001:db8:0:0::1')).status).toBe(429);
  });

  it('with a /48, addresses of different /64s inside it share one budget', async () => {
    const s = await server({ max: 1, windowSeconds: 60, ipv6Prefix: 48 });
    expect((await attempt(s, '2001:db8:7:1::1')).status).toBe(401);
    expect((await attempt(s, '2001:db8:7:2::1')).status).toBe(429);
  });
});
