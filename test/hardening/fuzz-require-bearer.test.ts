/**
 * Property-based fuzzing of requireBearer() (CONTRACT §3): random Authorization headers (schemes in
 * any casing, real tokens mutated, truncated or extended, forged JWT shapes, huge and unicode values,
 * repeated headers), on a read route and on a scoped route. Every response must be one the contract
 * allows: 200/201 only for an untampered token, else 400, 401 or 403 with a Bearer challenge and
 * exactly {error, error_description} strings, never a 500; and the server keeps serving.
 * Reproduce a failure with FUZZ_SEED=<printed seed>.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/create-app.js';
import { json, listen, tokenRequest, type LiveServer, type RawRequest, type RawResponse } from './helpers.js';
import { countResponse, fuzzCounter, FUZZ_SEED, headerValue, nastyString, runBatches } from './fuzz-support.js';

const CODES_BY_STATUS: Record<number, readonly string[]> = {
  400: ['invalid_request'],
  401: ['invalid_request', 'invalid_token'],
  403: ['insufficient_scope'],
};

let server: LiveServer;
let close: () => Promise<void>;
let unrestricted: string;
let readOnly: string;

beforeAll(async () => {
  const { app, sa } = createTestApp({ failureLimit: false });
  const a = await sa.admin.createAccount({ name: 'fuzz-unrestricted' });
  const b = await sa.admin.createAccount({ name: 'fuzz-read-only', scopes: ['jobs:read'] });
  server = await listen(app);
  close = async () => {
    await server.close();
    await sa.close();
  };
  const issue = async (clientId: string, secret: string) =>
    (json(await tokenRequest(server, { grant_type: 'client_credentials', client_id: clientId, client_secret: secret })) as { access_token: string })
      .access_token;
  unrestricted = await issue(a.clientId, a.secret.value);
  readOnly = await issue(b.clientId, b.secret.value);
});
afterAll(async () => {
  await close?.();
});

/**
 * Whether two compact JWTs carry the same bytes. The last base64url character of a segment has spare
 * bits, so a flip there can leave header, payload and signature unchanged: that token is not forged.
 */
function sameBytes(a: string, b: string): boolean {
  const pa = a.split('.');
  const pb = b.split('.');
  return (
    pa.length === 3 &&
    pa.every((part, i) => /^[A-Za-z0-9_-]*$/.test(part) && Buffer.from(part, 'base64url').equals(Buffer.from(pb[i] ?? '', 'base64url')))
  );
}

const B64URL = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_'.split('');

function requests(): fc.Arbitrary<{ req: RawRequest; untampered: boolean }> {
  const realToken = fc.constantFrom(unrestricted, readOnly);
  const mutated = fc
    .tuple(realToken, fc.nat(), fc.constantFrom(...B64URL), fc.constantFrom('flip', 'cut', 'append', 'insert-dot', 'swap-parts'))
    .map(([token, at, char, how]) => {
      const i = at % token.length;
      const parts = token.split('.');
      switch (how) {
        case 'flip':
          return token.slice(0, i) + (token[i] === char ? (char === 'A' ? 'B' : 'A') : char) + token.slice(i + 1);
        case 'cut':
          return token.slice(0, i);
        case 'append':
          return token + char;
        case 'insert-dot':
          return `${token.slice(0, i)}.${token.slice(i)}`;
        default:
          return [parts[1], parts[0], parts[2]].join('.');
      }
    })
    .filter((t) => !sameBytes(t, unrestricted) && !sameBytes(t, readOnly));
  const jwtShape = fc
    .tuple(fc.jsonValue({ maxDepth: 2 }), fc.jsonValue({ maxDepth: 2 }), fc.base64String({ maxLength: 100 }))
    .map(([h, p, s]) => `${Buffer.from(JSON.stringify(h) ?? 'null').toString('base64url')}.${Buffer.from(JSON.stringify(p) ?? 'null').toString('base64url')}.${s.replace(/=+$/, '')}`);
  const tokenText = fc.oneof(
    { weight: 3, arbitrary: mutated },
    { weight: 2, arbitrary: jwtShape },
    { weight: 2, arbitrary: nastyString },
    { weight: 1, arbitrary: fc.integer({ min: 4000, max: 7000 }).map((n) => 'a'.repeat(n)) },
  );
  const scheme = fc.constantFrom('Bearer', 'bearer', 'BEARER', 'bEaReR', 'Basic', 'Token', 'JWT', 'Bearer:', '');
  const separator = fc.constantFrom(' ', '  ', '\t', '', ' , ', '=');
  const forged = fc.tuple(scheme, separator, tokenText, fc.constantFrom('', ' ', ', extra', ' second')).map(([s, sep, t, tail]) => headerValue(`${s}${sep}${t}${tail}`));

  const authorization = fc.oneof(
    { weight: 1, arbitrary: realToken.map((t) => ({ value: `Bearer ${t}` as string | string[] | undefined, untampered: true })) },
    { weight: 1, arbitrary: fc.constant({ value: undefined, untampered: false }) },
    { weight: 8, arbitrary: forged.map((value) => ({ value: value as string | string[] | undefined, untampered: false })) },
    { weight: 1, arbitrary: fc.tuple(realToken, forged).map(([t, f]) => ({ value: [f, `Bearer ${t}`] as string[], untampered: false })) },
  );
  const route = fc.constantFrom(
    { method: 'GET', path: '/api/whoami' },
    { method: 'HEAD', path: '/api/whoami' },
    { method: 'POST', path: '/api/jobs' },
  );
  return fc.tuple(route, authorization).map(([r, auth]) => {
    const headers: Record<string, string | string[]> = auth.value === undefined ? {} : { authorization: auth.value };
    return { req: { ...r, headers } as RawRequest, untampered: auth.untampered };
  });
}

function checkResponse(req: RawRequest, untampered: boolean, res: RawResponse): void {
  expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
  if (res.status === 200 || res.status === 201) {
    // Only a real, untampered token is ever admitted.
    expect(untampered).toBe(true);
    return;
  }
  expect([400, 401, 403]).toContain(res.status);
  expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="[^"]*"/);
  if (req.method === 'HEAD') return;
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(res.text) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
  expect(typeof body.error_description).toBe('string');
  expect(CODES_BY_STATUS[res.status]).toContain(body.error);
}

describe('fuzzing requireBearer', () => {
  it('answers every generated Authorization header as the contract allows, and keeps serving', { timeout: 120_000 }, async () => {
    const before = fuzzCounter.requests;
    await runBatches(
      'requireBearer fuzz',
      requests(),
      async ({ req, untampered }) => {
        const res = await server.request(req);
        countResponse(res.status);
        checkResponse(req, untampered, res);
      },
      {
        batches: 8,
        runsPerBatch: 500,
        afterBatch: async () => {
          const res = await server.request({ path: '/api/whoami', headers: { authorization: `Bearer ${unrestricted}` } });
          expect(res.status).toBe(200);
        },
      },
    );
    console.info(`requireBearer fuzz: ${fuzzCounter.requests - before} requests, statuses ${JSON.stringify(fuzzCounter.statuses)}, FUZZ_SEED=${FUZZ_SEED}`);
  });
});
