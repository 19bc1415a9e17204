/**
 * Where an outside issuer's keys come from, and how its tokens are verified
 * (src/federation/issuer-key-sets.ts), against a real issuer on loopback. The rule: "The token's
 * signature is checked against the issuer's keys, found through OIDC discovery
 * (`/.well-known/openid-configuration` → `jwks_uri`) or a JWK Set URL or inline JWK Set configured
 * for that issuer".
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveFederation, type FederationOptions } from '../../src/federation/federation-options.js';
import { IssuerKeySets } from '../../src/federation/issuer-key-sets.js';
import { FederatedKeysUnavailableError } from '../../src/errors.js';
import { verifyIssuerToken } from '../../src/client-auth/federated-method.js';
import { startLocalIssuer, type LocalIssuer } from '../helpers/local-oidc-issuer.js';

const AUDIENCE = 'https://api.example.com';
const now = new Date('2026-03-01T12:00:00Z');

let idp: LocalIssuer;
beforeEach(async () => {
  idp = await startLocalIssuer();
});
afterEach(async () => {
  await idp.close();
});

function keySets(options: FederationOptions = {}): IssuerKeySets {
  return new IssuerKeySets({ settings: resolveFederation({ allowHttpLoopback: true, fetchTimeout: 2000, ...options }), now: () => now });
}

describe('IssuerKeySets: key sources', () => {
  it('finds the keys through discovery and verifies a Kubernetes-shaped token', async () => {
    const token = await idp.kubernetesToken({ audience: AUDIENCE, now });
    const verified = await verifyIssuerToken(keySets(), token, { issuer: idp.issuer }, { audience: AUDIENCE });
    expect(verified?.payload).toMatchObject({
      iss: idp.issuer,
      sub: 'system:serviceaccount:payments:exporter',
      aud: [AUDIENCE],
      'kubernetes.io': { namespace: 'payments', serviceaccount: { name: 'exporter' } },
    });
    expect(idp.requests.map((r) => r.path)).toEqual(['/.well-known/openid-configuration', '/jwks']);
  });

  it('verifies a GitHub-Actions-shaped token (ES256 issuer)', async () => {
    const github = await startLocalIssuer({ alg: 'ES256' });
    try {
      const token = await github.githubActionsToken({ repository: 'acme/billing', audience: AUDIENCE, now });
      const verified = await verifyIssuerToken(keySets(), token, { issuer: github.issuer }, { audience: AUDIENCE, subject: 'repo:acme/billing:ref:refs/heads/main' });
      expect(verified?.protectedHeader.alg).toBe('ES256');
      expect(verified?.payload).toMatchObject({ repository: 'acme/billing', ref: 'refs/heads/main', runner_environment: 'github-hosted' });
    } finally {
      await github.close();
    }
  });

  it('finds the discovery document under an issuer with a path', async () => {
    const tenant = await startLocalIssuer({ pathPrefix: '/tenant-a' });
    try {
      const token = await tenant.kubernetesToken({ audience: AUDIENCE, now });
      expect(await verifyIssuerToken(keySets(), token, { issuer: tenant.issuer }, { audience: AUDIENCE })).toBeDefined();
      expect(tenant.requests.map((r) => r.path)).toEqual(['/tenant-a/.well-known/openid-configuration', '/tenant-a/jwks']);
    } finally {
      await tenant.close();
    }
  });

  it("uses the credential's JWK Set URL without discovery", async () => {
    const token = await idp.kubernetesToken({ audience: AUDIENCE, now });
    expect(await verifyIssuerToken(keySets(), token, { issuer: idp.issuer, jwksUri: idp.movedJwksUri }, { audience: AUDIENCE })).toBeDefined();
    expect(idp.requests.map((r) => r.path)).toEqual(['/jwks-moved']);
  });

  it("prefers the JWK Set URL configured for the issuer over the credential's", async () => {
    const token = await idp.kubernetesToken({ audience: AUDIENCE, now });
    const sets = keySets({ issuers: { [idp.issuer]: { jwksUri: idp.jwksUri } } });
    expect(await verifyIssuerToken(sets, token, { issuer: idp.issuer, jwksUri: idp.movedJwksUri }, { audience: AUDIENCE })).toBeDefined();
    expect(idp.requests.map((r) => r.path)).toEqual(['/jwks']);
  });

  // "Kubernetes clusters often have no public discovery": an inline JWK Set is never fetched.
  it('verifies with an inline JWK Set and makes no request at all', async () => {
    const sets = keySets({ issuers: { [idp.issuer]: { jwks: idp.jwks() } } });
    const token = await idp.kubernetesToken({ audience: AUDIENCE, now });
    expect(await verifyIssuerToken(sets, token, { issuer: idp.issuer }, { audience: AUDIENCE })).toBeDefined();
    // An unknown kid cannot be fetched: refused, still no request.
    expect(await verifyIssuerToken(sets, await idp.sign({ sub: 'x', aud: AUDIENCE }, { kid: 'unknown' }), { issuer: idp.issuer }, { audience: AUDIENCE })).toBeUndefined();
    await idp.setMode('down');
    expect(await verifyIssuerToken(sets, token, { issuer: idp.issuer }, { audience: AUDIENCE })).toBeDefined();
    expect(idp.requests).toHaveLength(0);
  });

  // OpenID Connect Discovery 1.0 §4.3: "The issuer value returned MUST be identical to the Issuer URL
  // that was used as the prefix to /.well-known/openid-configuration".
  it('refuses a discovery document naming another issuer (no JWK Set fetched)', async () => {
    idp.discoveryOverrides = { issuer: `${idp.issuer}/` };
    const token = await idp.kubernetesToken({ audience: AUDIENCE, now });
    const error = await verifyIssuerToken(keySets(), token, { issuer: idp.issuer }, { audience: AUDIENCE }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FederatedKeysUnavailableError);
    expect((error as Error).message).toBe(`The keys of ${idp.issuer} cannot be fetched: ${idp.discoveryUrl} names another issuer`);
    expect(idp.fetches('jwks')).toBe(0);
  });

  it('refuses a discovered jwks_uri that breaks the URL policy', async () => {
    idp.discoveryOverrides = { jwks_uri: 'http://keys.example.com/jwks' };
    const token = await idp.kubernetesToken({ audience: AUDIENCE, now });
    await expect(verifyIssuerToken(keySets(), token, { issuer: idp.issuer }, { audience: AUDIENCE })).rejects.toThrow(/names a jwks_uri that must be an https URL/);
  });

  // OpenID Connect Discovery 1.0 §3 forbids a query in the issuer identifier only: a jwks_uri may have
  // one, as Azure AD B2C's does (`.../discovery/v2.0/keys?p=B2C_1_signin`), and so may a same-origin
  // redirect's target.
  it('fetches a discovered jwks_uri with a query, and follows a same-origin redirect to a URL with a query', async () => {
    idp.discoveryOverrides = { jwks_uri: `${idp.jwksUri}?p=B2C_1_signin` };
    const token = await idp.kubernetesToken({ audience: AUDIENCE, now });
    expect(await verifyIssuerToken(keySets(), token, { issuer: idp.issuer }, { audience: AUDIENCE })).toBeDefined();
    expect(idp.requests.map((r) => r.url)).toEqual(['/.well-known/openid-configuration', '/jwks?p=B2C_1_signin']);

    idp.discoveryOverrides = {};
    await idp.setMode({ redirect: `${idp.movedJwksUri}?p=B2C_1_signin` }, 'jwks');
    expect(await verifyIssuerToken(keySets(), token, { issuer: idp.issuer }, { audience: AUDIENCE })).toBeDefined();
    expect(idp.requests.slice(2).map((r) => r.url)).toEqual(['/.well-known/openid-configuration', '/jwks', '/jwks-moved?p=B2C_1_signin']);
  });

  // The same JWK Set URL, copied into the configuration or a credential, works as it does discovered.
  it('uses a configured or credential JWK Set URL with a query; refuses one with a fragment', async () => {
    const token = await idp.kubernetesToken({ audience: AUDIENCE, now });
    const sets = keySets({ issuers: { [idp.issuer]: { jwksUri: `${idp.jwksUri}?p=B2C_1_signin` } } });
    expect(await verifyIssuerToken(sets, token, { issuer: idp.issuer }, { audience: AUDIENCE })).toBeDefined();
    expect(await verifyIssuerToken(keySets(), token, { issuer: idp.issuer, jwksUri: `${idp.movedJwksUri}?p=B2C_1_signin` }, { audience: AUDIENCE })).toBeDefined();
    expect(idp.requests.map((r) => r.url)).toEqual(['/jwks?p=B2C_1_signin', '/jwks-moved?p=B2C_1_signin']);
    expect(() => keySets({ issuers: { [idp.issuer]: { jwksUri: `${idp.jwksUri}#keys` } } })).toThrow(/jwksUri" must have no fragment/);
    expect(() => keySets({ issuers: { [`${idp.issuer}?p=B2C_1_signin`]: { jwksUri: idp.jwksUri } } })).toThrow(/the issuer identifier must have no query or fragment/);
  });

  // "over https (plain http only for loopback issuers when explicitly allowed ...)"
  it('never fetches from a plain http issuer unless allowHttpLoopback', async () => {
    const sets = new IssuerKeySets({ settings: resolveFederation({}), now: () => now });
    const token = await idp.kubernetesToken({ audience: AUDIENCE, now });
    expect(await verifyIssuerToken(sets, token, { issuer: idp.issuer }, { audience: AUDIENCE })).toBeUndefined();
    expect(await verifyIssuerToken(sets, token, { issuer: idp.issuer, jwksUri: idp.jwksUri }, { audience: AUDIENCE })).toBeUndefined();
    expect(idp.requests).toHaveLength(0);
  });

  it("checks the claims it is asked to, and the token's iss against the issuer", async () => {
    const sets = keySets();
    const token = await idp.kubernetesToken({ audience: AUDIENCE, now });
    expect(await verifyIssuerToken(sets, token, { issuer: idp.issuer }, { audience: 'https://other.example.com' })).toBeUndefined();
    expect(await verifyIssuerToken(sets, token, { issuer: idp.issuer }, { audience: AUDIENCE, currentDate: new Date(now.getTime() + 2 * 3600_000) })).toBeUndefined();
    const otherIss = await idp.sign({ iss: 'https://elsewhere.example.com', sub: 'x', aud: AUDIENCE });
    expect(await verifyIssuerToken(sets, otherIss, { issuer: idp.issuer }, { audience: AUDIENCE })).toBeUndefined();
    const forged = `${token.slice(0, token.lastIndexOf('.'))}.${'A'.repeat(342)}`;
    expect(await verifyIssuerToken(sets, forged, { issuer: idp.issuer }, { audience: AUDIENCE })).toBeUndefined();
  });

  // Asymmetric algorithms only: an HMAC token (signed with a public key as the secret, say) or an
  // unsigned one is refused before any key is fetched, whatever the caller allows.
  it('refuses symmetric and unsigned tokens without fetching, even when the caller allows them', async () => {
    const sets = keySets();
    const hs256 = await new SignJWT({ iss: idp.issuer, sub: 'x', aud: AUDIENCE }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('a'.repeat(32)));
    expect(await verifyIssuerToken(sets, hs256, { issuer: idp.issuer }, { audience: AUDIENCE, algorithms: ['HS256', 'RS256'] })).toBeUndefined();
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(`{"iss":"${idp.issuer}"}`).toString('base64url')}.`;
    expect(await verifyIssuerToken(sets, none, { issuer: idp.issuer }, { audience: AUDIENCE })).toBeUndefined();
    expect(await verifyIssuerToken(sets, 'not a token', { issuer: idp.issuer }, { audience: AUDIENCE })).toBeUndefined();
    expect(idp.requests).toHaveLength(0);
    // The caller may narrow the asymmetric list: an RS256 token then fails without a fetch too.
    const rs256 = await idp.kubernetesToken({ audience: AUDIENCE, now });
    expect(await verifyIssuerToken(sets, rs256, { issuer: idp.issuer }, { audience: AUDIENCE, algorithms: ['ES256'] })).toBeUndefined();
    expect(idp.requests).toHaveLength(0);
  });

  // A kid served twice gives two candidate keys (within the 3 tried per token); each is tried. The
  // issuer lists an unrelated key with the same kid first.
  it('verifies when the JWK Set serves the kid twice and one of the keys verifies', async () => {
    await idp.setMode('duplicateKid');
    const served = await fetch(idp.jwksUri).then((r) => r.json() as Promise<{ keys: { kid: string }[] }>);
    expect(served.keys.map((k) => k.kid)).toEqual([idp.currentKid, idp.currentKid]);
    const sets = keySets();
    const token = await idp.kubernetesToken({ audience: AUDIENCE, now });
    expect(await verifyIssuerToken(sets, token, { issuer: idp.issuer }, { audience: AUDIENCE })).toBeDefined();
    // Neither key verifies a token whose claims fail, nor a forged signature.
    expect(await verifyIssuerToken(sets, token, { issuer: idp.issuer }, { audience: 'https://other.example.com' })).toBeUndefined();
    const forged = `${token.slice(0, token.lastIndexOf('.'))}.${'A'.repeat(342)}`;
    expect(await verifyIssuerToken(sets, forged, { issuer: idp.issuer }, { audience: AUDIENCE })).toBeUndefined();
  });
});

// RFC 9864 §2: `Ed25519` is the fully specified name of EdDSA with an Ed25519 key; an issuer may sign
// with either name, and a key published with one (`"alg": "EdDSA"`) verifies tokens naming the other.
describe('IssuerKeySets: Ed25519 under both names', () => {
  it.each([
    ['EdDSA', 'EdDSA'],
    ['Ed25519', 'EdDSA'],
    ['EdDSA', 'Ed25519'],
    ['Ed25519', undefined],
  ])('verifies a token signed as %s with a key published as %s', async (alg, keyAlg) => {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const jwk = { ...(await exportJWK(publicKey)), kid: 'ed', ...(keyAlg !== undefined && { alg: keyAlg }) };
    const sets = keySets({ issuers: { [idp.issuer]: { jwks: { keys: [jwk] } } } });
    const seconds = Math.floor(now.getTime() / 1000);
    const token = await new SignJWT({ iss: idp.issuer, sub: 'x', aud: AUDIENCE, exp: seconds + 60 }).setProtectedHeader({ alg }).sign(privateKey);
    expect((await verifyIssuerToken(sets, token, { issuer: idp.issuer }, { audience: AUDIENCE }))?.protectedHeader.alg).toBe(alg);
    // A P-256 key is no Ed25519 key, whatever the token's alg says.
    const ec = { ...(await exportJWK((await generateKeyPair('ES256')).publicKey)), kid: 'ec' };
    const ecSets = keySets({ issuers: { [idp.issuer]: { jwks: { keys: [ec] } } } });
    expect(await verifyIssuerToken(ecSets, token, { issuer: idp.issuer }, { audience: AUDIENCE })).toBeUndefined();
  });
});

// "no key is ever fetched for any other [issuer than federation.allowedIssuers], whatever the store
// holds": a credential naming another issuer is refused as an invalid token, without a request.
describe('IssuerKeySets: allowed issuers', () => {
  it('never fetches keys for an issuer outside allowedIssuers, however trustworthy its source looks', async () => {
    const other = await startLocalIssuer();
    try {
      const sets = keySets({ allowedIssuers: [other.issuer] });
      const token = await idp.kubernetesToken({ audience: AUDIENCE, now });
      expect(await verifyIssuerToken(sets, token, { issuer: idp.issuer }, { audience: AUDIENCE })).toBeUndefined();
      expect(await verifyIssuerToken(sets, token, { issuer: idp.issuer, jwksUri: idp.jwksUri }, { audience: AUDIENCE })).toBeUndefined();
      expect(idp.requests).toHaveLength(0);
      // The allowed issuer's tokens still verify.
      const allowed = await other.kubernetesToken({ audience: AUDIENCE, now });
      expect(await verifyIssuerToken(sets, allowed, { issuer: other.issuer }, { audience: AUDIENCE })).toBeDefined();
      expect(other.requests.map((r) => r.path)).toEqual(['/.well-known/openid-configuration', '/jwks']);
    } finally {
      await other.close();
    }
  });

  it('allows the issuers configured with their keys as well', async () => {
    const sets = keySets({ allowedIssuers: ['https://token.actions.githubusercontent.com'], issuers: { [idp.issuer]: { jwksUri: idp.jwksUri } } });
    const token = await idp.kubernetesToken({ audience: AUDIENCE, now });
    expect(await verifyIssuerToken(sets, token, { issuer: idp.issuer }, { audience: AUDIENCE })).toBeDefined();
    expect(idp.requests.map((r) => r.path)).toEqual(['/jwks']);
  });
});

// "with a timeout": federation.fetchTimeout bounds the whole load of an issuer's keys, discovery
// and JWK Set together, not each document, so a slow issuer holds a request for fetchTimeout at most.
describe('IssuerKeySets: one deadline per load', () => {
  it('gives discovery and the JWK Set one fetchTimeout between them', async () => {
    // Each document alone answers well within the timeout; both together do not.
    await idp.setMode({ delay: 400 });
    const sets = keySets({ fetchTimeout: 600 });
    const token = await idp.kubernetesToken({ audience: AUDIENCE, now });
    const error = await verifyIssuerToken(sets, token, { issuer: idp.issuer }, { audience: AUDIENCE }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FederatedKeysUnavailableError);
    expect((error as Error).message).toMatch(/did not answer within 600 ms$/);
    expect(idp.fetches('discovery')).toBe(1);
  });
});
