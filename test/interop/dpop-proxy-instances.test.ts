/**
 * DPoP (RFC 9449) with openid-client 6 against two instances behind a reverse proxy: a small Node
 * proxy on 127.0.0.1 forwards each request to one of two Express apps (4 and 5) that share one store
 * and trust it (`trust proxy`), with X-Forwarded-Proto and X-Forwarded-Host, so the instances see
 * their own Host and must take the `htu` origin from the forwarded headers. openid-client
 * (`getDPoPHandle`, `clientCredentialsGrant`, `fetchProtectedResource`) gets a DPoP-bound token and
 * calls a route, its requests spread over both instances, with and without server nonces; a proof
 * it sent is then replayed on each instance: with the per-instance replay cache it is refused where
 * it was used and accepted at most once on the other (docs/dpop.md, "Replay"), with Redis strict mode
 * (`REDIS_URL`) refused on both.
 */
import { once } from 'node:events';
import { createServer, request as forward, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express5 from 'express';
import express4 from 'express4';
import { Redis } from 'ioredis';
import * as oidc from 'openid-client';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createServiceAccounts, MemoryAccountStore, type CreatedAccount, type ServiceAccounts, type ServiceAccountsOptions } from '../../src/index.js';
import { TEST_HS256_KEY } from '../helpers/create-app.js';
import { redisUrl, testKeyPrefix } from '../hardening/helpers.js';

const NONCE_SECRET = 'nonce-secret-0123456789abcdef-0123456789';

/** What the proxy forwarded: the instance, the request's headers as the client sent them, and the answer's status. */
interface Forwarded {
  readonly instance: number;
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  status?: number;
}

/**
 * A reverse proxy on 127.0.0.1: each request goes to the instance named by `x-instance` (a test
 * header), else to the next one in turn, with X-Forwarded-Proto and X-Forwarded-Host of what the
 * client addressed; the Host the instance sees is its own.
 */
class ReverseProxy {
  readonly server: Server;
  readonly seen: Forwarded[] = [];
  #turn = 0;

  constructor(private readonly ports: readonly number[]) {
    this.server = createServer((req, res) => {
      const chosen = req.headers['x-instance'];
      const instance = typeof chosen === 'string' ? Number(chosen) : this.#turn++ % this.ports.length;
      const seen: Forwarded = { instance, method: req.method!, path: req.url!, headers: req.headers };
      this.seen.push(seen);
      const headers: IncomingHttpHeaders = { ...req.headers, host: `127.0.0.1:${this.ports[instance]}`, 'x-forwarded-proto': 'http', 'x-forwarded-host': req.headers.host };
      const upstream = forward({ host: '127.0.0.1', port: this.ports[instance], method: req.method, path: req.url, headers }, (answer) => {
        seen.status = answer.statusCode!;
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', (err) => res.destroy(err));
      req.pipe(upstream);
    });
  }

  async listen(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
}

interface Deployment {
  readonly origin: string;
  readonly proxy: ReverseProxy;
  readonly instances: readonly ServiceAccounts[];
  readonly account: CreatedAccount;
  readonly config: oidc.Configuration;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** Two instances of an Express app sharing one store, behind the proxy, and openid-client configured by discovery through it. */
async function deploy(version: 4 | 5, options: Partial<ServiceAccountsOptions>): Promise<Deployment> {
  const express = (version === 4 ? express4 : express5) as unknown as typeof express5;
  const store = new MemoryAccountStore();
  const servers = [createServer(), createServer()];
  const ports = await Promise.all(servers.map(listen));
  const proxy = new ReverseProxy(ports);
  const origin = await proxy.listen();
  const instances = servers.map((server) => {
    const sa = createServiceAccounts({ store, issuer: origin, signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY }], secretHashRounds: 4, ...options });
    const app = express();
    app.set('trust proxy', 'loopback');
    app.use('/oauth', sa.tokenRouter);
    app.get('/.well-known/oauth-authorization-server', (_req, res) => {
      res.json(sa.authorizationServerMetadata({ tokenEndpoint: `${origin}/oauth/token` }));
    });
    app.get('/api/whoami', sa.requireBearer({ scope: 'jobs:read' }), (req, res) => {
      res.json({ clientId: req.serviceAccount?.clientId });
    });
    server.on('request', app);
    return sa;
  });
  const account = await instances[0]!.admin.createAccount({ name: 'billing-sync', scopes: ['jobs:read'] });
  const config = await oidc.discovery(new URL(origin), account.clientId, account.secret.value, oidc.ClientSecretBasic(account.secret.value), {
    algorithm: 'oauth2',
    execute: [oidc.allowInsecureRequests], // plain http on 127.0.0.1, for the test only
  });
  return {
    origin,
    proxy,
    instances,
    account,
    config,
    close: async () => {
      for (const server of [proxy.server, ...servers]) server.closeAllConnections();
      await Promise.all([proxy.server, ...servers].map((server) => new Promise((done) => server.close(done))));
      await Promise.all(instances.map((sa) => sa.close()));
    },
  };
}

let running: Deployment | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** Sends a request the proxy saw again, as an attacker who captured it would, to one instance. */
async function replay(deployment: Deployment, captured: Forwarded, instance: number): Promise<{ status: number; body: { error?: string } }> {
  const res = await fetch(`${deployment.origin}${captured.path}`, {
    method: captured.method,
    headers: { authorization: captured.headers.authorization as string, dpop: captured.headers.dpop as string, 'x-instance': String(instance) },
  });
  return { status: res.status, body: (await res.json()) as { error?: string } };
}

/** The client's session: a DPoP-bound token from the token endpoint, then calls of /api/whoami, spread over both instances by the proxy. */
async function clientSession(deployment: Deployment, nonces: boolean): Promise<void> {
  const { config, origin, proxy, account } = deployment;
  const dpop = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
  const tokens = await oidc.clientCredentialsGrant(config, { scope: 'jobs:read' }, { DPoP: dpop });
  expect(tokens.token_type).toBe('dpop'); // oauth4webapi lower-cases it
  for (let i = 0; i < 4; i++) {
    const res = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(`${origin}/api/whoami`), 'GET', undefined, undefined, { DPoP: dpop });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ clientId: account.clientId });
  }
  // The proxy spread the calls: both instances admitted the token and proofs of its key.
  const admitted = new Set(proxy.seen.filter((f) => f.path === '/api/whoami' && f.status === 200).map((f) => f.instance));
  expect([...admitted].sort()).toEqual([0, 1]);
  if (nonces) {
    // The first token request was asked for a nonce; every admitted proof carried one, whichever instance issued it.
    expect(proxy.seen.find((f) => f.path === '/oauth/token')?.status).toBe(400);
    for (const call of proxy.seen.filter((f) => f.path === '/api/whoami' && f.status === 200)) expect(proofClaims(call)).toHaveProperty('nonce');
  }
}

function proofClaims(call: Forwarded): Record<string, unknown> {
  return JSON.parse(Buffer.from((call.headers.dpop as string).split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
}

/** The last request of the client to /api/whoami that an instance admitted, and that instance. */
function lastAdmitted(deployment: Deployment): Forwarded {
  const calls = deployment.proxy.seen.filter((f) => f.path === '/api/whoami' && f.headers['x-instance'] === undefined);
  return calls[calls.length - 1]!;
}

describe.each([5, 4] as const)('openid-client 6 and DPoP through a reverse proxy to two instances on Express %i', (version) => {
  // "openid-client 6 (`getDPoPHandle`, `clientCredentialsGrant`, `fetchProtectedResource`) gets a token and calls a route,
  // nonce mode included, on Express 4 and 5, behind a proxy"; "a proof replayed on each instance (with and without Redis)".
  it.each([
    ['without nonces', {}],
    ['with server nonces (one secret on both instances)', { nonceSecret: NONCE_SECRET }],
  ] as const)('gets a DPoP-bound token and calls a route on both instances, %s; a replayed proof is refused where it was used and accepted at most once on the other', async (_name, dpop) => {
    running = await deploy(version, { dpop });
    await clientSession(running, 'nonceSecret' in dpop);
    const captured = lastAdmitted(running);
    const used = captured.instance;
    const other = 1 - used;
    const again = await replay(running, captured, used);
    expect(again.status).toBe(401);
    expect(again.body.error).toBe('invalid_dpop_proof');
    // The per-instance cache: the other instance has not seen this proof, and takes it once (docs/dpop.md).
    expect((await replay(running, captured, other)).status).toBe(200);
    const twice = await replay(running, captured, other);
    expect(twice.status).toBe(401);
    expect(twice.body.error).toBe('invalid_dpop_proof');
  });
});

const url = redisUrl('DPoP through a proxy, strict replay');
if (!url) {
  describe.skip('DPoP through a proxy with strict replay on Redis (REDIS_URL not set)', () => {
    it('needs Redis', () => {});
  });
} else {
  describe.each([5, 4] as const)('openid-client 6 and DPoP through a reverse proxy to two instances on Express %i, strict replay on Redis', (version) => {
    const redis = new Redis(url, { keyPrefix: testKeyPrefix(), maxRetriesPerRequest: 1 });
    afterAll(async () => {
      await redis.quit();
    });

    // "Opt-in strict mode: one `SET NX PX` per request": a proof is single use across instances.
    it.each([
      ['without nonces', {}],
      ['with server nonces', { nonceSecret: NONCE_SECRET }],
    ] as const)('gets a DPoP-bound token and calls a route on both instances, %s; a replayed proof is refused on each instance', async (_name, dpop) => {
      running = await deploy(version, { failureLimit: { redis }, dpop: { ...dpop, replay: 'redis' } });
      await clientSession(running, 'nonceSecret' in dpop);
      const captured = lastAdmitted(running);
      for (const instance of [0, 1]) {
        const again = await replay(running, captured, instance);
        expect(again.status).toBe(401);
        expect(again.body.error).toBe('invalid_dpop_proof');
      }
    });
  });
}
