/**
 * Real OAuth 2.0 client libraries against the example API over a real socket: openid-client
 * (discovery through RFC 8414 metadata, then the client credentials grant) and simple-oauth2, each
 * with client_secret_basic and client_secret_post. CONTRACT §2 (the token endpoint), §6 (discovery)
 * and the hardening issue: "Tested so that curl, Node's fetch and server-side OAuth clients
 * (openid-client, simple-oauth2) are unaffected" by the refusal of browser requests.
 */
import type { webcrypto } from 'node:crypto';
import * as oidc from 'openid-client';
import { ClientCredentials } from 'simple-oauth2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedAccount, ServiceAccounts } from '../../src/index.js';
import { startExampleApp, type RunningExampleApp } from '../helpers/example-app.js';
import { decodeToken } from '../helpers/tokens.js';

let app: RunningExampleApp;
let issuer: string;
let sa: ServiceAccounts;
let scoped: CreatedAccount;
let unrestricted: CreatedAccount;

beforeAll(async () => {
  app = await startExampleApp();
  ({ issuer, sa } = app);
  scoped = await sa.admin.createAccount({ name: 'billing-sync', scopes: ['jobs:read', 'jobs:write'] });
  unrestricted = await sa.admin.createAccount({ name: 'nightly-export' });
});

afterAll(async () => {
  await app.close();
});

async function whoami(accessToken: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${issuer}/api/whoami`, { headers: { authorization: `Bearer ${accessToken}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('openid-client (oauth4webapi underneath)', () => {
  const discover = (account: CreatedAccount, auth: oidc.ClientAuth, secret = account.secret.value) =>
    oidc.discovery(new URL(issuer), account.clientId, secret, auth, {
      algorithm: 'oauth2', // RFC 8414: /.well-known/oauth-authorization-server
      execute: [oidc.allowInsecureRequests], // plain http on 127.0.0.1, for the test only
    });

  for (const [method, auth] of [
    ['client_secret_basic', (secret: string) => oidc.ClientSecretBasic(secret)],
    ['client_secret_post', (secret: string) => oidc.ClientSecretPost(secret)],
  ] as const) {
    it(`discovers the token endpoint and gets a token with ${method}; the token works on a protected route`, async () => {
      const config = await discover(scoped, auth(scoped.secret.value));
      expect(config.serverMetadata().token_endpoint).toBe(`${issuer}/oauth/token`);
      const tokens = await oidc.clientCredentialsGrant(config, { scope: 'jobs:write' });
      expect(tokens.token_type).toBe('bearer'); // oauth4webapi lower-cases it
      expect(tokens.expires_in).toBe(3600);
      expect(tokens.scope).toBe('jobs:write');
      const { status, body } = await whoami(tokens.access_token);
      expect(status).toBe(200);
      expect(body).toMatchObject({ type: 'service_account', clientId: scoped.clientId, name: 'billing-sync', scopes: ['jobs:write'] });
    });
  }

  it('gets all allowed scopes when it asks for none, and no scope for an unrestricted account', async () => {
    const scopedTokens = await oidc.clientCredentialsGrant(await discover(scoped, oidc.ClientSecretBasic(scoped.secret.value)));
    expect(scopedTokens.scope).toBe('jobs:read jobs:write');
    const openTokens = await oidc.clientCredentialsGrant(await discover(unrestricted, oidc.ClientSecretPost(unrestricted.secret.value)));
    expect(openTokens.scope).toBeUndefined();
    expect(decodeToken(openTokens.access_token).payload).not.toHaveProperty('scope');
  });

  const wrongSecret = (account: CreatedAccount): string => account.secret.value.slice(0, -1) + (account.secret.value.endsWith('A') ? 'B' : 'A');

  it('sees a wrong secret sent with client_secret_post as RFC 6749 5.2 invalid_client (401)', async () => {
    const config = await discover(scoped, oidc.ClientSecretPost(wrongSecret(scoped)));
    const error = (await oidc.clientCredentialsGrant(config).catch((caught: unknown) => caught)) as oidc.ResponseBodyError;
    expect(error).toBeInstanceOf(oidc.ResponseBodyError);
    expect(error.error).toBe('invalid_client');
    expect(error.status).toBe(401);
  });

  it('sees a wrong secret sent with client_secret_basic as a 401 Basic challenge with an invalid_client body', async () => {
    const config = await discover(scoped, oidc.ClientSecretBasic(wrongSecret(scoped)));
    const error = (await oidc.clientCredentialsGrant(config).catch((caught: unknown) => caught)) as oidc.WWWAuthenticateChallengeError;
    // RFC 6749 5.2: a failed Basic authentication answers 401 with WWW-Authenticate: Basic.
    expect(error).toBeInstanceOf(oidc.WWWAuthenticateChallengeError);
    expect(error.status).toBe(401);
    expect(error.cause).toEqual([{ scheme: 'basic', parameters: { realm: 'service-accounts' } }]);
    expect(await error.response.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('sees a scope outside the account as invalid_scope (400)', async () => {
    const config = await discover(scoped, oidc.ClientSecretPost(scoped.secret.value));
    const error = (await oidc.clientCredentialsGrant(config, { scope: 'admin' }).catch((caught: unknown) => caught)) as oidc.ResponseBodyError;
    expect(error).toBeInstanceOf(oidc.ResponseBodyError);
    expect(error.error).toBe('invalid_scope');
    expect(error.status).toBe(400);
  });
});

describe('simple-oauth2', () => {
  const clientFor = (account: CreatedAccount, authorizationMethod: 'header' | 'body', bodyFormat: 'form' | 'json' = 'form') =>
    new ClientCredentials({
      client: { id: account.clientId, secret: account.secret.value },
      auth: { tokenHost: issuer, tokenPath: '/oauth/token' },
      options: { authorizationMethod, bodyFormat },
    });

  for (const [method, bodyFormat] of [
    ['header', 'form'],
    ['body', 'form'],
    ['body', 'json'],
  ] as const) {
    it(`gets a token with authorizationMethod ${method} and a ${bodyFormat} body; the token works on a protected route`, async () => {
      const accessToken = await clientFor(scoped, method, bodyFormat).getToken({ scope: ['jobs:read'] });
      expect(accessToken.token.token_type).toBe('Bearer');
      expect(accessToken.token.expires_in).toBe(3600);
      expect(accessToken.token.scope).toBe('jobs:read');
      expect(accessToken.expired()).toBe(false);
      const { status, body } = await whoami(accessToken.token.access_token as string);
      expect(status).toBe(200);
      expect(body).toMatchObject({ clientId: scoped.clientId, name: 'billing-sync', scopes: ['jobs:read'] });
    });
  }

  it('sees a revoked secret as invalid_client (401), while the account keeps working with its new secret', async () => {
    const account = await sa.admin.createAccount({ name: 'rotating' });
    const next = await sa.admin.addSecret(account.clientId);
    await sa.admin.revokeSecret(account.clientId, account.secret.id);
    const error = (await clientFor(account, 'header').getToken({}).catch((caught: unknown) => caught)) as {
      output: { statusCode: number; payload: unknown };
      data: { payload: { error: string } };
    };
    expect(error.output.statusCode).toBe(401);
    expect(error.data.payload.error).toBe('invalid_client');
    const rotated = await clientFor({ ...account, secret: next }, 'header').getToken({});
    expect((await whoami(rotated.token.access_token as string)).status).toBe(200);
  });
});

describe('openid-client with private_key_jwt (a registered key pair, no secret)', () => {
  // openid-client's documented key-pair client authentication, unmodified: a WebCrypto private key;
  // the public half registered as the account's key (docs/private-key-jwt.md).
  it('discovers private_key_jwt in the metadata and gets tokens with PrivateKeyJwt; each assertion is used once', async () => {
    const account = await sa.admin.createAccount({ name: 'keyed-exporter' });
    const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
    const spki = Buffer.from(await crypto.subtle.exportKey('spki', pair.publicKey)).toString('base64');
    const key = await sa.admin.addKey(account.clientId, `-----BEGIN PUBLIC KEY-----\n${spki.match(/.{1,64}/g)!.join('\n')}\n-----END PUBLIC KEY-----\n`);
    const config = await oidc.discovery(new URL(issuer), account.clientId, undefined, oidc.PrivateKeyJwt(pair.privateKey), {
      algorithm: 'oauth2',
      execute: [oidc.allowInsecureRequests], // plain http on 127.0.0.1, for the test only
    });
    expect(config.serverMetadata().token_endpoint_auth_methods_supported).toContain('private_key_jwt');
    // Twice: openid-client makes a new assertion (new jti) for every request.
    for (let i = 0; i < 2; i++) {
      const tokens = await oidc.clientCredentialsGrant(config);
      expect(tokens.expires_in).toBe(3600);
      const { status, body } = await whoami(tokens.access_token);
      expect(status).toBe(200);
      expect(body).toMatchObject({ type: 'service_account', clientId: account.clientId, name: 'keyed-exporter', secretId: key.id });
    }
  });

  // RFC 9864 §2: openid-client 6 (oauth4webapi) signs with an Ed25519 key as `alg: "Ed25519"`, the
  // fully specified name; the server accepts it beside `EdDSA` and lists both in its metadata.
  it('gets a token with PrivateKeyJwt and an Ed25519 key (alg "Ed25519"), listed in the metadata', async () => {
    const account = await sa.admin.createAccount({ name: 'edwards-exporter' });
    const pair = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
    const spki = Buffer.from(await crypto.subtle.exportKey('spki', pair.publicKey)).toString('base64');
    const key = await sa.admin.addKey(account.clientId, `-----BEGIN PUBLIC KEY-----\n${spki}\n-----END PUBLIC KEY-----\n`);
    let assertionAlg: unknown;
    const config = await oidc.discovery(
      new URL(issuer),
      account.clientId,
      undefined,
      oidc.PrivateKeyJwt(pair.privateKey, {
        [oidc.modifyAssertion]: (header) => {
          assertionAlg = header.alg;
        },
      }),
      { algorithm: 'oauth2', execute: [oidc.allowInsecureRequests] },
    );
    expect(config.serverMetadata().token_endpoint_auth_signing_alg_values_supported).toEqual(expect.arrayContaining(['EdDSA', 'Ed25519']));
    const tokens = await oidc.clientCredentialsGrant(config);
    expect(assertionAlg).toBe('Ed25519');
    const { status, body } = await whoami(tokens.access_token);
    expect(status).toBe(200);
    expect(body).toMatchObject({ clientId: account.clientId, name: 'edwards-exporter', secretId: key.id });
  });
});
