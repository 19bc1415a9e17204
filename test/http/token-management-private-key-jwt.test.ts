/**
 * The revocation and introspection endpoints take every client authentication method of the token
 * endpoint, through the same client authenticator: here private_key_jwt (RFC 7523 §2.2), an assertion
 * signed by a registered key. And a token issued against a key is inactive once the key is revoked.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/create-app.js';
import { assertionFields, newKeyPair, signAssertion } from '../helpers/client-assertions.js';
import { expectOAuthError } from '../helpers/expect-oauth-error.js';

async function setUp() {
  const t = createTestApp();
  const now = () => Math.floor(t.clock.now().getTime() / 1000);
  const client = await t.sa.admin.createAccount({ name: 'ci-deployer' });
  const clientPair = await newKeyPair('ES256');
  const clientKey = await t.sa.admin.addKey(client.clientId, clientPair.publicPem);
  const gateway = await t.sa.admin.createAccount({ name: 'api-gateway', scopes: ['token:introspect'] });
  const gatewayPair = await newKeyPair('ES256');
  await t.sa.admin.addKey(gateway.clientId, gatewayPair.publicPem);
  const asClient = async () => assertionFields(await signAssertion(clientPair, client.clientId, { now: now() }));
  const asGateway = async () => assertionFields(await signAssertion(gatewayPair, gateway.clientId, { now: now() }));
  const token = async () => {
    const res = await request(t.app).post('/oauth/token').type('form').send(await asClient()).expect(200);
    return (res.body as { access_token: string }).access_token;
  };
  const introspect = async (value: string) =>
    request(t.app).post('/oauth/introspect').type('form').send({ token: value, ...(await asGateway()) });
  return { ...t, client, clientKey, asClient, token, introspect };
}

describe('revocation and introspection with private_key_jwt', () => {
  // RFC 7009 §2.1 and RFC 7662 §2.1: the client authenticates as at the token endpoint (RFC 6749 §2.3),
  // which includes the assertion methods of RFC 7521 §4.2.
  it('a key-pair client revokes its token; a key-pair resource server introspects it', async () => {
    const t = await setUp();
    const token = await t.token();
    expect((await t.introspect(token)).body).toMatchObject({ active: true, username: 'ci-deployer' });
    await request(t.app).post('/oauth/revoke').type('form').send({ token, ...(await t.asClient()) }).expect(200);
    expect((await t.introspect(token)).body).toEqual({ active: false });
  });

  // RFC 7523 §3: a client assertion is single-use; one used at the token endpoint is refused here too.
  it('refuses an assertion already used, with 401 invalid_client', async () => {
    const t = await setUp();
    const used = await t.asClient();
    await request(t.app).post('/oauth/token').type('form').send(used).expect(200);
    const token = await t.token();
    expectOAuthError(await request(t.app).post('/oauth/revoke').type('form').send({ token, ...used }), 401, 'invalid_client');
  });

  // RFC 7662 §2.2: a token whose credential was revoked is not active (the key it was issued against).
  it('reports a token inactive once the key it was issued against is revoked', async () => {
    const t = await setUp();
    const token = await t.token();
    await t.sa.admin.revokeKey(t.client.clientId, t.clientKey.id);
    expect((await t.introspect(token)).body).toEqual({ active: false });
  });
});
