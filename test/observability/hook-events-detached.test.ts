/**
 * What the `onAudit` and `onEvent` hooks receive is theirs alone (docs/observability.md: "The hook runs
 * off the request path"): an event holds copies, never the account record the instance authorizes
 * with, so a hook that edits an event it was given (sorts or empties a list, moves a date) changes
 * nothing about the next request.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { AuditEvent, OperationalEvent } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';

/** Hooks run on a later turn of the event loop (setImmediate): let them run. */
const flushHooks = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

describe('an event handed to a hook', () => {
  it("token.issued: emptying its scopes leaves the account's scopes as they were", async () => {
    const seen: AuditEvent[] = [];
    const t = createTestApp({
      onAudit: (event) => {
        seen.push(event);
        if (event.type === 'token.issued' && !Object.isFrozen(event.scopes)) (event.scopes as string[]).length = 0;
      },
    });
    const account = await t.sa.admin.createAccount({ name: 'scoped-reporter', scopes: ['jobs:read'] });
    const token = () => request(t.app).post('/oauth/token').auth(account.clientId, account.secret.value).type('form').send({ grant_type: 'client_credentials' });
    expect((await token().expect(200)).body.scope).toBe('jobs:read');
    await flushHooks();
    // Emptied, the account's own list would have made it unrestricted: a token without any scope.
    expect((await token().expect(200)).body.scope).toBe('jobs:read');
    await flushHooks();
    expect(seen.filter((event) => event.type === 'token.issued').map((event) => event.type === 'token.issued' && event.scopes)).toEqual([['jobs:read'], ['jobs:read']]);
  });

  it('federated_credential.created: the copy keeps every claim condition, one named __proto__ too', async () => {
    const seen: AuditEvent[] = [];
    const t = createTestApp({ onAudit: (event) => void seen.push(event) });
    const account = await t.sa.admin.createAccount({ name: 'deployer' });
    const claims = Object.fromEntries([['environment', 'production'], ['__proto__', 'y']]) as Record<string, string>;
    await t.sa.admin.addFederatedCredential(account.clientId, { issuer: 'https://token.actions.githubusercontent.com', subject: 'repo:acme/api:environment:production', claims });
    await flushHooks();
    const created = seen.find((event) => event.type === 'federated_credential.created');
    expect(created?.type === 'federated_credential.created' && Object.entries(created.claims ?? {})).toEqual([['environment', 'production'], ['__proto__', 'y']]);
    expect(Object.isFrozen(created?.type === 'federated_credential.created' && created.claims)).toBe(true);
  });

  it("credential.expiring: moving its expiresAt leaves the credential's expiry as it was", async () => {
    const t = createTestApp({
      onEvent: (event: OperationalEvent) => {
        if (event.type === 'credential.expiring') event.expiresAt.setTime(event.expiresAt.getTime() + 365 * 86_400_000);
      },
    });
    const account = await t.sa.admin.createAccount({ name: 'nightly-export' });
    const secret = await t.sa.admin.addSecret(account.clientId, { expiresIn: '60s' });
    const token = () => request(t.app).post('/oauth/token').auth(account.clientId, secret.value).type('form').send({ grant_type: 'client_credentials' });
    await token().expect(200);
    await flushHooks();
    t.clock.advance(60);
    await token().expect(401);
  });
});
