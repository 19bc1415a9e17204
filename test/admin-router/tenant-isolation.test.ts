/**
 * Tenant isolation of the admin router, as a property over thousands of random sequences: random
 * administrators of random client accounts (and an all-tenants operator) list, read, create, add and
 * revoke secrets and federated credentials, disable and enable, aimed at their own accounts, other client accounts' accounts and
 * unknown client IDs. Checked after every request, over HTTP, against a model of who owns what:
 *
 * - an administrator of client account X never sees another client account's account in a list or a
 *   read, and their list holds exactly X's accounts;
 * - any request about another client account's account is answered exactly as one about a client ID
 *   that does not exist (404, same headers and body: never a 403), and changes nothing;
 * - an administrator of one client account cannot grant a scope reserved to operators (403);
 * - every audit event a request causes names the person who sent it and an account they may see;
 * - every answer matches the OpenAPI document (test/helpers/admin-openapi-check.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Express } from 'express';
import type { AccountEvent, AdminPrincipal, FederatedCredentialEvent, SecretEvent } from '../../src/index.js';
import { expectDocumented } from '../helpers/admin-openapi-check.js';
import { createAdminRouterApp } from '../helpers/admin-router-app.js';

const TENANTS = ['acme', 'globex', 'initech'] as const;
const TOKENS: Record<string, AdminPrincipal> = {
  operator: { actor: { id: 'op', name: 'Operator' }, allClientAccounts: true },
};
for (const tenant of TENANTS) {
  for (const n of [1, 2]) TOKENS[`${tenant}-${n}`] = { actor: { id: `${tenant}-${n}`, name: `Admin ${n} of ${tenant}` }, clientAccountId: tenant };
}
const ACTORS = Object.keys(TOKENS);
const UNKNOWN_CLIENT_ID = 'esa_000000000000000000000000';
/** Scopes a create may grant; the router is told `admin:*` crosses client accounts. */
const OPERATOR_ONLY = ['admin:*'];
const SCOPES = [undefined, ['jobs:read'], ['token:introspect'], ['jobs:read', 'admin:reports']] as const;

type Op =
  | { kind: 'list' | 'get' | 'addSecret' | 'disable' | 'enable'; actor: number; account: number }
  | { kind: 'create'; actor: number; tenant: number | undefined; scope: number }
  | { kind: 'revoke'; actor: number; account: number; secret: number }
  | { kind: 'addFederated'; actor: number; account: number; subject: number }
  | { kind: 'revokeFederated'; actor: number; account: number; credential: number };

const pick = fc.nat({ max: 1000 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constantFrom('list', 'get', 'addSecret', 'disable', 'enable'), actor: pick, account: pick }),
  fc.record({ kind: fc.constant('create'), actor: pick, tenant: fc.option(pick, { nil: undefined }), scope: fc.nat({ max: SCOPES.length - 1 }) }),
  fc.record({ kind: fc.constant('revoke'), actor: pick, account: pick, secret: pick }),
  // Few subjects, so the same one is sometimes added twice (a duplicate).
  fc.record({ kind: fc.constant('addFederated'), actor: pick, account: pick, subject: fc.nat({ max: 2 }) }),
  fc.record({ kind: fc.constant('revokeFederated'), actor: pick, account: pick, credential: pick }),
) as fc.Arbitrary<Op>;

interface ModelAccount {
  readonly clientId: string;
  readonly tenant: string | null;
  readonly secrets: string[];
  readonly federated: string[];
}

/** The answer's status, headers that describe the body, and body: what a caller can learn. */
interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

describe('admin router tenant isolation (property)', () => {
  let server: Server;
  let base = '';
  let current: Express | undefined;

  beforeAll(async () => {
    server = createServer((req, res) => current!(req, res));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  async function send(method: string, path: string, token: string, body?: unknown): Promise<Answer> {
    const res = await fetch(base + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body !== undefined && { 'Content-Type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== 'date' && name !== 'connection' && name !== 'keep-alive'));
    expectDocumented(method, path, { status: res.status, headers, text } as never);
    return { status: res.status, headers, text };
  }

  // The answer about a client ID that exists nowhere, per kind of request (it depends on nothing else).
  const unknownAnswers = new Map<string, Answer>();
  async function unknownAnswer(method: string, path: string, token: string, body?: unknown): Promise<Answer> {
    const key = `${method} ${path.replace(/\/(secrets|federated)\/[^/]+$/, '/$1/*')}`;
    let answer = unknownAnswers.get(key);
    if (!answer) {
      answer = await send(method, path, token, body);
      unknownAnswers.set(key, answer);
    }
    return answer;
  }

  it('never shows, changes or reveals another client account’s accounts', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 8 }), async (ops) => {
        const { app, admin, events } = createAdminRouterApp({ tokens: TOKENS, maxSecretsPerAccount: 3, operatorOnlyScopes: OPERATOR_ONLY });
        current = app;
        const accounts: ModelAccount[] = [];
        const settle = (): Promise<void> => new Promise((done) => setImmediate(done));

        for (const op of ops) {
          const token = ACTORS[op.actor % ACTORS.length]!;
          const principal = TOKENS[token]!;
          const own = 'clientAccountId' in principal ? principal.clientAccountId : undefined;
          const mayTouch = (account: ModelAccount | undefined): boolean => account !== undefined && (own === undefined || account.tenant === own);
          // One in five aims at a client ID that exists nowhere.
          const target = op.kind === 'create' || op.account % 5 === 0 || accounts.length === 0 ? undefined : accounts[op.account % accounts.length];
          const clientId = target?.clientId ?? UNKNOWN_CLIENT_ID;
          const before = target && (await admin.getAccount(target.clientId));
          events.length = 0;

          let answer: Answer;
          let unknownPath = '';
          let unknownMethod = 'GET';
          let unknownBody: unknown;
          switch (op.kind) {
            case 'list': {
              answer = await send('GET', '/admin/service-accounts?limit=500', token);
              expect(answer.status).toBe(200);
              const listed = (JSON.parse(answer.text) as { clientId: string; clientAccountId: string | null }[]).map((a) => a.clientId).sort();
              expect(listed).toEqual(accounts.filter(mayTouch).map((a) => a.clientId).sort());
              break;
            }
            case 'create': {
              const tenant = op.tenant === undefined ? undefined : TENANTS[op.tenant % TENANTS.length]!;
              const scopes = SCOPES[op.scope];
              answer = await send('POST', '/admin/service-accounts', token, { name: `svc-${accounts.length}`, ...(tenant && { clientAccountId: tenant }), ...(scopes && { scopes }) });
              // Without scopes, an account passes every scope check: reserved ones too.
              const reserved = scopes === undefined || scopes.some((scope) => scope.startsWith('admin:'));
              if (own !== undefined && ((tenant !== undefined && tenant !== own) || reserved)) {
                expect(answer.status).toBe(403);
              } else {
                expect(answer.status).toBe(201);
                const created = JSON.parse(answer.text) as { clientId: string; clientAccountId: string | null; secret: { id: string } };
                expect(created.clientAccountId).toBe(own ?? tenant ?? null);
                accounts.push({ clientId: created.clientId, tenant: created.clientAccountId, secrets: [created.secret.id], federated: [] });
              }
              break;
            }
            case 'revoke': {
              const all = accounts.flatMap((a) => a.secrets);
              const secretId = all.length === 0 ? 'nosuchsecret0000' : all[op.secret % all.length]!;
              unknownMethod = 'DELETE';
              unknownPath = `/admin/service-accounts/${UNKNOWN_CLIENT_ID}/secrets/${secretId}`;
              answer = await send('DELETE', `/admin/service-accounts/${clientId}/secrets/${secretId}`, token);
              if (mayTouch(target)) expect(answer.status).toBe(target!.secrets.includes(secretId) ? 200 : 404);
              break;
            }
            case 'addFederated': {
              unknownBody = { issuer: 'https://token.actions.githubusercontent.com', subject: `repo:acme/svc:ref:refs/heads/b${op.subject}` };
              unknownMethod = 'POST';
              unknownPath = `/admin/service-accounts/${UNKNOWN_CLIENT_ID}/federated`;
              answer = await send('POST', `/admin/service-accounts/${clientId}/federated`, token, unknownBody);
              if (mayTouch(target)) {
                // 400 for a duplicate, 409 past the cap.
                expect([201, 400, 409]).toContain(answer.status);
                if (answer.status === 201) target!.federated.push((JSON.parse(answer.text) as { id: string }).id);
              }
              break;
            }
            case 'revokeFederated': {
              const all = accounts.flatMap((a) => a.federated);
              const credentialId = all.length === 0 ? 'esaf_0000000000000000' : all[op.credential % all.length]!;
              unknownMethod = 'DELETE';
              unknownPath = `/admin/service-accounts/${UNKNOWN_CLIENT_ID}/federated/${credentialId}`;
              answer = await send('DELETE', `/admin/service-accounts/${clientId}/federated/${credentialId}`, token);
              if (mayTouch(target)) expect(answer.status).toBe(target!.federated.includes(credentialId) ? 200 : 404);
              break;
            }
            default: {
              const suffix = { get: '', addSecret: '/secrets', disable: '/disable', enable: '/enable' }[op.kind];
              unknownMethod = op.kind === 'get' ? 'GET' : 'POST';
              unknownPath = `/admin/service-accounts/${UNKNOWN_CLIENT_ID}${suffix}`;
              answer = await send(unknownMethod, `/admin/service-accounts/${clientId}${suffix}`, token);
              if (mayTouch(target)) {
                expect([200, 201, 409]).toContain(answer.status);
                if (answer.status === 201) target!.secrets.push((JSON.parse(answer.text) as { id: string }).id);
              }
            }
          }

          if (op.kind !== 'list' && op.kind !== 'create' && !mayTouch(target)) {
            // Another client account's account is answered exactly like one that does not exist.
            expect(answer.status).toBe(404);
            const unknown = await unknownAnswer(unknownMethod, unknownPath, token, unknownBody);
            expect(answer).toEqual(unknown);
            if (target) expect(await admin.getAccount(target.clientId)).toEqual(before);
          }
          if (own !== undefined) {
            expect(answer.text).not.toMatch(new RegExp(accounts.filter((a) => !mayTouch(a)).map((a) => a.clientId).join('|') || '^\\b$'));
          }
          await settle();
          for (const event of events as (AccountEvent | SecretEvent | FederatedCredentialEvent)[]) {
            expect(event.actor).toEqual(principal.actor);
            expect(mayTouch(accounts.find((a) => a.clientId === event.clientId))).toBe(true);
          }
        }
      }),
      { numRuns: Number(process.env.ISOLATION_RUNS ?? 2000) },
    );
  }, 600_000);
});
