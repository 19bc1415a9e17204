/**
 * The secret method (src/client-auth/secret-method.ts), in process, with real parts: a client ID and a
 * secret (RFC 6749 §2.3.1) authenticate the client, and every refusal is one 401 `invalid_client`
 * whose cause only the audit event tells (docs/security.md). bcrypt is paid once per exact value
 * ("Paying bcrypt once per secret"), identical concurrent first requests share one compare, and past
 * the failure limit every attempt gets 429.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidClientError, TooManyRequestsError } from '../../src/errors.js';
import { SecretMethod, type SecretCredentials } from '../../src/client-auth/secret-method.js';
import { RememberedSecrets, VerifiedSecretDigests } from '../../src/secrets/remembered-secrets.js';
import { SecretCheckFlights, SecretVerifier } from '../../src/secrets/secret-verifier.js';
import type { BcryptGateKeys } from '../../src/secrets/bcrypt-gate.js';
import { authenticatedAs, closeClientAuthParts, createClientAuthParts, settle, type ClientAuthParts, type Settled } from '../helpers/client-auth-parts.js';
import { secretWithId } from '../helpers/secret-values.js';

/** The real verifier, counting its bcrypt compares. */
class CountingVerifier extends SecretVerifier {
  compares = 0;
  override verify(value: string, hash: string | undefined, keys?: BcryptGateKeys): Promise<boolean> {
    this.compares++;
    return super.verify(value, hash, keys);
  }
}

const ADDRESS = '192.0.2.10';
const UNKNOWN_CLIENT_ID = 'esa_nosuchclientnosuchclien';

afterEach(closeClientAuthParts);

async function setUp(options: Parameters<typeof createClientAuthParts>[0] = {}) {
  const parts = await createClientAuthParts(options);
  const { config, runtime, store } = parts;
  const secrets = new CountingVerifier({ rounds: config.secretHashRounds });
  const method = new SecretMethod({
    attempts: parts.attempts,
    accounts: runtime.accounts,
    secrets,
    remembered: new RememberedSecrets(),
    digests: new VerifiedSecretDigests(config.keyring, { store, storeTimeout: config.storeTimeout }),
    flights: new SecretCheckFlights(),
    ipv6Prefix: 64,
    now: config.now,
  });
  const account = await parts.admin.createAccount({ name: 'billing-exporter' });
  const authenticate = (credentials: SecretCredentials): Promise<Settled> => settle((done) => method.authenticate(credentials, ADDRESS, done));
  const basic = (clientId: string, secret: string): SecretCredentials & { kind: 'secret' } => ({ kind: 'secret', method: 'basic', clientId, secret, authorizationHeader: true });
  return { ...parts, secrets, method, account, authenticate, basic };
}

/** The refusal every cause shares (401 `invalid_client`), and the cause the audit event names. */
function expectRefused(parts: ClientAuthParts, settled: Settled, reason: string): void {
  expect(settled.error).toBeInstanceOf(InvalidClientError);
  expect((settled.error as InvalidClientError).reason).toBe(reason);
  expect(parts.failures()).toEqual([reason]);
}

describe('SecretMethod', () => {
  it('authenticates the right secret as the account, with the secret as its credential', async () => {
    const t = await setUp();
    const settled = await t.authenticate(t.basic(t.account.clientId, t.account.secret.value));
    expect(authenticatedAs(settled)).toEqual({ clientId: t.account.clientId, kind: 'secret', id: t.account.secret.id });
    expect(t.secrets.compares).toBe(1);
    expect(t.audit).toEqual([]);
  });

  it('refuses a wrong secret as wrong_secret, after one bcrypt compare', async () => {
    const t = await setUp();
    const settled = await t.authenticate(t.basic(t.account.clientId, secretWithId(t.account.secret.id)));
    expectRefused(t, settled, 'wrong_secret');
    expect(t.secrets.compares).toBe(1);
    // RFC 6749 §5.2: the client used Basic, so the answer challenges with Basic.
    expect((settled.error as InvalidClientError).challenge('service-accounts')).toMatch(/^Basic realm=/);
  });

  it('refuses an unknown client as unknown_client, after the same one compare (against the dummy hash)', async () => {
    const t = await setUp();
    expectRefused(t, await t.authenticate(t.basic(UNKNOWN_CLIENT_ID, t.account.secret.value)), 'unknown_client');
    expect(t.secrets.compares).toBe(1);
  });

  it('refuses a revoked secret as revoked_secret', async () => {
    const t = await setUp();
    await t.admin.addSecret(t.account.clientId);
    await t.admin.revokeSecret(t.account.clientId, t.account.secret.id);
    expectRefused(t, await t.authenticate(t.basic(t.account.clientId, t.account.secret.value)), 'revoked_secret');
  });

  it('refuses the right secret of a disabled account as disabled_account', async () => {
    const t = await setUp();
    await t.admin.disableAccount(t.account.clientId);
    expectRefused(t, await t.authenticate(t.basic(t.account.clientId, t.account.secret.value)), 'disabled_account');
  });

  it('refuses a value verified before once its secret is revoked, or its account disabled', async () => {
    const t = await setUp();
    const credentials = t.basic(t.account.clientId, t.account.secret.value);
    expect(authenticatedAs(await t.authenticate(credentials))?.kind).toBe('secret');
    await t.admin.addSecret(t.account.clientId);
    await t.admin.revokeSecret(t.account.clientId, t.account.secret.id);
    expectRefused(t, await t.authenticate(credentials), 'revoked_secret');
    const t2 = await setUp();
    const credentials2 = t2.basic(t2.account.clientId, t2.account.secret.value);
    expect(authenticatedAs(await t2.authenticate(credentials2))?.kind).toBe('secret');
    await t2.admin.disableAccount(t2.account.clientId);
    expectRefused(t2, await t2.authenticate(credentials2), 'disabled_account');
  });

  it('refuses unreadable credentials as malformed_credentials, and none as missing_credentials, without bcrypt', async () => {
    const t = await setUp();
    expectRefused(t, await t.authenticate({ kind: 'malformed', method: 'basic', authorizationHeader: true }), 'malformed_credentials');
    const t2 = await setUp();
    // A value that is not of the generated format (or whose checksum fails) cannot be one of ours.
    expectRefused(t2, await t2.authenticate(t2.basic(t2.account.clientId, 'not-a-generated-secret')), 'malformed_credentials');
    const t3 = await setUp();
    const none = await t3.authenticate({ kind: 'none', method: 'none', authorizationHeader: false });
    expectRefused(t3, none, 'missing_credentials');
    // No Authorization header: no Basic challenge (RFC 6749 §5.2).
    expect((none.error as InvalidClientError).challenge('service-accounts')).toBeUndefined();
    expect([t.secrets.compares, t2.secrets.compares, t3.secrets.compares]).toEqual([0, 0, 0]);
  });

  it('verifies a repeat request of the same exact value without a second bcrypt compare', async () => {
    const t = await setUp();
    const credentials = t.basic(t.account.clientId, t.account.secret.value);
    const first = await t.authenticate(credentials);
    const second = await t.authenticate(credentials);
    const third = await t.authenticate({ ...credentials, method: 'body', authorizationHeader: false });
    expect([first, second, third].map(authenticatedAs)).toEqual(Array(3).fill({ clientId: t.account.clientId, kind: 'secret', id: t.account.secret.id }));
    expect(t.secrets.compares).toBe(1);
  });

  it('a wrong value is compared again on every request (only a verified value is remembered)', async () => {
    const t = await setUp();
    const wrong = t.basic(t.account.clientId, secretWithId(t.account.secret.id));
    await t.authenticate(wrong);
    await t.authenticate(wrong);
    expect(t.secrets.compares).toBe(2);
    expect(t.failures()).toEqual(['wrong_secret', 'wrong_secret']);
  });

  it('two concurrent identical first requests share one bcrypt compare', async () => {
    const t = await setUp();
    const credentials = t.basic(t.account.clientId, t.account.secret.value);
    const both = await Promise.all([t.authenticate(credentials), t.authenticate(credentials)]);
    expect(both.map(authenticatedAs)).toEqual(Array(2).fill({ clientId: t.account.clientId, kind: 'secret', id: t.account.secret.id }));
    expect(t.secrets.compares).toBe(1);
  });

  it('past `max` failures, every attempt gets 429, the right secret too, and no compare is made', async () => {
    const max = 3;
    const t = await setUp({ failureLimit: { max, windowSeconds: 3600 } });
    for (let i = 0; i < max; i++) {
      expect((await t.authenticate(t.basic(t.account.clientId, secretWithId(t.account.secret.id)))).error).toBeInstanceOf(InvalidClientError);
    }
    expect(t.secrets.compares).toBe(max);
    const wrong = await t.authenticate(t.basic(t.account.clientId, secretWithId(t.account.secret.id)));
    const right = await t.authenticate(t.basic(t.account.clientId, t.account.secret.value));
    for (const refused of [wrong, right]) {
      expect(refused.error).toBeInstanceOf(TooManyRequestsError);
      expect((refused.error as TooManyRequestsError).retryAfterSeconds).toBeGreaterThan(0);
    }
    expect(t.secrets.compares).toBe(max);
    expect(t.failures()).toEqual([...Array(max).fill('wrong_secret'), 'rate_limited', 'rate_limited']);
  });

  it('a success gives its count back: failures below the limit never add up with successes to a 429', async () => {
    const max = 2;
    const t = await setUp({ failureLimit: { max, windowSeconds: 3600 } });
    const right = t.basic(t.account.clientId, t.account.secret.value);
    await t.authenticate(t.basic(t.account.clientId, secretWithId(t.account.secret.id)));
    // Counted in advance, then given back on success: still one failure on record.
    expect(authenticatedAs(await t.authenticate(right))?.kind).toBe('secret');
    const other = await t.admin.addSecret(t.account.clientId);
    expect(authenticatedAs(await t.authenticate(t.basic(t.account.clientId, other.value)))?.id).toBe(other.id);
    expect((await t.authenticate(t.basic(t.account.clientId, secretWithId(t.account.secret.id)))).error).toBeInstanceOf(InvalidClientError);
    expect((await t.authenticate(right)).error).toBeInstanceOf(TooManyRequestsError);
  });
});
