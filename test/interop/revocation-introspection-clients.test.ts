/**
 * openid-client 6 (`tokenRevocation`, `tokenIntrospection`), unmodified, against the example API over a
 * real socket, discovering both endpoints through RFC 8414 metadata (`revocation_endpoint`,
 * `introspection_endpoint`), with client_secret_basic and client_secret_post.
 */
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedAccount, ServiceAccounts } from '../../src/index.js';
import { startExampleApp, type RunningExampleApp } from '../helpers/example-app.js';
import { decodeToken } from '../helpers/tokens.js';

let app: RunningExampleApp;
let issuer: string;
let sa: ServiceAccounts;
let client: CreatedAccount;
let gateway: CreatedAccount;

beforeAll(async () => {
  app = await startExampleApp();
  ({ issuer, sa } = app);
  client = await sa.admin.createAccount({ name: 'billing-sync', scopes: ['jobs:read', 'jobs:write'] });
  gateway = await sa.admin.createAccount({ name: 'api-gateway', scopes: ['token:introspect'] });
});

afterAll(async () => {
  await app.close();
});

const discover = (account: CreatedAccount, auth: oidc.ClientAuth) =>
  oidc.discovery(new URL(issuer), account.clientId, account.secret.value, auth, {
    algorithm: 'oauth2', // RFC 8414: /.well-known/oauth-authorization-server
    execute: [oidc.allowInsecureRequests], // plain http on 127.0.0.1, for the test only
  });

async function whoami(accessToken: string): Promise<number> {
  const res = await fetch(`${issuer}/api/whoami`, { headers: { authorization: `Bearer ${accessToken}` } });
  await res.arrayBuffer();
  return res.status;
}

describe('openid-client: token revocation and introspection', () => {
  for (const [method, auth] of [
    ['client_secret_basic', (account: CreatedAccount) => oidc.ClientSecretBasic(account.secret.value)],
    ['client_secret_post', (account: CreatedAccount) => oidc.ClientSecretPost(account.secret.value)],
  ] as const) {
    // RFC 7662 §2.2 answers, then RFC 7009 §2.2 ("responds with HTTP status code 200"), then §2.2 again:
    // "If the introspection call is properly authorized but the token is not active ... "active" ... "false"".
    it(`introspects, revokes and introspects again with ${method}`, async () => {
      const clientConfig = await discover(client, auth(client));
      const gatewayConfig = await discover(gateway, auth(gateway));
      expect(clientConfig.serverMetadata().revocation_endpoint).toBe(`${issuer}/oauth/revoke`);
      expect(gatewayConfig.serverMetadata().introspection_endpoint).toBe(`${issuer}/oauth/introspect`);
      const { access_token: token } = await oidc.clientCredentialsGrant(clientConfig, { scope: 'jobs:write' });

      const active = await oidc.tokenIntrospection(gatewayConfig, token);
      expect(active).toMatchObject({
        active: true,
        client_id: client.clientId,
        username: 'billing-sync',
        scope: 'jobs:write',
        token_type: 'Bearer',
        jti: decodeToken(token).payload.jti,
      });
      expect(await whoami(token)).toBe(200);

      await oidc.tokenRevocation(clientConfig, token, { token_type_hint: 'access_token' });
      expect(await whoami(token)).toBe(401);
      expect(await oidc.tokenIntrospection(gatewayConfig, token)).toEqual({ active: false });
    });
  }

  // RFC 7662 §2.3: an authenticated caller without the right to introspect is refused; openid-client reports the error body.
  it('reports the refusal of an account that may not introspect', async () => {
    const config = await discover(client, oidc.ClientSecretBasic(client.secret.value));
    const error = (await oidc.tokenIntrospection(config, 'anything').catch((caught: unknown) => caught)) as oidc.ResponseBodyError;
    expect(error).toBeInstanceOf(oidc.ResponseBodyError);
    expect(error.status).toBe(403);
    expect(error.error).toBe('unauthorized_client');
  });
});
