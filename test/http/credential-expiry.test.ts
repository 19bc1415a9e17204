/**
 * Credentials that expire (docs/rotation.md), over HTTP, on two instances sharing one store (a
 * MemoryAccountStore, and real PostgreSQL when POSTGRES_URL is set) and one injected clock:
 * "An expired credential fails like a revoked one (`invalid_client`, audit reason
 * `expired_credential`), and the tokens issued against it are refused on every instance from the
 * moment it expires (no change is written at that moment: each instance must know it from the record
 * it holds)". Also the server policy `maxCredentialLifetime` and the `credential.expiring` event.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { AdminError, createAdminApi, MemoryAccountStore, type AccountStore, type AuditEvent, type OperationalEvent } from '../../src/index.js';
import { createPostgresAccountStore } from '../../src/sql/index.js';
import { assertionFields, newKeyPair, signAssertion } from '../helpers/client-assertions.js';
import { createTestApp, TestClock } from '../helpers/create-app.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';
import { usePostgresSchemas } from '../helpers/postgres-schemas.js';
import { withPostgres } from '../helpers/with-postgres.js';

const LIFETIME_S = 60;

function refusalReasons(events: readonly AuditEvent[]): string[] {
  return events.flatMap((event) => (event.type === 'client.authentication_failed' ? [event.reason] : []));
}

function describeTwoInstances(name: string, makeStores: () => Promise<{ stores: [AccountStore, AccountStore]; cleanup: () => Promise<void> }>): void {
  describe(`an expiring secret on two instances sharing ${name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    async function setUp() {
      const { stores, cleanup } = await makeStores();
      const clock = new TestClock();
      const events: OperationalEvent[] = [];
      const one = createTestApp({ store: stores[0], now: clock.now, onEvent: (event) => void events.push(event) });
      const two = createTestApp({ store: stores[1], now: clock.now });
      cleanups.push(cleanup, () => one.sa.close(), () => two.sa.close());
      await Promise.all([one.sa.ready(), two.sa.ready()]);
      const account = await one.sa.admin.createAccount({ name: 'nightly-export' });
      const secret = await one.sa.admin.addSecret(account.clientId, { expiresIn: `${LIFETIME_S}s` });
      const token = (app: typeof one.app) => request(app).post('/oauth/token').auth(account.clientId, secret.value).type('form').send({ grant_type: 'client_credentials' });
      const whoami = (app: typeof one.app, accessToken: string) => request(app).get('/api/whoami').set('authorization', `Bearer ${accessToken}`);
      return { one, two, clock, events, account, secret, token, whoami };
    }

    // "An expired credential fails like a revoked one (invalid_client, audit reason expired_credential),
    // and the tokens issued against it are refused on every instance from the moment it expires."
    it('works on both instances up to its expiry, then is refused on both, with the tokens issued before it', async () => {
      const { one, two, clock, secret, token, whoami } = await setUp();
      expect(secret.expiresAt).toEqual(new Date(clock.now().getTime() + LIFETIME_S * 1000));
      const early = (await token(one.app).expect(200)).body.access_token as string;
      await token(two.app).expect(200); // the secret is now remembered on both (the fast path)
      await whoami(one.app, early).expect(200);
      await whoami(two.app, early).expect(200);

      clock.advance(LIFETIME_S - 1); // one second before its expiry: still good
      const late = (await token(two.app).expect(200)).body.access_token as string;
      await whoami(one.app, late).expect(200);

      clock.advance(1); // its expiry: nothing written, each instance reads it from the record it holds
      for (const instance of [one, two]) {
        expectOAuthError(await token(instance.app), 401, 'invalid_client', { challenge: /^Basic realm=/ });
        expect(refusalReasons(instance.events)).toContain('expired_credential');
        for (const issued of [early, late]) {
          const res = await whoami(instance.app, issued);
          expectOAuthError(res, 401, 'invalid_token');
          expect(res.headers['www-authenticate']).toMatch(/error_description="The access token was revoked"/);
        }
      }
    });

    // docs/observability.md: credential.expiring "at most once per credential on each instance".
    it('raises credential.expiring once on the instance that issued a token with it', async () => {
      const { one, events, account, secret, token } = await setUp();
      await token(one.app).expect(200);
      await token(one.app).expect(200);
      const expiring = events.filter((event) => event.type === 'credential.expiring');
      expect(expiring).toEqual([
        { type: 'credential.expiring', clientId: account.clientId, name: 'nightly-export', kind: 'secret', credentialId: secret.id, expiresAt: secret.expiresAt, at: expect.any(Date) },
      ]);
    });
  });
}

describeTwoInstances('a MemoryAccountStore', async () => {
  const store = new MemoryAccountStore();
  return { stores: [store, store], cleanup: async () => undefined };
});

withPostgres('credential expiry across instances', (connectionString) => {
  const schemas = usePostgresSchemas(connectionString);
  describeTwoInstances('real PostgreSQL', async () => {
    const schema = schemas.name('expiry_');
    const stores = [0, 1].map(() => createPostgresAccountStore({ connectionString, schema })) as [AccountStore, AccountStore];
    return { stores, cleanup: async () => undefined }; // sa.close() closes each store
  });
});

describe('an expiring key-pair credential', () => {
  // "An expired credential fails like a revoked one", for public keys too.
  it('signs assertions up to its expiry and is refused after it (expired_credential), with its tokens', async () => {
    const { app, sa, clock, events } = createTestApp();
    const account = await sa.admin.createAccount({ name: 'keyed' });
    const pair = await newKeyPair('ES256');
    const key = await sa.admin.addKey(account.clientId, pair.publicPem, { expiresIn: '30m' });
    expect(key.expiresAt).toEqual(new Date(clock.now().getTime() + 30 * 60_000));
    const assertion = () => signAssertion(pair, account.clientId, { now: Math.floor(clock.now().getTime() / 1000) });
    const issued = (await request(app).post('/oauth/token').type('form').send(assertionFields(await assertion())).expect(200)).body.access_token as string;
    clock.advance(30 * 60);
    expectOAuthError(await request(app).post('/oauth/token').type('form').send(assertionFields(await assertion())), 401, 'invalid_client');
    expect(refusalReasons(events)).toEqual(['expired_credential']);
    expectOAuthError(await request(app).get('/api/whoami').set('authorization', `Bearer ${issued}`), 401, 'invalid_token');
  });
});

describe('maxCredentialLifetime', () => {
  const NINETY_DAYS = 90 * 86_400;

  // Issue 34: "A server policy maxCredentialLifetime makes an expiry required and bounded for new credentials."
  it('refuses at creation a credential without an expiry, or one past the bound; accepts one within it', async () => {
    const { sa, clock } = createTestApp({ maxCredentialLifetime: NINETY_DAYS });
    expect(sa.config.maxCredentialLifetime).toBe(NINETY_DAYS); // resolved once, shown to the host
    const refused = async (promise: Promise<unknown>, message: RegExp) => {
      const err = await promise.then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(AdminError);
      expect((err as AdminError).code).toBe('invalid_input');
      expect((err as AdminError).message).toMatch(message);
    };
    await refused(sa.admin.createAccount({ name: 'no-expiry' }), /secret\.expiresIn is required.*maxCredentialLifetime.*90d/);
    const account = await sa.admin.createAccount({ name: 'bounded', secret: { expiresIn: '90d' } });
    expect(account.secret.expiresAt).toEqual(new Date(clock.now().getTime() + NINETY_DAYS * 1000));
    await refused(sa.admin.addSecret(account.clientId), /expiresIn is required/);
    await refused(sa.admin.addSecret(account.clientId, { expiresIn: '91d' }), /beyond this server's maxCredentialLifetime.*90d/);
    await refused(sa.admin.addSecret(account.clientId, { expiresAt: new Date(clock.now().getTime() + (NINETY_DAYS + 1) * 1000) }), /expiresAt lies beyond/);
    const pair = await newKeyPair('ES256');
    await refused(sa.admin.addKey(account.clientId, pair.publicPem), /expiresIn is required/);
    await refused(
      sa.admin.addFederatedCredential(account.clientId, { issuer: 'https://token.actions.githubusercontent.com', subject: 'repo:acme/billing:ref:refs/heads/main' }),
      /expiresIn is required/,
    );
    expect((await sa.admin.addSecret(account.clientId, { expiresIn: '30d' })).expiresAt).toEqual(new Date(clock.now().getTime() + 30 * 86_400_000));
    expect((await sa.admin.getAccount(account.clientId))?.secrets).toHaveLength(2);
  });

  it('is told by the admin API (and an admin API acting for a person), so a page can offer only the expiries it accepts', () => {
    const { sa } = createTestApp({ maxCredentialLifetime: NINETY_DAYS });
    expect(sa.admin.maxCredentialLifetime).toBe(NINETY_DAYS);
    expect(sa.admin.withActor({ id: 'u_1', name: 'Ada' }).maxCredentialLifetime).toBe(NINETY_DAYS);
    expect(createAdminApi({ store: new MemoryAccountStore(), maxCredentialLifetime: 3600 }).maxCredentialLifetime).toBe(3600);
    const unbounded = createTestApp().sa.admin;
    expect(unbounded.maxCredentialLifetime).toBeUndefined();
    expect('maxCredentialLifetime' in unbounded).toBe(false);
  });

  it('is refused at start-up when it is not a whole number of seconds from 1 to 3650 days', () => {
    expect(() => createTestApp({ maxCredentialLifetime: 0 })).toThrow(TypeError);
    expect(() => createTestApp({ maxCredentialLifetime: 3651 * 86_400 })).toThrow(/maxCredentialLifetime/);
  });
});

describe('an expiry the admin API refuses', () => {
  it('refuses a malformed duration, a past instant, both fields at once, and a store that cannot keep an expiry', async () => {
    const { sa } = createTestApp();
    const account = await sa.admin.createAccount({ name: 'checks' });
    for (const expiry of [{ expiresIn: '90 days' }, { expiresIn: '0s' }, { expiresIn: -5 }, { expiresAt: '2001-01-01T00:00:00Z' }, { expiresIn: '1d', expiresAt: new Date() }]) {
      await expect(sa.admin.addSecret(account.clientId, expiry)).rejects.toMatchObject({ code: 'invalid_input' });
    }
    // An RFC 3339 date and time (admin router docs) names one instant: text without an offset, or in
    // another format, would be read in each server's own time zone; an impossible date is no date.
    for (const expiresAt of ['2027-03-01T10:00:00', '2027-03-01 10:00', 'March 1, 2027', '2030', '2027-02-30T00:00:00Z', '2027-03-01T24:00:00Z']) {
      await expect(sa.admin.addSecret(account.clientId, { expiresAt }), expiresAt).rejects.toMatchObject({ code: 'invalid_input' });
    }
    for (const [expiresAt, instant] of [
      ['2027-03-01T10:00:00Z', '2027-03-01T10:00:00.000Z'],
      ['2027-03-01t10:00:00.25z', '2027-03-01T10:00:00.250Z'],
      ['2027-03-01T10:00:00+01:00', '2027-03-01T09:00:00.000Z'],
    ] as const) {
      await expect(sa.admin.addSecret(account.clientId, { expiresAt }), expiresAt).resolves.toMatchObject({ expiresAt: new Date(instant) });
      // Each accepted one takes a place among the account's live credentials: give it back.
      const secrets = (await sa.admin.getAccount(account.clientId))!.secrets;
      await sa.admin.revokeSecret(account.clientId, secrets[secrets.length - 1]!.id);
    }
    // A store written for an earlier version (no keepsCredentialExpiry): refused, rather than a secret that never expires.
    class LegacyStore extends MemoryAccountStore {
      override readonly keepsCredentialExpiry = false;
    }
    const legacy = createTestApp({ store: new LegacyStore() });
    const old = await legacy.sa.admin.createAccount({ name: 'legacy' });
    await expect(legacy.sa.admin.addSecret(old.clientId, { expiresIn: '1d' })).rejects.toThrow(/cannot keep credential expiry/);
    await expect(legacy.sa.admin.addSecret(old.clientId)).resolves.toMatchObject({ expiresAt: null });
  });
});
