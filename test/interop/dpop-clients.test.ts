/**
 * DPoP (RFC 9449) with real client libraries against the example API over a real socket on
 * 127.0.0.1: openid-client 6 (`getDPoPHandle`, `clientCredentialsGrant`, `fetchProtectedResource`)
 * gets a DPoP-bound token and calls `/api/whoami`, with and without server nonces; oauth4webapi's
 * `validateJwtAccessToken` with `requireDPoP` accepts our tokens as a resource server would.
 */
import { generateKeyPairSync } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { CreatedAccount, ServiceAccountsOptions } from '../../src/index.js';
import { startExampleApp, type RunningExampleApp } from '../helpers/example-app.js';
import { decodeToken } from '../helpers/tokens.js';

let app: RunningExampleApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function start(settings: Partial<ServiceAccountsOptions> = {}): Promise<{ running: RunningExampleApp; account: CreatedAccount; config: oidc.Configuration }> {
  const running = await startExampleApp({ settings });
  app = running;
  const account = await running.sa.admin.createAccount({ name: 'billing-sync', scopes: ['jobs:read'] });
  const config = await oidc.discovery(new URL(running.issuer), account.clientId, account.secret.value, oidc.ClientSecretBasic(account.secret.value), {
    algorithm: 'oauth2',
    execute: [oidc.allowInsecureRequests], // plain http on 127.0.0.1, for the test only
  });
  return { running, account, config };
}

describe('openid-client 6 with DPoP', () => {
  // "A token request with a valid `DPoP` header answers `token_type: "DPoP"` and the token carries `cnf.jkt`.
  // `requireBearer()` accepts `Authorization: DPoP <token>` with a `DPoP` proof (the example's `/api/whoami` included)."
  it.each([
    ['without nonces', {}],
    ['with server nonces', { dpop: { nonceSecret: 'nonce-secret-0123456789abcdef-0123456789' } }],
  ] as const)('gets a DPoP-bound token and calls /api/whoami with it, %s', async (_name, settings) => {
    const { running, account, config } = await start(settings);
    const metadata = config.serverMetadata() as { dpop_signing_alg_values_supported?: string[] };
    expect(metadata.dpop_signing_alg_values_supported).toContain('ES256');
    const dpop = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'jobs:read' }, { DPoP: dpop });
    expect(tokens.token_type).toBe('dpop'); // oauth4webapi lower-cases it
    expect(decodeToken(tokens.access_token).payload).toHaveProperty('cnf.jkt');
    for (let i = 0; i < 2; i++) {
      const res = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(`${running.issuer}/api/whoami`), 'GET', undefined, undefined, { DPoP: dpop });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ clientId: account.clientId, name: 'billing-sync' });
    }
    // A stolen DPoP-bound token is useless as a Bearer token.
    const stolen = await fetch(`${running.issuer}/api/whoami`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(stolen.status).toBe(401);
  });
});

describe('oauth4webapi validateJwtAccessToken with requireDPoP', () => {
  it('accepts our DPoP-bound token and its proof as a resource server', async () => {
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const { running, config } = await start({ signingKeys: [{ alg: 'ES256', key: pem }] });
    const keyPair = await oidc.randomDPoPKeyPair('ES256');
    const tokens = await oidc.clientCredentialsGrant(config, {}, { DPoP: oidc.getDPoPHandle(config, keyPair) });
    // The request a resource server receives: made by oauth4webapi's own client side.
    const url = `${running.issuer}/api/whoami`;
    let captured: Request | undefined;
    await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(url), new Headers(), null, {
      DPoP: oauth.DPoP({ client_id: 'any' } as oauth.Client, keyPair),
      [oauth.allowInsecureRequests]: true,
      [oauth.customFetch]: async (input, init) => {
        captured = new Request(input, init);
        return new Response('{}', { status: 200 });
      },
    });
    const as = config.serverMetadata() as oauth.AuthorizationServer;
    const claims = await oauth.validateJwtAccessToken(as, captured!, running.issuer, { requireDPoP: true, [oauth.allowInsecureRequests]: true });
    const bound = decodeToken(tokens.access_token).payload.cnf as { jkt: string };
    expect(claims.cnf?.jkt).toBe(bound.jkt);
  });
});
