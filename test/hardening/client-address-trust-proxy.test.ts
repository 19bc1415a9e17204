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

  it('with trust proxy off (the default), X-Forwarded-For is ignored: the socket address is counted', async () => {
    const { app, sa } = createTestApp({ express: version, failureLimit: { max: 2, windowSeconds: 60 } });
    const live = await listen(app);
    close = async () => {
      await live.close();
      await sa.close();
    };
    expect((await attempt(live, '203.0.113.1')).status).toBe(401);
    expect((await attempt(live, '203.0.113.2')).status).toBe(401);
    // A third forwarded address gets no fresh budget: all three came from 127.0.0.1.
    expect((await attempt(live, '203.0.113.3')).status).toBe(429);
  });

  it('with trust proxy on, each forwarded address has its own budget', async () => {
    const { app, sa } = createTestApp({ express: version, failureLimit: { max: 1, windowSeconds: 60 } });
    app.set('trust proxy', true);
    const live = await listen(app);
    close = async () => {
      await live.close();
      await sa.close();
    };
    expect((await attempt(live, '203.0.113.1')).status).toBe(401);
    expect((await attempt(live, '203.0.113.2')).status).toBe(401);
    expect((await attempt(live, '203.0.113.1')).status).toBe(429);
  });

  it('a sub-app mounting the token router inherits its parent app\'s trust proxy', async () => {
    const { sa } = createTestApp({ express: version, failureLimit: { max: 1, windowSeconds: 60 } });
    const express = (version === 4 ? express4 : express5) as unknown as typeof express5;
    const parent = express();
    parent.set('trust proxy', true);
    const child = express();
    child.use('/oauth', sa.tokenRouter);
    parent.use(child);
    const live = await listen(parent);
    close = async () => {
      await live.close();
      await sa.close();
    };
    expect((await attempt(live, '203.0.113.1')).status).toBe(401);
    expect((await attempt(live, '203.0.113.2')).status).toBe(401);
    expect((await attempt(live, '203.0.113.1')).status).toBe(429);
  });
});
