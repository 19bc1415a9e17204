/**
 * Helpers of the hardening suite: a real listening server with a keep-alive agent, raw HTTP requests,
 * an account store that can fail or hang on demand, a TCP proxy that can freeze or cut a Redis
 * connection, and the REDIS_URL convention of the suite.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import express, { type Express } from 'express';
import { MemoryAccountStore, type AccountRecord, type ServiceAccounts, type AccountStore, type NewAccountRecord, type NewSecretRecord, type SecretRecord, type AddSecretOptions, type AddSecretResult } from '../../src/index.js';

/**
 * REDIS_URL, or (CI=true) the default local server, which must then be there: a missing server fails
 * the run in CI. Locally without REDIS_URL the Redis tests are skipped with a visible note.
 */
export function redisUrl(suite: string): string | undefined {
  const url = process.env.REDIS_URL ?? (process.env.CI === 'true' ? 'redis://127.0.0.1:6379' : undefined);
  if (!url) console.warn(`REDIS_URL not set: the Redis tests of ${suite} are skipped`);
  return url;
}

/** A unique key prefix for one test run, so concurrent runs never share counts. */
export function testKeyPrefix(): string {
  return `esa-test:${randomBytes(6).toString('hex')}:`;
}

export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string | string[]>;
  body?: Buffer | string;
}

/** A listening server (one per app) with a keep-alive agent, for many fast requests. */
export interface LiveServer {
  readonly url: string;
  request(req: RawRequest): Promise<RawResponse>;
  /** How many requests the app has read to the end of their body so far. */
  bodiesRead(): number;
  /** How many requests the app has not finished answering yet (`res.end()` not called). */
  unanswered(): number;
  close(): Promise<void>;
}

/** A live app as a host mounts the library (token router, a protected whoami) that records every request's headers. */
export interface RecordingApp {
  readonly server: LiveServer;
  /** The request headers of every request, as the server saw them. */
  readonly seen: Array<Record<string, string | string[] | undefined>>;
  close(): Promise<void>;
}

export async function listenRecordingHeaders(sa: ServiceAccounts): Promise<RecordingApp> {
  const seen: RecordingApp['seen'] = [];
  const app = express();
  app.use((req, _res, next) => {
    seen.push({ ...req.headers });
    next();
  });
  app.use('/oauth', sa.tokenRouter);
  app.get('/api/whoami', sa.requireBearer(), (req, res) => res.json(req.serviceAccount));
  const server = await listen(app);
  return {
    server,
    seen,
    close: async () => {
      await server.close();
      await sa.close();
    },
  };
}

export async function listen(app: Express | http.RequestListener): Promise<LiveServer> {
  const server = http.createServer(app as http.RequestListener);
  let bodiesRead = 0;
  const answering = new Set<http.ServerResponse>();
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    req.once('end', () => bodiesRead++);
    answering.add(res);
    res.once('close', () => answering.delete(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const request = ({ method = 'GET', path, headers = {}, body }: RawRequest): Promise<RawResponse> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method,
          path,
          agent,
          headers: { ...headers, ...(payload ? { 'content-length': String(payload.length) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  return {
    url: `http://127.0.0.1:${port}`,
    request,
    bodiesRead: () => bodiesRead,
    unanswered: () => [...answering].filter((res) => !res.writableEnded).length,
    close: async () => {
      agent.destroy();
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Posts form fields to /oauth/token. */
export function tokenRequest(server: LiveServer, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<RawResponse> {
  return server.request({
    method: 'POST',
    path: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

/** Parses a JSON body, or undefined. */
export function json(res: RawResponse): unknown {
  try {
    return JSON.parse(res.text);
  } catch {
    return undefined;
  }
}

/**
 * An AccountStore that works (delegating to a MemoryAccountStore) until told to fail (reject at once)
 * or hang (never settle), and works again when told so, without any restart. It counts the calls made
 * while it fails or hangs, so a test knows when a request has reached it (and that call's deadline runs).
 */
export class UnreliableStore implements AccountStore {
  mode: 'ok' | 'fail' | 'hang' = 'ok';
  /** Calls made in 'fail' or 'hang' mode so far. */
  callsWhileDown = 0;
  #downWaiters: Array<{ count: number; done: () => void }> = [];
  constructor(readonly inner: AccountStore = new MemoryAccountStore()) {}

  /** Resolves once {@link callsWhileDown} reaches `count`. */
  calledWhileDown(count: number): Promise<void> {
    if (this.callsWhileDown >= count) return Promise.resolve();
    return new Promise((done) => this.#downWaiters.push({ count, done }));
  }

  #call<T>(fn: () => Promise<T>): Promise<T> {
    if (this.mode === 'ok') return fn();
    this.callsWhileDown++;
    for (const waiter of this.#downWaiters.filter((w) => this.callsWhileDown >= w.count)) waiter.done();
    this.#downWaiters = this.#downWaiters.filter((w) => this.callsWhileDown < w.count);
    if (this.mode === 'fail') return Promise.reject(new Error('ECONNREFUSED 10.0.0.5:5432 password=hunter2'));
    return new Promise<T>(() => {});
  }

  createAccount(input: NewAccountRecord): Promise<AccountRecord> {
    return this.#call(() => this.inner.createAccount(input));
  }
  findAccount(clientId: string): Promise<AccountRecord | undefined> {
    return this.#call(() => this.inner.findAccount(clientId));
  }
  listAccounts(): Promise<AccountRecord[]> {
    return this.#call(() => this.inner.listAccounts());
  }
  setAccountEnabled(clientId: string, enabled: boolean): Promise<AccountRecord | undefined> {
    return this.#call(() => this.inner.setAccountEnabled(clientId, enabled));
  }
  addSecret(clientId: string, secret: NewSecretRecord, options: AddSecretOptions): Promise<AddSecretResult> {
    return this.#call(() => this.inner.addSecret(clientId, secret, options));
  }
  revokeSecret(clientId: string, secretId: string, at: Date): Promise<SecretRecord | undefined> {
    return this.#call(() => this.inner.revokeSecret(clientId, secretId, at));
  }
  recordSecretUse(clientId: string, secretId: string, at: Date): Promise<void> {
    return this.#call(() => this.inner.recordSecretUse(clientId, secretId, at));
  }
}

/**
 * A TCP proxy in front of Redis. `freeze()` holds every byte sent to Redis (commands hang with the
 * connection still "ready"); `cut()` drops every connection and refuses new ones (the client sees the
 * server go away); `restore()` brings it back.
 */
export class RedisProxy {
  #mode: 'open' | 'frozen' | 'cut' = 'open';
  readonly #held = new Map<net.Socket, Buffer[]>();
  readonly #pairs = new Set<[net.Socket, net.Socket]>();
  readonly #server: net.Server;

  private constructor(private readonly target: { host: string; port: number }) {
    this.#server = net.createServer((client) => this.#accept(client));
  }

  static async start(redisUrl: string): Promise<RedisProxy> {
    const url = new URL(redisUrl);
    const proxy = new RedisProxy({ host: url.hostname, port: Number(url.port || 6379) });
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  #accept(client: net.Socket): void {
    if (this.#mode === 'cut') {
      client.destroy();
      return;
    }
    const upstream = net.connect(this.target.port, this.target.host);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    this.#pairs.add(pair);
    this.#held.set(client, []);
    client.on('data', (chunk: Buffer) => {
      if (this.#mode === 'frozen') this.#held.get(client)?.push(chunk);
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const end = (): void => {
      this.#pairs.delete(pair);
      this.#held.delete(client);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  }

  freeze(): void {
    this.#mode = 'frozen';
  }

  cut(): void {
    this.#mode = 'cut';
    for (const [client, upstream] of this.#pairs) {
      client.destroy();
      upstream.destroy();
    }
  }

  restore(): void {
    this.#mode = 'open';
    for (const [client, upstream] of this.#pairs) {
      const held = this.#held.get(client) ?? [];
      this.#held.set(client, []);
      for (const chunk of held) upstream.write(chunk);
    }
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
