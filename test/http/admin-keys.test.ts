/**
 * The admin API's key-pair credentials (docs/private-key-jwt.md): `addKey` returns
 * `{id, thumbprint, createdAt}`, `revokeKey` returns `{clientId, keyId, revokedAt}`, listings show each
 * account's keys beside its secrets, keys count against the cap on live credentials, and the refusals
 * (a private key, a duplicate, unknown IDs) have their own codes and never repeat a key.
 */
import { generateKeyPairSync } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { AdminError, MemoryAccountStore, type AccountRecord, type AuditEvent } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { expectAdminError } from '../helpers/expect-admin-error.js';
import { ForwardingStore } from '../helpers/forwarding-store.js';

/** The audit hook runs off the request path (setImmediate): let it run. */
const flushAudit = () => new Promise<void>((resolve) => setImmediate(resolve));

const newPair = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const publicPem = (pair = newPair()): string => pair.publicKey.export({ format: 'pem', type: 'spki' }).toString();

/** A store written before stores held keys: no key methods, and accounts without `keys`. */
class SecretsOnlyStore extends ForwardingStore {
  override async findAccount(clientId: string): Promise<AccountRecord | undefined> {
    const account = await this.inner.findAccount(clientId);
    if (!account) return undefined;
    const { keys: _keys, ...rest } = account;
    return rest;
  }
  override async listAccounts(): Promise<AccountRecord[]> {
    return (await this.inner.listAccounts()).map(({ keys: _keys, ...rest }) => rest);
  }
}

describe('admin API: key-pair credentials', () => {
  // RFC 7638 §3: the thumbprint of a JWK is the base64url SHA-256 of its required members.
  it('addKey registers a public key and returns its ID, RFC 7638 thumbprint and creation time; listings show it', async () => {
    const { sa, clock } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'ci-deployer' });
    const pair = newPair();
    const created = await sa.admin.addKey(a.clientId, publicPem(pair));
    const thumbprint = await calculateJwkThumbprint(await exportJWK(pair.publicKey), 'sha256');
    expect(created).toEqual({ id: expect.stringMatching(/^esak_[0-9A-Za-z]{16}$/), thumbprint, createdAt: clock.now(), expiresAt: null });
    const listed = await sa.admin.getAccount(a.clientId);
    expect(listed?.keys).toEqual([{ id: created.id, thumbprint, createdAt: clock.now(), lastUsedAt: null, revokedAt: null, expiresAt: null }]);
    expect(listed?.secrets).toHaveLength(1);
    expect((await sa.admin.listAccounts()).find((x) => x.clientId === a.clientId)?.keys).toEqual(listed?.keys);
    // A JWK object is accepted as well as PEM text.
    const jwk = await exportJWK(newPair().publicKey);
    expect((await sa.admin.addKey(a.clientId, jwk)).thumbprint).toBe(await calculateJwkThumbprint(jwk, 'sha256'));
  });

  it('revokeKey revokes the key once and returns clientId, keyId and revokedAt', async () => {
    const { sa, clock } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'ci-deployer' });
    const key = await sa.admin.addKey(a.clientId, publicPem());
    clock.advance(60);
    expect(await sa.admin.revokeKey(a.clientId, key.id)).toEqual({ clientId: a.clientId, keyId: key.id, revokedAt: clock.now() });
    const revokedAt = clock.now();
    clock.advance(60);
    // A second revocation keeps the first time.
    expect(await sa.admin.revokeKey(a.clientId, key.id)).toEqual({ clientId: a.clientId, keyId: key.id, revokedAt });
    expect((await sa.admin.getAccount(a.clientId))?.keys[0]?.revokedAt).toEqual(revokedAt);
  });

  // A private key belongs to the client alone: refused, never stored, never repeated in the message.
  it('refuses a private key with invalid_input, stores nothing and repeats none of it', async () => {
    const { sa } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'ci-deployer' });
    const privatePem = newPair().privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const err = await expectAdminError(sa.admin.addKey(a.clientId, privatePem), 'invalid_input', /^publicKey: that is a private key/);
    for (const line of privatePem.split('\n').filter((l) => l.length > 20)) expect(err.message).not.toContain(line.slice(0, 20));
    await expectAdminError(sa.admin.addKey(a.clientId, { kty: 'oct', k: 'c2hhcmVkLXNlY3JldA' }), 'invalid_input', /symmetric/);
    await expectAdminError(sa.admin.addKey(a.clientId, 'not a key'), 'invalid_input');
    expect((await sa.admin.getAccount(a.clientId))?.keys).toEqual([]);
  });

  it('refuses a second registration of a live key with key_already_registered; after revocation it may be added again', async () => {
    const { sa } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'ci-deployer' });
    const pair = newPair();
    const first = await sa.admin.addKey(a.clientId, publicPem(pair));
    // The same key in another form is the same key.
    const err = await expectAdminError(sa.admin.addKey(a.clientId, await exportJWK(pair.publicKey)), 'key_already_registered');
    expect(err.message).toContain(first.id);
    await sa.admin.revokeKey(a.clientId, first.id);
    const again = await sa.admin.addKey(a.clientId, publicPem(pair));
    expect(again.thumbprint).toBe(first.thumbprint);
    expect(again.id).not.toBe(first.id);
  });

  it('refuses unknown accounts with account_not_found and unknown or foreign key IDs with key_not_found', async () => {
    const { sa } = createTestApp();
    const a = await sa.admin.createAccount({ name: 'one' });
    const b = await sa.admin.createAccount({ name: 'two' });
    const keyOfA = await sa.admin.addKey(a.clientId, publicPem());
    await expectAdminError(sa.admin.addKey('esa_unknown', publicPem()), 'account_not_found');
    await expectAdminError(sa.admin.revokeKey('esa_unknown', keyOfA.id), 'account_not_found');
    await expectAdminError(sa.admin.revokeKey(a.clientId, 'esak_0000000000000000'), 'key_not_found');
    await expectAdminError(sa.admin.revokeKey(a.clientId, a.secret.id), 'key_not_found');
    await expectAdminError(sa.admin.revokeKey(b.clientId, keyOfA.id), 'key_not_found', new RegExp(keyOfA.id));
    expect((await sa.admin.getAccount(a.clientId))?.keys[0]?.revokedAt).toBeNull();
  });

  // Options: "maxSecretsPerAccount": live credentials, secrets and keys together.
  it('counts keys against maxSecretsPerAccount together with secrets', async () => {
    const { sa } = createTestApp({ maxSecretsPerAccount: 2 });
    const a = await sa.admin.createAccount({ name: 'capped' });
    const key = await sa.admin.addKey(a.clientId, publicPem());
    await expectAdminError(sa.admin.addKey(a.clientId, publicPem()), 'credential_limit_reached', /1 live secrets and 1 live keys.*limit is 2/);
    await expectAdminError(sa.admin.addSecret(a.clientId), 'secret_limit_reached', /1 live secrets and 1 live keys.*limit is 2/);
    await sa.admin.revokeKey(a.clientId, key.id);
    await sa.admin.addSecret(a.clientId);
    await expectAdminError(sa.admin.addKey(a.clientId, publicPem()), 'credential_limit_reached', /2 live secrets and 0 live keys/);
  });

  it('keeps the cap when keys are added concurrently', async () => {
    const { sa } = createTestApp({ maxSecretsPerAccount: 3 });
    const a = await sa.admin.createAccount({ name: 'concurrent' });
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => sa.admin.addKey(a.clientId, publicPem())));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as AdminError).code).toBe('credential_limit_reached');
  });

  it('emits key.created and key.revoked naming the account, the key ID and thumbprint, never the key', async () => {
    const events: AuditEvent[] = [];
    const { sa } = createTestApp({ onAudit: (e) => void events.push(e) });
    const a = await sa.admin.createAccount({ name: 'ci-deployer' });
    const pem = publicPem();
    const key = await sa.admin.addKey(a.clientId, pem);
    await sa.admin.revokeKey(a.clientId, key.id);
    await flushAudit();
    const keyEvents = events.filter((e) => e.type.startsWith('key.'));
    expect(keyEvents).toEqual([
      { type: 'key.created', at: expect.any(Date), clientId: a.clientId, name: 'ci-deployer', keyId: key.id, thumbprint: key.thumbprint },
      { type: 'key.revoked', at: expect.any(Date), clientId: a.clientId, name: 'ci-deployer', keyId: key.id, thumbprint: key.thumbprint },
    ]);
    expect(JSON.stringify(events)).not.toContain(pem.split('\n')[1]);
  });

  // docs/writing-a-store.md: a store without the key methods holds secrets only.
  it('over a store without key methods: listings show no keys and addKey fails with a clear message', async () => {
    const { sa } = createTestApp({ store: new SecretsOnlyStore(new MemoryAccountStore()) });
    const a = await sa.admin.createAccount({ name: 'legacy' });
    expect((await sa.admin.getAccount(a.clientId))?.keys).toEqual([]);
    await expect(sa.admin.addKey(a.clientId, publicPem())).rejects.toThrow(/store cannot hold public keys.*addKey/);
    await expectAdminError(sa.admin.revokeKey(a.clientId, 'esak_0000000000000000'), 'key_not_found');
  });
});
