/**
 * The federated method (src/client-auth/federated-method.ts), in process, with the real check of the
 * instance (createFederatedClientCheck: subject lookup, IssuerKeySets) against a real OpenID Connect
 * issuer on loopback (test/helpers/local-oidc-issuer.ts). docs/federated-credentials.md: the account is
 * the one holding a live federated credential for exactly the token's issuer and subject; "a token
 * naming an issuer nobody trusts never causes a request"; the token carries the credential's audience
 * as its sole audience, and a `jti` is used once. The clock is the test's.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FederatedKeysUnavailableError, InvalidClientError } from '../../src/errors.js';
import { createFederatedClientCheck, FederatedMethod } from '../../src/client-auth/federated-method.js';
import { JWT_BEARER_ASSERTION_TYPE, presentedCredentials } from '../../src/client-auth/presented-credentials.js';
import { authenticatedAs, closeClientAuthParts, createClientAuthParts, settle, type Settled } from '../helpers/client-auth-parts.js';
import { TEST_ISSUER } from '../helpers/create-app.js';
import { startLocalIssuer, type KubernetesTokenOptions, type LocalIssuer } from '../helpers/local-oidc-issuer.js';

const SUBJECT = 'system:serviceaccount:payments:exporter';

const issuers: LocalIssuer[] = [];
afterEach(async () => {
  await closeClientAuthParts();
  await Promise.all(issuers.splice(0).map((idp) => idp.close()));
});

async function localIssuer(): Promise<LocalIssuer> {
  const idp = await startLocalIssuer({ alg: 'ES256' }); // ES256: no RSA key to generate per test
  issuers.push(idp);
  return idp;
}

async function setUp() {
  const idp = await localIssuer();
  const parts = await createClientAuthParts({ federation: { allowHttpLoopback: true, fetchTimeout: 1000 } });
  const check = createFederatedClientCheck(parts.runtime);
  expect(check).toBeDefined(); // MemoryAccountStore holds federated credentials
  const method = new FederatedMethod(parts.attempts, check, parts.clock.now);
  const account = await parts.admin.createAccount({ name: 'payments-exporter' });
  const credential = await parts.admin.addFederatedCredential(account.clientId, { issuer: idp.issuer, subject: SUBJECT });
  const token = (options: Partial<KubernetesTokenOptions> = {}, from: LocalIssuer = idp) =>
    from.kubernetesToken({ audience: TEST_ISSUER, now: parts.clock.now(), subject: SUBJECT, ...options });
  /** Authenticates a token request carrying `assertion` (and `client_id` beside it, when given), read as the token endpoint reads it. */
  const authenticate = (assertion: string, clientId?: string): Promise<Settled> => {
    const credentials = presentedCredentials(
      { client_id: clientId, client_secret: undefined, client_assertion_type: JWT_BEARER_ASSERTION_TYPE, client_assertion: assertion },
      undefined,
    );
    if (credentials.kind !== 'federated') throw new Error(`the assertion was read as kind ${credentials.kind}`);
    return settle((done) => method.authenticate(credentials, '192.0.2.30', done));
  };
  return { ...parts, idp, method, account, credential, token, authenticate };
}

function expectRefused(settled: Settled, reason: string, failures: string[]): void {
  expect(settled.error).toBeInstanceOf(InvalidClientError);
  expect((settled.error as InvalidClientError).reason).toBe(reason);
  expect(failures.at(-1)).toBe(reason);
}

describe('FederatedMethod', () => {
  it('authenticates a token of the trusted issuer and subject as the account, with the federated credential', async () => {
    const t = await setUp();
    expect(authenticatedAs(await t.authenticate(await t.token()))).toEqual({ clientId: t.account.clientId, kind: 'federated', id: t.credential.id });
    expect(t.audit).toEqual([]);
    expect(t.idp.fetches('jwks')).toBe(1);
  });

  it('refuses a token of an issuer nobody trusts as untrusted_token, without a single request to it', async () => {
    const t = await setUp();
    const stranger = await localIssuer();
    expectRefused(await t.authenticate(await t.token({}, stranger)), 'untrusted_token', t.failures());
    expect(stranger.requests).toEqual([]);
    expect(t.idp.requests).toEqual([]);
  });

  it('refuses a token of the trusted issuer for another subject as untrusted_token, without a request', async () => {
    const t = await setUp();
    expectRefused(await t.authenticate(await t.token({ subject: 'system:serviceaccount:payments:intruder' })), 'untrusted_token', t.failures());
    expect(t.idp.requests).toEqual([]);
  });

  it('refuses a token that only a revoked credential trusts: revoked_federated_credential with client_id, untrusted_token without; no request', async () => {
    const t = await setUp();
    await t.admin.revokeFederatedCredential(t.account.clientId, t.credential.id);
    expectRefused(await t.authenticate(await t.token(), t.account.clientId), 'revoked_federated_credential', t.failures());
    // Without client_id the account is found by the live credentials trusting the pair: there is none.
    expectRefused(await t.authenticate(await t.token()), 'untrusted_token', t.failures());
    expect(t.idp.requests).toEqual([]);
  });

  // Issue 34: "An expired credential fails like a revoked one (invalid_client, audit reason expired_credential)".
  it('accepts a token up to its credential\'s expiry, then refuses it as expired_credential (with or without client_id), fetching no keys for it', async () => {
    const t = await setUp();
    await t.admin.revokeFederatedCredential(t.account.clientId, t.credential.id);
    const expiring = await t.admin.addFederatedCredential(t.account.clientId, { issuer: t.idp.issuer, subject: SUBJECT, expiresIn: '1h' });
    expect(expiring.expiresAt).toEqual(new Date(t.clock.now().getTime() + 3_600_000));
    t.clock.advance(3599);
    expect(authenticatedAs(await t.authenticate(await t.token()))).toEqual({ clientId: t.account.clientId, kind: 'federated', id: expiring.id });
    const fetched = t.idp.requests.length;
    t.clock.advance(1);
    expectRefused(await t.authenticate(await t.token(), t.account.clientId), 'expired_credential', t.failures());
    expectRefused(await t.authenticate(await t.token()), 'expired_credential', t.failures());
    expect(t.idp.requests.length).toBe(fetched);
  });

  // An unverified token must not cost other workloads their remembered lookup: forgetting the stale
  // answer of its own issuer and subject is all it may do.
  it('after a token naming an expired credential, even an unsigned one, still answers other workloads without asking the store again', async () => {
    const t = await setUp();
    const old = await t.admin.createAccount({ name: 'retired-exporter' });
    await t.admin.addFederatedCredential(old.clientId, { issuer: t.idp.issuer, subject: 'system:serviceaccount:payments:retired', expiresIn: '1h' });
    t.clock.advance(3600);
    const lookups = vi.spyOn(t.store, 'findFederatedClients');
    expect(authenticatedAs(await t.authenticate(await t.token()))).toMatchObject({ clientId: t.account.clientId });
    expect(lookups).toHaveBeenCalledTimes(1);
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const at = Math.floor(t.clock.now().getTime() / 1000);
    const unsigned = `${part({ alg: 'ES256', kid: 'k' })}.${part({ iss: t.idp.issuer, sub: 'system:serviceaccount:payments:retired', aud: TEST_ISSUER, iat: at, exp: at + 300 })}.AAAA`;
    for (let i = 0; i < 3; i++) {
      expectRefused(await t.authenticate(unsigned), 'expired_credential', t.failures());
      expect(authenticatedAs(await t.authenticate(await t.token()))).toMatchObject({ clientId: t.account.clientId });
    }
    // One lookup per retired-pair request (its stale answer forgotten each time), none for the live pair.
    expect(lookups.mock.calls.map(([, subject]) => subject)).toEqual([SUBJECT, ...Array(3).fill('system:serviceaccount:payments:retired')]);
  });

  it('refuses a token two accounts trust, sent without client_id, as ambiguous_token; with client_id it picks the account', async () => {
    const t = await setUp();
    const second = await t.admin.createAccount({ name: 'payments-exporter-2' });
    const secondCredential = await t.admin.addFederatedCredential(second.clientId, { issuer: t.idp.issuer, subject: SUBJECT });
    expectRefused(await t.authenticate(await t.token()), 'ambiguous_token', t.failures());
    expect(t.idp.requests).toEqual([]);
    expect(authenticatedAs(await t.authenticate(await t.token(), second.clientId))).toEqual({ clientId: second.clientId, kind: 'federated', id: secondCredential.id });
  });

  it('refuses a replayed token (the same jti) as replayed_assertion', async () => {
    const t = await setUp();
    const token = await t.token();
    expect(authenticatedAs(await t.authenticate(token))?.kind).toBe('federated');
    expectRefused(await t.authenticate(token), 'replayed_assertion', t.failures());
  });

  it.each([
    ['another audience', 'https://other.test'],
    ['the credential audience among others', [TEST_ISSUER, 'https://other.test']],
  ])('refuses a token made out to %s as wrong_audience', async (_name, audience) => {
    const t = await setUp();
    expectRefused(await t.authenticate(await t.token({ audience })), 'wrong_audience', t.failures());
  });

  it('refuses a token whose exp lies further ahead than federation.maxTokenLifetime allows as assertion_lifetime_too_long', async () => {
    const t = await setUp();
    const tooLong = t.config.federation.maxTokenLifetime + t.config.clockTolerance + 1;
    expectRefused(await t.authenticate(await t.token({ lifetime: tooLong })), 'assertion_lifetime_too_long', t.failures());
  });

  it('refuses the token of a disabled account as disabled_account', async () => {
    const t = await setUp();
    await t.admin.disableAccount(t.account.clientId);
    expectRefused(await t.authenticate(await t.token()), 'disabled_account', t.failures());
  });

  // A failed fetch is answered one second after it began, however fast it failed (fetch-json-document.ts).
  it('answers FederatedKeysUnavailableError (503) when the issuer is down, and audits no failure', async () => {
    const t = await setUp();
    await t.idp.setMode('down');
    const settled = await t.authenticate(await t.token());
    expect(settled.error).toBeInstanceOf(FederatedKeysUnavailableError);
    expect((settled.error as FederatedKeysUnavailableError).issuer).toBe(t.idp.issuer);
    expect((settled.error as FederatedKeysUnavailableError).retryAfterSeconds).toBeGreaterThan(0);
    expect(t.failures()).toEqual([]);
  });
});
