/**
 * Random requests to the admin router: any method, path, token, media type, body and browser headers.
 * Whatever comes in, the router answers without a 5xx (its `authorize` here never fails and the store
 * is up), with `Cache-Control: no-store` and no CORS header; every answer to a method the OpenAPI
 * document describes for that path is one the document describes, and any other method gets a 405
 * problem with `Allow`.
 *
 * Seeded from FUZZ_SEED (test/hardening/fuzz-support.ts); a failure prints a short report (the seeds,
 * fast-check's path, the counterexample with long values cut, e.g. the 20 KB name) to replay it with.
 * FUZZ_RUNS sets the number of requests (1500 by default).
 */
import { request as httpRequest, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectDocumented, hasOperation, templateOf } from '../helpers/admin-openapi-check.js';
import { createAdminRouterApp } from '../helpers/admin-router-app.js';
import { FUZZ_SEED, runBatches } from '../hardening/fuzz-support.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 1500);
const BATCHES = 3;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function send(base: string, method: string, path: string, headers: Record<string, string>, body: string | undefined): Promise<Answer> {
  return new Promise((done, fail) => {
    const req = httpRequest(`${base}${path}`, { method, headers: { ...headers, ...(body !== undefined && { 'Content-Length': String(Buffer.byteLength(body)) }) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => done({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', fail);
    req.end(body);
  });
}

describe('admin router under random requests', () => {
  let server: Server;
  let base = '';
  const { app, admin } = createAdminRouterApp();
  let clientId = '';
  let secretId = '';

  beforeAll(async () => {
    const created = await admin.createAccount({ name: 'fuzz-target', clientAccountId: 'acme' });
    clientId = created.clientId;
    secretId = created.secret.id;
    server = createServer(app);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  const segment = fc.oneof(
    fc.constant('CLIENT'),
    fc.constant('esa_000000000000000000000000'),
    fc.constant('%E0%A4%A'),
    fc.constant('..'),
    fc.string({ minLength: 1, maxLength: 12 }).map(encodeURIComponent),
  );
  const path = fc
    .tuple(
      fc.constantFrom('', '/secrets', '/secrets/SECRET', '/disable', '/enable', '/secrets/x/y', '/federated', '/federated/esaf_0000000000000000', '/federated/x/y'),
      segment,
      fc.boolean(),
      fc.constantFrom('', '?limit=2', '?limit=abc', '?cursor=zz', '?limit=1&limit=1', '?clientAccountId=globex', '?x=1'),
      fc.boolean(),
    )
    .map(([suffix, id, list, query, slash]) => `/admin/service-accounts${list ? '' : `/${id}${suffix}`}${slash ? '/' : ''}${query}`);
  const contentType = fc.constantFrom(
    undefined,
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'text/plain',
    'application/merge-patch+json',
    ';;;',
  );
  const body = fc.oneof(
    fc.constant(undefined),
    fc.constant(''),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.record({ name: fc.string({ maxLength: 30 }), scopes: fc.option(fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 })) }).map((v) => JSON.stringify(v)),
    fc
      .record(
        {
          issuer: fc.constantFrom('https://issuer.example', 'http://127.0.0.1:1', 'http://issuer.example', 'ftp://x', '', 'https://u:p@x.example', 'https://x.example/?q'),
          subject: fc.string({ maxLength: 30 }),
          audience: fc.option(fc.string({ maxLength: 10 })),
          jwksUri: fc.option(fc.constantFrom('https://issuer.example/jwks', 'not a url')),
        },
        { requiredKeys: ['issuer', 'subject'] },
      )
      .map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 50 }),
    fc.constant(JSON.stringify({ name: 'x'.repeat(20_000) })),
  );
  const browser = fc.record(
    { origin: fc.constantFrom('https://evil.example', 'null', 'http://127.0.0.1'), site: fc.constantFrom('cross-site', 'same-site', 'same-origin', 'none') },
    { requiredKeys: [] },
  );

  it('never fails, never sends CORS, and answers as the document says', async () => {
    const request = fc.record({
      method: fc.constantFrom('GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS', 'PUT', 'PATCH'),
      rawPath: path,
      token: fc.constantFrom(undefined, 'acme', 'globex', 'operator', 'viewer', 'nobody'),
      type: contentType,
      payload: body,
      marks: browser,
    });
    await runBatches(
      'admin router fuzz',
      request,
      async ({ method, rawPath, token, type, payload, marks }) => {
        // As sent: the URL resolves dot segments (`/x/..` is `/`).
        const url = new URL(rawPath.replace('CLIENT', clientId).replace('SECRET', secretId), base);
        const target = url.pathname + url.search;
        const headers: Record<string, string> = {};
        if (token) headers.Authorization = `Bearer ${token}`;
        if (type) headers['Content-Type'] = type;
        if (marks.origin) headers.Origin = marks.origin;
        if (marks.site) headers['Sec-Fetch-Site'] = marks.site;
        const sendsBody = payload !== undefined && method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
        const answer = await send(base, method, target, headers, sendsBody ? payload : undefined);
        // Paths the router does not serve (a segment that is not valid percent-encoding among them)
        // are the host's: here, Express's own 404.
        if (!templateOf(target) || target.includes('%E0%A4%A')) {
          expect(answer.headers['cache-control']).toBeUndefined();
          return;
        }
        expect(answer.status).toBeLessThan(500);
        expect(answer.headers['cache-control']).toBe('no-store');
        expect(Object.keys(answer.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
        if (!hasOperation(method, target)) {
          expect(answer.status).toBe(405);
          expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
          expect(answer.headers.allow).toMatch(/OPTIONS$/);
          return;
        }
        expectDocumented(method, target, { status: answer.status, headers: answer.headers, text: answer.text } as never);
      },
      {
        batches: BATCHES,
        runsPerBatch: Math.ceil(RUNS / BATCHES),
        // The router still serves after each batch: the operator lists the accounts.
        afterBatch: async () => {
          const listed = await send(base, 'GET', '/admin/service-accounts', { Authorization: 'Bearer operator' }, undefined);
          expect(listed.status).toBe(200);
        },
      },
    );
    console.info(`admin router fuzz: ${BATCHES * Math.ceil(RUNS / BATCHES)} requests, FUZZ_SEED=${FUZZ_SEED}`);
  }, 300_000);
});
