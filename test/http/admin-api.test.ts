/**
 * The admin API (CONTRACT §1 "an admin API to provision accounts and manage secrets (create, list, add
 * secret, revoke secret, disable, enable)", §4 "A secret's value is shown once, at creation, and never
 * again"): its results, its refusals (AdminError codes), its audit events, and its effect over HTTP.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { AdminError, SECRET_PATTERN, type AuditEvent } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { expectAdminError } from '../helpers/expect-admin-error.js';
import { generateClientId, generateSecret } from '../../src/credentials/generate-credentials.js';
import { FailingStore } from '../helpers/failing-store.js';
import { issueToken } from '../helpers/tokens.js';

/** The audit hook runs off the request path (setImmediate): let it run. */
const flushAudit = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('admin API', () => {
  // CONTRACT §4 (`create`): `{"clientId", "name", "clientAccountId", "scopes": [...], "secret": {"id", "value"}}`.
  it('createAccount returns the account and its first secret, whose value is shown once', async () => {
    const { sa, clock } = createTestApp();
    const created = await sa.admin.createAccount({ name: 'procurement-portal', clientAccountId: 'acme', scopes: 'jobs:write jobs:read jobs:write' });
    expect(created).toEqual({
      clientId: expect.stringMatching(/^esa_[0-9A-Za-z]{24}$/),
      name: 'procurement-portal',
      clientAccountId: 'acme',
      scopes: ['jobs:write', 'jobs:read'],
      resources: [],
      accessTokenLifetime: null,
      dpopBoundAccessTokens: false,
      secret: { id: expect.stringMatching(/^[0-9A-Za-z]{16}$/), value: expect.stringMatching(SECRET_PATTERN), expiresAt: null },
    });
    const listed = await sa.admin.getAccount(created.clientId);
    expect(listed).toEqual({
      clientId: created.clientId,
      name: 'procurement-portal',
      clientAccountId: 'acme',
      enabled: true,
      scopes: ['jobs:write', 'jobs:read'],
      resources: [],
      accessTokenLifetime: null,
      dpopBoundAccessTokens: false,
      createdAt: clock.now(),
      secrets: [{ id: created.secret.id, createdAt: clock.now(), lastUsedAt: null, revokedAt: null, expiresAt: null }],
      keys: [],
      federated: [],
    });
    const unrestricted = await sa.admin.createAccount({ name: 'unrestricted' });
    expect(unrestricted).toMatchObject({ clientAccountId: null, scopes: [] });
  });

  // CONTRACT §4: "`list` shows no secret value and no hash". CONTRACT §2: "Secrets are stored only as hashes (bcrypt)."
  it('listAccounts shows every account and secret with no secret value and no hash', async () => {
    const { sa, store } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'one' });
    const b = await sa.admin.createAccount({ name: 'two', scopes: ['jobs:read'] });
    const extra = await sa.admin.addSecret(a.clientId);
    const list = await sa.admin.listAccounts();
    expect(list.map((x) => x.name)).toEqual(['one', 'two']);
    expect(list[0]!.secrets.map((s) => s.id)).toEqual([a.secret.id, extra.id]);
    for (const secret of list.flatMap((x) => x.secrets)) expect(Object.keys(secret).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'revokedAt']);
    const text = JSON.stringify(list);
    for (const value of [a.secret.value, b.secret.value, extra.value]) expect(text).not.toContain(value);
    expect(text).not.toContain('$2b$');
    expect(text).not.toMatch(SECRET_PATTERN);
    // The store holds bcrypt hashes, never the value.
    const stored = JSON.stringify(await store.listAccounts());
    expect(stored).toContain('$2b$');
    expect(stored).not.toContain(a.secret.value);
  });

  // SPEC §2.1: "More than one secret may exist for the same account at once (rotation). A secret can be revoked."
  it('addSecret and revokeSecret rotate secrets; the token endpoint follows at once', async () => {
    const { app, sa, clock } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'rotating' });
    const second = await sa.admin.addSecret(a.clientId);
    expect(second).toEqual({ id: expect.stringMatching(/^[0-9A-Za-z]{16}$/), value: expect.stringMatching(SECRET_PATTERN), expiresAt: null });
    expect(second.id).not.toBe(a.secret.id);
    await issueToken(app, a.clientId, a.secret.value);
    await issueToken(app, a.clientId, second.value);

    clock.advance(60);
    const revoked = await sa.admin.revokeSecret(a.clientId, a.secret.id);
    expect(revoked).toEqual({ clientId: a.clientId, secretId: a.secret.id, revokedAt: clock.now() });
    const res = await request(app).post('/oauth/token').type('form').send({ grant_type: 'client_credentials', client_id: a.clientId, client_secret: a.secret.value });
    expect(res.status).toBe(401);
    await issueToken(app, a.clientId, second.value);
    // Revocation is final: revoking again keeps the first revokedAt.
    clock.advance(60);
    const again = await sa.admin.revokeSecret(a.clientId, a.secret.id);
    expect(again.revokedAt).toEqual(revoked.revokedAt);
    const listed = await sa.admin.getAccount(a.clientId);
    expect(listed!.secrets.map((s) => s.revokedAt)).toEqual([revoked.revokedAt, null]);
  });

  // CONTRACT §4 (`disable` / `enable`): `{"clientId", "enabled"}`; SPEC §3 "disabled | Client authentication fails with `invalid_client`".
  it('disableAccount and enableAccount toggle client authentication', async () => {
    const { app, sa } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'toggled' });
    expect(await sa.admin.disableAccount(a.clientId)).toEqual({ clientId: a.clientId, enabled: false });
    const res = await request(app).post('/oauth/token').type('form').send({ grant_type: 'client_credentials', client_id: a.clientId, client_secret: a.secret.value });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: 'invalid_client' });
    expect(await sa.admin.enableAccount(a.clientId)).toEqual({ clientId: a.clientId, enabled: true });
    await issueToken(app, a.clientId, a.secret.value);
  });

  // Options: "maxSecretsPerAccount: Live (unrevoked) secrets allowed per account; adding one more fails. @default 5".
  it('refuses a sixth live secret with secret_limit_reached; revoking one makes room', async () => {
    const { sa } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'capped' });
    for (let i = 0; i < 4; i++) await sa.admin.addSecret(a.clientId);
    const err = await expectAdminError(sa.admin.addSecret(a.clientId), 'secret_limit_reached', /5 live secrets.*limit is 5.*revoke one/);
    expect(err.message).toContain(a.clientId);
    await sa.admin.revokeSecret(a.clientId, a.secret.id);
    await sa.admin.addSecret(a.clientId);
    await expectAdminError(sa.admin.addSecret(a.clientId), 'secret_limit_reached');

    const small = createTestApp({ maxSecretsPerAccount: 1 });
    const b = await small.sa.admin.createAccount({ name: 'single' });
    await expectAdminError(small.sa.admin.addSecret(b.clientId), 'secret_limit_reached', /limit is 1/);
  });

  // Issue 2 point 7: "A configurable cap on live secrets per account (default 5)": concurrent calls too.
  it('keeps the cap when secrets are added concurrently', async () => {
    const { sa } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'concurrent' });
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => sa.admin.addSecret(a.clientId)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(4);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as AdminError).code).toBe('secret_limit_reached');
    const listed = await sa.admin.getAccount(a.clientId);
    expect(listed?.secrets.filter((s) => s.revokedAt === null)).toHaveLength(5);
  });

  // The same cap when another process (the CLI, another instance) adds a secret at the same time.
  it('takes its new secret back, unseen, when another instance went past the cap at the same time', async () => {
    const first = createTestApp({ maxSecretsPerAccount: 2 });
    const second = createTestApp({ maxSecretsPerAccount: 2, store: first.store });
    const a = await first.sa.admin.createAccount({ name: 'two-instances' });
    const results = await Promise.allSettled([first.sa.admin.addSecret(a.clientId), second.sa.admin.addSecret(a.clientId)]);
    expect(results.some((r) => r.status === 'rejected')).toBe(true);
    const listed = await first.sa.admin.getAccount(a.clientId);
    expect(listed?.secrets.filter((s) => s.revokedAt === null).length).toBeLessThanOrEqual(2);
  });

  it('refuses invalid input with invalid_input, unknown accounts and secrets with their own codes', async () => {
    const { sa } = createTestApp();
    const bad: unknown[] = [
      undefined,
      null,
      'name',
      {},
      { name: '' },
      { name: '   ' },
      { name: 'x'.repeat(201) },
      { name: 'line\nbreak' },
      { name: 42 },
      { name: 'ok', clientAccountId: '' },
      { name: 'ok', clientAccountId: 7 },
      { name: 'ok', scopes: ['has space'] },
      { name: 'ok', scopes: ['quo"te'] },
      { name: 'ok', scopes: ['back\\slash'] },
      { name: 'ok', scopes: [42] },
      { name: 'ok', scopes: { a: 1 } },
    ];
    for (const input of bad) {
      await expectAdminError(sa.admin.createAccount(input as never), 'invalid_input');
    }
    expect(await sa.admin.listAccounts()).toEqual([]);

    const a = await sa.admin.createAccount({ name: 'real' });
    await expectAdminError(sa.admin.addSecret('esa_unknown'), 'account_not_found');
    await expectAdminError(sa.admin.disableAccount('esa_unknown'), 'account_not_found');
    await expectAdminError(sa.admin.enableAccount('esa_unknown'), 'account_not_found');
    await expectAdminError(sa.admin.revokeSecret('esa_unknown', a.secret.id), 'account_not_found');
    await expectAdminError(sa.admin.revokeSecret(a.clientId, 'AAAAAAAAAAAAAAAA'), 'secret_not_found');
    await expectAdminError(sa.admin.revokeSecret(a.clientId, 'not an id'), 'secret_not_found');
    expect(await sa.admin.getAccount('esa_unknown')).toBeUndefined();
  });

  // The name is shown by `list`, in audit events, in req.serviceAccount and in activity history: a secret pasted
  // there would be shown to all of them, and a name that is a client ID would pass for another account.
  it('refuses a name or client account ID that contains a secret or is a client ID, without echoing it', async () => {
    const { sa, events } = createTestApp();
    const secret = generateSecret().value;
    const clientId = generateClientId();
    const cases: { input: { name: string; clientAccountId?: string }; message: RegExp }[] = [
      { input: { name: secret }, message: /^name must not contain a client secret \(esas_\.\.\.\)/ },
      { input: { name: `procurement ${secret}` }, message: /^name must not contain a client secret/ },
      { input: { name: `portal-${secret}-prod` }, message: /^name must not contain a client secret/ },
      { input: { name: `x${secret}y` }, message: /^name must not contain a client secret/ }, // no word boundary needed
      { input: { name: secret.slice(0, -6) }, message: /^name must not contain a client secret/ }, // the checksum can be recomputed
      { input: { name: `my ${secret.slice(0, 30)}` }, message: /^name must not contain a client secret/ }, // cut short
      { input: { name: clientId }, message: /^name must not be a client ID \(esa_ and 24 letters or digits\)/ },
      { input: { name: `  ${clientId} ` }, message: /^name must not be a client ID/ },
      { input: { name: 'ok', clientAccountId: secret }, message: /^clientAccountId must not contain a client secret/ },
      { input: { name: 'ok', clientAccountId: `acct ${secret}` }, message: /^clientAccountId must not contain a client secret/ },
      { input: { name: 'ok', clientAccountId: clientId }, message: /^clientAccountId must not be a client ID/ },
    ];
    for (const { input, message } of cases) {
      const err = await expectAdminError(sa.admin.createAccount(input), 'invalid_input', message);
      expect(err.message).not.toContain(secret.slice(5, 21)); // not even the secret's ID part
      expect(err.message).not.toContain(clientId);
    }
    await flushAudit();
    expect(await sa.admin.listAccounts()).toEqual([]);
    expect(events).toEqual([]);

    // Only a secret (from its prefix, ID and separator on) or exactly a client ID: names that merely look alike are fine.
    for (const name of ['esas_', 'empresas_grandes', 'esa_portal', `${clientId}x`, `mirror of ${clientId}`, secret.slice(0, 21)]) {
      expect((await sa.admin.createAccount({ name })).name, name).toBe(name);
    }
  });

  // Options (onAudit): "Receives audit events (... account and secret changes). Never receives a secret."
  // SPEC §1: "Every action taken by a service account is attributed to the service account's name in audit logs".
  it('emits an audit event with name and clientId for every change, never a secret', async () => {
    const { sa, events, clock } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'audited' });
    const second = await sa.admin.addSecret(a.clientId);
    await sa.admin.revokeSecret(a.clientId, a.secret.id);
    await sa.admin.disableAccount(a.clientId);
    await sa.admin.enableAccount(a.clientId);
    await flushAudit();
    const at = clock.now();
    expect(events).toEqual([
      { type: 'account.created', clientId: a.clientId, name: 'audited', at },
      { type: 'secret.created', clientId: a.clientId, name: 'audited', secretId: a.secret.id, at },
      { type: 'secret.created', clientId: a.clientId, name: 'audited', secretId: second.id, at },
      { type: 'secret.revoked', clientId: a.clientId, name: 'audited', secretId: a.secret.id, at },
      { type: 'account.disabled', clientId: a.clientId, name: 'audited', at },
      { type: 'account.enabled', clientId: a.clientId, name: 'audited', at },
    ]);
    const text = JSON.stringify(events);
    expect(text).not.toContain(a.secret.value);
    expect(text).not.toContain(second.value);
    expect(text).not.toContain('$2b$');
  });

  // Same clause, for the token endpoint and the bearer check: issued / refused / failed, with the account's name.
  it('audits tokens issued and refused and failed authentications, never a secret', async () => {
    const { app, sa, events } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'worker', scopes: ['jobs:read'] });
    const token = await issueToken(app, a.clientId, a.secret.value);
    await request(app).post('/oauth/token').type('form').send({ grant_type: 'client_credentials', client_id: a.clientId, client_secret: `${a.secret.value}x` });
    await request(app).post('/api/jobs').set('Authorization', `Bearer ${token}`).expect(403);
    await flushAudit();
    const byType = (type: AuditEvent['type']) => events.filter((e) => e.type === type);
    expect(byType('token.issued')).toEqual([
      expect.objectContaining({ clientId: a.clientId, name: 'worker', secretId: a.secret.id, scopes: ['jobs:read'] }),
    ]);
    expect(byType('client.authentication_failed')).toEqual([expect.objectContaining({ clientId: a.clientId, reason: expect.any(String) })]);
    expect(byType('token.refused')).toEqual([expect.objectContaining({ clientId: a.clientId, name: 'worker', reason: 'insufficient_scope' })]);
    const text = JSON.stringify(events);
    expect(text).not.toContain(a.secret.value);
    expect(text).not.toContain(token);
  });

  // Options (onAudit): "Called off the request path; a hook that throws or rejects is ignored."
  it.each([
    [
      'throws',
      () => {
        throw new Error('audit sink down');
      },
    ],
    ['rejects', () => Promise.reject(new Error('audit sink down'))],
  ])('an onAudit hook that %s never breaks a request or an admin call', async (_name, onAudit) => {
    const { app, sa } = createTestApp({ onAudit });
    const a = await sa.admin.createAccount({ name: 'unbothered' });
    await sa.admin.addSecret(a.clientId);
    const token = await issueToken(app, a.clientId, a.secret.value);
    await request(app).get('/api/whoami').set('Authorization', `Bearer ${token}`).expect(200);
    const res = await request(app).post('/oauth/token').type('form').send({ grant_type: 'client_credentials', client_id: a.clientId, client_secret: 'wrong' });
    expect(res.status).toBe(401);
    await sa.admin.disableAccount(a.clientId);
    await request(app).get('/api/whoami').set('Authorization', `Bearer ${token}`).expect(401);
    await flushAudit();
    await flushAudit();
  });

  // AdminApi: "reject with the store's error when the store fails" (not an AdminError, never a half-done change).
  it('rejects with a store error, not an AdminError, when the store is unreachable', async () => {
    const { sa } = createTestApp({ store: new FailingStore() });
    const err = await sa.admin.createAccount({ name: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(AdminError);
    await expect(sa.admin.listAccounts()).rejects.toThrow();
  });
});
