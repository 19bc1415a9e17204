/**
 * CONTRACT §2, 429 row: "too many failed attempts for one client ID or address → 429
 * too_many_requests with Retry-After; with a limit of N failures a minute, the first N failures get
 * 401 and every attempt after them, right or wrong, gets 429 until the window passes."
 * Run against the in-memory limiter and, when REDIS_URL is set, against a real Redis (ioredis).
 */
import Redis from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createServiceAccounts, MemoryAccountStore, type AuditEvent, type FailureLimitOptions } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { json, listen, redisUrl, RedisProxy, testKeyPrefix, tokenRequest, type LiveServer, type RawResponse } from './helpers.js';

const WRONG = 'esas_0000000000000000_' + '0'.repeat(50); // right shape, wrong checksum: refused before bcrypt

function expectError(res: RawResponse, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(json(res)).toEqual({ error: code, error_description: expect.any(String) });
}

function expect429(res: RawResponse): void {
  expectError(res, 429, 'too_many_requests');
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
}

interface Setup {
  server: LiveServer;
  clientId: string;
  secret: string;
  secretId: string;
  other: { clientId: string; secret: string };
  events: AuditEvent[];
  close(): Promise<void>;
}

async function setup(failureLimit: FailureLimitOptions | false, extra: { storeTimeout?: number } = {}): Promise<Setup> {
  // A Redis client still connecting is answered 503 (never a pass): the tests start once it is ready.
  if (failureLimit && failureLimit.redis) await (failureLimit.redis as Redis).ping();
  const { app, sa, events } = createTestApp({ failureLimit, ...extra });
  app.set('trust proxy', true);
  const account = await sa.admin.createAccount({ name: 'limited' });
  const other = await sa.admin.createAccount({ name: 'other' });
  const server = await listen(app);
  return {
    server,
    clientId: account.clientId,
    secret: account.secret.value,
    secretId: account.secret.id,
    other: { clientId: other.clientId, secret: other.secret.value },
    events,
    close: async () => {
      await server.close();
      await sa.close();
    },
  };
}

const grant = { grant_type: 'client_credentials' };
const from = (address: string) => ({ 'x-forwarded-for': address });

/** The behaviour every limiter backend must show. `limit` builds the failureLimit option per test. */
function describeLimiter(name: string, limit: (o: { max: number; windowSeconds: number }) => FailureLimitOptions) {
  describe(name, () => {
    let s: Setup | undefined;
    afterEach(async () => {
      await s?.close();
      s = undefined;
    });

    it('answers the first N failures of a client 401 and every attempt after them, right or wrong, 429', async () => {
      s = await setup(limit({ max: 3, windowSeconds: 60 }));
      for (let i = 0; i < 3; i++) {
        expectError(await tokenRequest(s.server, { ...grant, client_id: s.clientId, client_secret: WRONG }, from(`10.0.0.${i}`)), 401, 'invalid_client');
      }
      expect429(await tokenRequest(s.server, { ...grant, client_id: s.clientId, client_secret: WRONG }, from('10.0.1.1')));
      // The right secret, from a fresh address, is refused too: the client ID is locked for the window.
      expect429(await tokenRequest(s.server, { ...grant, client_id: s.clientId, client_secret: s.secret }, from('10.0.1.2')));
      // Another client from a fresh address is not affected.
      expect((await tokenRequest(s.server, { ...grant, client_id: s.other.clientId, client_secret: s.other.secret }, from('10.0.1.3'))).status).toBe(200);
    });

    it('counts failures per address too: N failures from one address over many client IDs lock that address', async () => {
      s = await setup(limit({ max: 3, windowSeconds: 60 }));
      for (let i = 0; i < 3; i++) {
        expectError(await tokenRequest(s.server, { ...grant, client_id: `esa_unknown${i}`, client_secret: WRONG }, from('10.1.0.1')), 401, 'invalid_client');
      }
      expect429(await tokenRequest(s.server, { ...grant, client_id: s.clientId, client_secret: s.secret }, from('10.1.0.1')));
      expect((await tokenRequest(s.server, { ...grant, client_id: s.clientId, client_secret: s.secret }, from('10.1.0.2'))).status).toBe(200);
    });

    it('never counts successes', async () => {
      s = await setup(limit({ max: 2, windowSeconds: 60 }));
      for (let i = 0; i < 6; i++) {
        expect((await tokenRequest(s.server, { ...grant, client_id: s.clientId, client_secret: s.secret }, from('10.2.0.1'))).status).toBe(200);
      }
      for (let i = 0; i < 2; i++) {
        expectError(await tokenRequest(s.server, { ...grant, client_id: s.clientId, client_secret: WRONG }, from('10.2.0.1')), 401, 'invalid_client');
      }
      expect429(await tokenRequest(s.server, { ...grant, client_id: s.clientId, client_secret: s.secret }, from('10.2.0.1')));
    });

    it('counts requests with no credentials, Basic failures and revoked secrets under the address', async () => {
      s = await setup(limit({ max: 3, windowSeconds: 60 }));
      expectError(await tokenRequest(s.server, grant, from('10.3.0.1')), 401, 'invalid_client');
      const basic = `Basic ${Buffer.from(`${s.clientId}:${WRONG}`).toString('base64')}`;
      const res = await tokenRequest(s.server, grant, { ...from('10.3.0.1'), authorization: basic });
      expectError(res, 401, 'invalid_client');
      expect(res.headers['www-authenticate']).toMatch(/^Basic realm=/);
      expectError(await tokenRequest(s.server, { ...grant, client_id: s.other.clientId, client_secret: s.secret }, from('10.3.0.1')), 401, 'invalid_client');
      const blocked = await tokenRequest(s.server, grant, { ...from('10.3.0.1'), authorization: basic });
      expect429(blocked);
      // A 429 carries no Basic challenge: it is not an authentication failure.
      expect(blocked.headers['www-authenticate']).toBeUndefined();
    });

    it('gives concurrent failures that all passed the check 429, so at most N are ever answered 401', async () => {
      s = await setup(limit({ max: 3, windowSeconds: 60 }));
      const server = s.server;
      const clientId = s.clientId;
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => tokenRequest(server, { ...grant, client_id: clientId, client_secret: WRONG }, from(`10.4.0.${i}`))),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses.filter((st) => st === 401)).toHaveLength(3);
      expect(statuses.filter((st) => st === 429)).toHaveLength(9);
      for (const r of results) if (r.status === 429) expect429(r);
    });

    it('lets the client in again once the window has passed', async () => {
      // 2 s, not 1: the 429 below must come while the window is open, also when a loaded machine pauses
      // the test for a second between the two requests (the Redis limiter's window runs on Redis's clock).
      s = await setup(limit({ max: 1, windowSeconds: 2 }));
      const server = s.server;
      const wrong = { ...grant, client_id: s.clientId, client_secret: WRONG };
      const right = { ...grant, client_id: s.clientId, client_secret: s.secret };
      expectError(await tokenRequest(server, wrong, from('10.5.0.1')), 401, 'invalid_client');
      const blocked = await tokenRequest(server, right, from('10.5.0.1'));
      expect429(blocked);
      // Retry-After never promises more than the window.
      expect(Number(blocked.headers['retry-after'])).toBeLessThanOrEqual(2);
      await vi.waitFor(
        async () => {
          expect((await tokenRequest(server, right, from('10.5.0.1'))).status).toBe(200);
        },
        { timeout: 8000, interval: 100 },
      );
    });

    it('reports a refused attempt to the audit hook as rate_limited, without the secret', async () => {
      s = await setup(limit({ max: 1, windowSeconds: 60 }));
      await tokenRequest(s.server, { ...grant, client_id: s.clientId, client_secret: WRONG }, from('10.6.0.1'));
      expect429(await tokenRequest(s.server, { ...grant, client_id: s.clientId, client_secret: s.secret }, from('10.6.0.1')));
      const events = s.events;
      await vi.waitFor(() => expect(events.some((e) => e.type === 'client.authentication_failed' && e.reason === 'rate_limited')).toBe(true), { timeout: 5000 });
      const limited = events.find((e) => e.type === 'client.authentication_failed' && e.reason === 'rate_limited');
      expect(limited).toMatchObject({ clientId: s.clientId, address: '10.6.0.1' });
      expect(JSON.stringify(events)).not.toContain(s.secret);
    });
  });
}

describeLimiter('failure limiter in memory (the default)', (o) => o);

// Issue 6 point 1: failures are "counted per client ID and per client address (respecting Express's
// `trust proxy`)". The other side of that promise: with `trust proxy` off (Express's default), the
// address is the TCP peer, so a client cannot dodge the per-address limit by inventing a new
// X-Forwarded-For for each attempt.
describe('failure limiter in memory with trust proxy off (the Express default)', () => {
  /** Three failures, each for a different (unknown) client ID under a different forwarded address, so only an address can lock. */
  const failThreeTimesFromForgedAddresses = async (server: LiveServer): Promise<void> => {
    for (let i = 0; i < 3; i++) {
      expectError(
        await tokenRequest(server, { ...grant, client_id: `esa_unknown${i}`, client_secret: WRONG }, from(`203.0.113.${i}`)),
        401,
        'invalid_client',
      );
    }
  };

  it('counts every failure under the socket address, whatever X-Forwarded-For says, so varying it does not dodge the limit', async () => {
    const { app, sa, events } = createTestApp({ failureLimit: { max: 3, windowSeconds: 60 } });
    expect(app.get('trust proxy')).toBe(false);
    const account = await sa.admin.createAccount({ name: 'no-proxy' });
    const server = await listen(app);
    try {
      await failThreeTimesFromForgedAddresses(server);
      // A fourth attempt, right secret of another client, under yet another forged address: the
      // (unforgeable) socket address has used up its failures, so 429.
      const blocked = await tokenRequest(server, { ...grant, client_id: account.clientId, client_secret: account.secret.value }, from('198.51.100.77'));
      expect429(blocked);
      // Same without any X-Forwarded-For, and with a list of them.
      expect429(await tokenRequest(server, { ...grant, client_id: account.clientId, client_secret: account.secret.value }));
      expect429(
        await tokenRequest(server, { ...grant, client_id: account.clientId, client_secret: account.secret.value }, from('198.51.100.78, 198.51.100.79')),
      );
      // The audit hook names the socket address, never the forged one.
      await vi.waitFor(() => expect(events.some((e) => e.type === 'client.authentication_failed' && e.reason === 'rate_limited')).toBe(true), { timeout: 5000 });
      const addresses = new Set(events.filter((e) => e.type === 'client.authentication_failed').map((e) => (e as { address?: string }).address));
      expect([...addresses].every((a) => a !== undefined && /^(::ffff:)?127\.0\.0\.1$|^::1$/.test(a))).toBe(true);
    } finally {
      await server.close();
      await sa.close();
    }
  });

  it('(control) the same sequence with trust proxy on is counted per forwarded address, so the fourth attempt passes', async () => {
    const { app, sa } = createTestApp({ failureLimit: { max: 3, windowSeconds: 60 } });
    app.set('trust proxy', true);
    const account = await sa.admin.createAccount({ name: 'behind-proxy' });
    const server = await listen(app);
    try {
      await failThreeTimesFromForgedAddresses(server);
      expect((await tokenRequest(server, { ...grant, client_id: account.clientId, client_secret: account.secret.value }, from('198.51.100.77'))).status).toBe(200);
    } finally {
      await server.close();
      await sa.close();
    }
  });
});

describe('failure limiter options', () => {
  it('is on by default with 10 failures a minute', async () => {
    const { sa } = createTestApp();
    expect(sa.config.failureLimit).toMatchObject({ max: 10, windowSeconds: 60 });
    await sa.close();
  });

  it('failureLimit: false never answers 429', async () => {
    const s = await setup(false);
    for (let i = 0; i < 15; i++) {
      expectError(await tokenRequest(s.server, { ...grant, client_id: s.clientId, client_secret: WRONG }), 401, 'invalid_client');
    }
    expect((await tokenRequest(s.server, { ...grant, client_id: s.clientId, client_secret: s.secret })).status).toBe(200);
    await s.close();
  });

  it('refuses at start-up a redis option that is not an ioredis client', () => {
    for (const redis of [{}, 'redis://localhost', { get: () => {} }]) {
      expect(() =>
        createServiceAccounts({
          store: new MemoryAccountStore(),
          issuer: 'https://api.test',
          signingKeys: { alg: 'HS256', key: 'k'.repeat(32) },
          failureLimit: { redis },
        }),
      ).toThrow(TypeError);
    }
  });
});

const url = redisUrl('the failure limiter');
if (!url) {
  describe.skip('failure limiter on Redis (REDIS_URL not set)', () => {
    it('needs Redis', () => {});
  });
} else {
  const prefix = testKeyPrefix();
  const clients: Redis[] = [];
  const client = (options: { port?: number } = {}): Redis => {
    const parsed = new URL(url);
    const redis = options.port
      ? new Redis({
          host: '127.0.0.1',
          port: options.port,
          password: parsed.password || undefined,
          keyPrefix: prefix,
          maxRetriesPerRequest: 1,
          retryStrategy: () => 50,
        })
      : new Redis(url, { keyPrefix: prefix, maxRetriesPerRequest: 1 });
    // The host owns its client's error events; the proxy tests cut connections on purpose.
    redis.on('error', () => {});
    clients.push(redis);
    return redis;
  };
  let admin: Redis;
  beforeAll(() => {
    admin = new Redis(url, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await admin.quit();
    await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
  });

  describeLimiter('failure limiter on Redis (ioredis)', (o) => ({ ...o, redis: client() }));

  describe('failure limiter on Redis: outages', () => {
    it('keeps its counts in Redis under hashed keys, shared by two instances', async () => {
      const redis = client();
      const a = await setup({ max: 2, windowSeconds: 60, redis });
      const store = new MemoryAccountStore();
      // A second instance on the same Redis (and its own store: only the counts are shared).
      const { app: appB, sa: saB } = createTestApp({ store, failureLimit: { max: 2, windowSeconds: 60, redis } });
      appB.set('trust proxy', true);
      const b = await listen(appB);
      expectError(await tokenRequest(a.server, { ...grant, client_id: a.clientId, client_secret: WRONG }, from('10.7.0.1')), 401, 'invalid_client');
      expectError(await tokenRequest(b, { ...grant, client_id: a.clientId, client_secret: WRONG }, from('10.7.0.2')), 401, 'invalid_client');
      expect429(await tokenRequest(a.server, { ...grant, client_id: a.clientId, client_secret: a.secret }, from('10.7.0.3')));
      const keys = await admin.keys(`${prefix}*`);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        expect(key).toMatch(/^esa-test:[0-9a-f]+:esa-failures:[ca]:[A-Za-z0-9_-]{32}$/);
        expect(key).not.toContain(a.clientId);
      }
      await b.close();
      await saB.close();
      await a.close();
    });

    it('answers 503 temporarily_unavailable, never a pass, when Redis hangs, and recovers without a restart', async () => {
      const proxy = await RedisProxy.start(url);
      const redis = client({ port: proxy.port });
      await redis.ping();
      const s = await setup({ max: 2, windowSeconds: 60, redis }, { storeTimeout: 1000 });
      try {
        const right = { ...grant, client_id: s.clientId, client_secret: s.secret };
        expect((await tokenRequest(s.server, right, from('10.8.0.1'))).status).toBe(200);
        proxy.freeze();
        // The response arrives while Redis is still frozen: the storeTimeout deadline answered it.
        const res = await tokenRequest(s.server, right, from('10.8.0.1'));
        expectError(res, 503, 'temporarily_unavailable');
        expect(res.text).not.toMatch(/redis|timed out|ECONN/i);
        expectError(await tokenRequest(s.server, { ...grant, client_id: s.clientId, client_secret: WRONG }, from('10.8.0.1')), 503, 'temporarily_unavailable');
        proxy.restore();
        await vi.waitFor(async () => expect((await tokenRequest(s.server, right, from('10.8.0.1'))).status).toBe(200), {
          timeout: 5000,
          interval: 100,
        });
      } finally {
        await s.close();
        await proxy.close();
      }
    });

    it('gives back the counts of attempts answered 503 while Redis hung, once Redis answers again', async () => {
      const proxy = await RedisProxy.start(url);
      const redis = client({ port: proxy.port });
      await redis.ping();
      const s = await setup({ max: 2, windowSeconds: 60, redis }, { storeTimeout: 300 });
      try {
        const right = { ...grant, client_id: s.clientId, client_secret: s.secret };
        proxy.freeze();
        // More attempts than the limit, none of them decided: each is counted in advance, then times out.
        for (let i = 0; i < 3; i++) expectError(await tokenRequest(s.server, right, from('10.10.0.1')), 503, 'temporarily_unavailable');
        proxy.restore();
        // The held counts, then the give-backs their late answers lead to, went first on the same connection.
        await redis.ping();
        await redis.ping();
        // No failure on record: the right secret gets its token, and a wrong one is the first of N failures.
        expect((await tokenRequest(s.server, right, from('10.10.0.1'))).status).toBe(200);
        for (let i = 0; i < 2; i++) {
          expectError(await tokenRequest(s.server, { ...grant, client_id: s.clientId, client_secret: WRONG }, from('10.10.0.1')), 401, 'invalid_client');
        }
        expect429(await tokenRequest(s.server, right, from('10.10.0.2')));
      } finally {
        await s.close();
        await proxy.close();
      }
    });

    it('connects a client made with lazyConnect on first use instead of answering 503 for ever', async () => {
      // ioredis connects such a client with its first command; the limiter checks the connection
      // before it sends any, so nothing would ever connect it.
      const redis = new Redis(url, { keyPrefix: prefix, maxRetriesPerRequest: 1, lazyConnect: true });
      redis.on('error', () => {});
      clients.push(redis);
      const { app, sa } = createTestApp({ failureLimit: { max: 2, windowSeconds: 60, redis } });
      const account = await sa.admin.createAccount({ name: 'lazy' });
      const server = await listen(app);
      try {
        const right = { ...grant, client_id: account.clientId, client_secret: account.secret.value };
        await vi.waitFor(async () => expect((await tokenRequest(server, right)).status).toBe(200), { timeout: 5000, interval: 100 });
      } finally {
        await server.close();
        await sa.close();
      }
    });

    it('answers 503 when the Redis connection is gone, and recovers once Redis is back', async () => {
      const proxy = await RedisProxy.start(url);
      const redis = client({ port: proxy.port });
      await redis.ping();
      const s = await setup({ max: 2, windowSeconds: 60, redis }, { storeTimeout: 1000 });
      try {
        const right = { ...grant, client_id: s.clientId, client_secret: s.secret };
        proxy.cut();
        await vi.waitFor(() => expect(redis.status).not.toBe('ready'), { timeout: 5000 });
        expectError(await tokenRequest(s.server, right, from('10.9.0.1')), 503, 'temporarily_unavailable');
        proxy.restore();
        await vi.waitFor(async () => expect((await tokenRequest(s.server, right, from('10.9.0.1'))).status).toBe(200), {
          timeout: 5000,
          interval: 100,
        });
      } finally {
        await s.close();
        await proxy.close();
      }
    });
  });
}
