/**
 * @module cases
 * The benchmark cases: which server, how it is checked, and the one request each connection repeats.
 * Every bearer case sends the same `Authorization` header bytes (a token of the library's shape) and
 * every token case the same Basic header shape and form body, so the servers differ only in their work.
 */
import { checkAssertionClient, checkIntrospection, checkProtected, checkTokenEndpoint, basicAuth, FORM, INTROSPECT_PATH, TOKEN_BODY } from './checks.js';
import { ISSUER, PROTECTED_PATH, TOKEN_PATH, type ServerConfig, type ServerReady } from './fixtures.js';
import { keyClientAssertions, kubernetesTokens } from './assertion-body.js';
import type { AssertionClient, LoadRequest } from './load.js';
import { dpopProof, newDpopKey } from './dpop-proof.js';

export type Group = 'bearer' | 'token';

export interface Case {
  readonly id: string;
  readonly label: string;
  readonly group: Group;
  /** The group's limit, that the other rows' ratios divide by. */
  readonly bare?: boolean;
  /** Needs PostgreSQL. */
  readonly postgres?: boolean;
  /** `bench/servers/<server>.ts` */
  readonly server: string;
  readonly config: ServerConfig;
  /** Checks the running server and returns the request to load it with. */
  prepare(ready: ServerReady): Promise<LoadRequest>;
}

const bearer = (token: string): LoadRequest => ({ path: PROTECTED_PATH, headers: { authorization: `Bearer ${token}` } });
const tokenRequest = (client: { clientId: string; secret: string }): LoadRequest => ({
  path: TOKEN_PATH,
  method: 'POST',
  headers: { authorization: basicAuth(client.clientId, client.secret), 'content-type': FORM },
  body: TOKEN_BODY,
});

/** A token request with a new client assertion each time (no `client_id`), checked first. */
async function assertionRequest(ready: ServerReady, assertion: AssertionClient): Promise<LoadRequest> {
  const load: LoadRequest = { path: TOKEN_PATH, method: 'POST', headers: { 'content-type': FORM }, assertion };
  await checkAssertionClient(ready.port, load);
  return load;
}

/** The library's introspection endpoint, asked by the client about its own token (RFC 7662). */
async function libraryIntrospection(ready: ServerReady): Promise<LoadRequest> {
  const client = needClient(ready);
  const token = await checkTokenEndpoint(ready.port, client);
  await checkIntrospection(ready.port, client, token);
  return {
    path: INTROSPECT_PATH,
    method: 'POST',
    headers: { authorization: basicAuth(client.clientId, client.secret), 'content-type': FORM },
    body: new URLSearchParams({ token }).toString(),
  };
}

function needClient(ready: ServerReady): { clientId: string; secret: string } {
  if (!ready.client) throw new Error('server did not report its client');
  return ready.client;
}

/** The library server: get a token from its own endpoint, check the bearer route with it. */
async function libraryBearer(ready: ServerReady): Promise<LoadRequest> {
  const token = await checkTokenEndpoint(ready.port, needClient(ready));
  await checkProtected(ready.port, token);
  return bearer(token);
}

/**
 * The library server with DPoP: a DPoP-bound token from its own endpoint (with a proof), the bearer
 * route checked with `Authorization: DPoP` and a proof; each measured request carries a fresh proof.
 */
async function libraryDpop(ready: ServerReady): Promise<LoadRequest> {
  const client = needClient(ready);
  const key = newDpopKey();
  const origin = `http://127.0.0.1:${ready.port}`;
  const issued = await fetch(origin + TOKEN_PATH, {
    method: 'POST',
    headers: { authorization: basicAuth(client.clientId, client.secret), 'content-type': FORM, dpop: dpopProof({ ...key, htm: 'POST', htu: origin + TOKEN_PATH }) },
    body: TOKEN_BODY,
  });
  const body = (await issued.json()) as { access_token?: string; token_type?: string };
  if (issued.status !== 200 || body.token_type !== 'DPoP' || typeof body.access_token !== 'string') {
    throw new Error(`POST /oauth/token with a DPoP proof: ${issued.status} ${JSON.stringify(body)}`);
  }
  const dpop = { ...key, htm: 'GET' as const, htu: origin + PROTECTED_PATH, accessToken: body.access_token };
  const headers = { authorization: `DPoP ${body.access_token}` };
  const ok = await fetch(origin + PROTECTED_PATH, { headers: { ...headers, dpop: dpopProof(dpop) } });
  if (ok.status !== 200) throw new Error(`GET with a DPoP-bound token and a proof: expected 200, got ${ok.status}`);
  const asBearer = await fetch(origin + PROTECTED_PATH, { headers: { authorization: `Bearer ${body.access_token}` } });
  if (asBearer.status !== 401) throw new Error(`GET with a DPoP-bound token as Bearer: expected 401, got ${asBearer.status}`);
  return { path: PROTECTED_PATH, headers, dpop };
}

/**
 * @param peerToken a token of the library's shape and key, for servers that do not issue their own
 * @param postgresStoreUrl store URL of a fresh schema for the library-on-PostgreSQL case
 */
export function buildCases(peerToken: string, postgresStoreUrl: string): Case[] {
  const sampleClient = { clientId: 'esa_000000000000000000000000', secret: `esas_${'0'.repeat(16)}_${'0'.repeat(50)}` };
  return [
    {
      id: 'bare',
      label: 'bare Express (GET, no auth)',
      group: 'bearer',
      bare: true,
      server: 'bare',
      config: {},
      prepare: async (ready) => {
        await checkProtected(ready.port, peerToken, { refuses: false });
        return bearer(peerToken);
      },
    },
    {
      id: 'library-memory',
      label: 'requireBearer, memory store',
      group: 'bearer',
      server: 'library',
      config: { store: 'memory' },
      prepare: libraryBearer,
    },
    {
      id: 'library-memory-dpop',
      label: 'requireBearer, DPoP (ES256, fresh proof per request), memory store',
      group: 'bearer',
      server: 'library',
      config: { store: 'memory' },
      prepare: libraryDpop,
    },
    {
      id: 'library-memory-otel',
      label: 'requireBearer, memory, OpenTelemetry SDK (info)',
      group: 'bearer',
      server: 'library',
      config: { store: 'memory', otelSdk: true },
      prepare: libraryBearer,
    },
    {
      id: 'library-postgres',
      label: 'requireBearer, PostgreSQL store (watch)',
      group: 'bearer',
      postgres: true,
      server: 'library',
      config: { store: postgresStoreUrl },
      prepare: libraryBearer,
    },
    {
      id: 'auth0',
      label: 'express-oauth2-jwt-bearer (HS256)',
      group: 'bearer',
      server: 'auth0',
      config: {},
      prepare: async (ready) => {
        await checkProtected(ready.port, peerToken);
        return bearer(peerToken);
      },
    },
    {
      id: 'node-oauth2',
      label: 'node-oauth2-server authenticate (memory)',
      group: 'bearer',
      server: 'node-oauth2',
      config: { token: peerToken },
      prepare: async (ready) => {
        await checkProtected(ready.port, ready.token ?? peerToken);
        return bearer(ready.token ?? peerToken);
      },
    },
    {
      id: 'jwt-minimal',
      label: 'hand-written jsonwebtoken check (reference)',
      group: 'bearer',
      server: 'jwt-minimal',
      config: {},
      prepare: async (ready) => {
        await checkProtected(ready.port, peerToken);
        return bearer(peerToken);
      },
    },
    {
      id: 'bare-token',
      label: 'bare Express (POST, fixed token JSON)',
      group: 'token',
      bare: true,
      server: 'bare',
      config: { token: peerToken },
      prepare: async (ready) => {
        await checkTokenEndpoint(ready.port, undefined);
        return tokenRequest(sampleClient);
      },
    },
    {
      id: 'bare-token-parsed',
      label: 'bare Express + urlencoded() (info)',
      group: 'token',
      server: 'bare',
      config: { token: peerToken, parseBody: true },
      prepare: async (ready) => {
        await checkTokenEndpoint(ready.port, undefined);
        return tokenRequest(sampleClient);
      },
    },
    {
      id: 'library-token',
      label: 'token endpoint, repeat client (memory)',
      group: 'token',
      server: 'library',
      config: { store: 'memory' },
      prepare: async (ready) => {
        await checkTokenEndpoint(ready.port, needClient(ready));
        return tokenRequest(needClient(ready));
      },
    },
    {
      id: 'library-token-claims',
      label: 'token endpoint, repeat client with an extraTokenClaims hook (memory)',
      group: 'token',
      server: 'library',
      config: { store: 'memory', extraClaims: true },
      prepare: async (ready) => {
        await checkTokenEndpoint(ready.port, needClient(ready));
        return tokenRequest(needClient(ready));
      },
    },
    {
      id: 'library-token-pkjwt',
      label: 'token endpoint, private_key_jwt repeat client (memory, ES256)',
      group: 'token',
      server: 'library',
      config: { store: 'memory', keyClient: true },
      prepare: async (ready) => {
        if (!ready.keyClient) throw new Error('server did not report its key-pair client');
        return assertionRequest(ready, keyClientAssertions(ready.keyClient, ISSUER));
      },
    },
    {
      id: 'library-token-federated',
      label: 'token endpoint, federated repeat client (memory, RS256, cached issuer keys)',
      group: 'token',
      server: 'library',
      config: { store: 'memory', federatedClient: true },
      // The check's first token fetches the issuer's keys: every request after it uses them from the cache.
      prepare: async (ready) => {
        if (!ready.federatedClient) throw new Error('server did not report its federated client');
        return assertionRequest(ready, kubernetesTokens(ready.federatedClient, ISSUER));
      },
    },
    {
      id: 'library-token-otel',
      label: 'token endpoint, repeat client, OpenTelemetry SDK (info)',
      group: 'token',
      server: 'library',
      config: { store: 'memory', otelSdk: true },
      prepare: async (ready) => {
        await checkTokenEndpoint(ready.port, needClient(ready));
        return tokenRequest(needClient(ready));
      },
    },
    {
      id: 'node-oauth2-token',
      label: 'node-oauth2-server token (plaintext)',
      group: 'token',
      server: 'node-oauth2',
      config: {},
      prepare: async (ready) => {
        await checkTokenEndpoint(ready.port, needClient(ready));
        return tokenRequest(needClient(ready));
      },
    },
    {
      id: 'library-introspect',
      label: 'introspection endpoint, repeat client (memory)',
      group: 'token',
      server: 'library',
      config: { store: 'memory', introspect: true },
      prepare: libraryIntrospection,
    },
    {
      id: 'library-introspect-postgres',
      label: 'introspection endpoint, repeat client (PostgreSQL, watch)',
      group: 'token',
      postgres: true,
      server: 'library',
      config: { store: postgresStoreUrl, introspect: true },
      prepare: libraryIntrospection,
    },
    {
      id: 'jwt-minimal-token',
      label: 'hand-written token endpoint (reference)',
      group: 'token',
      server: 'jwt-minimal',
      config: {},
      prepare: async (ready) => {
        await checkTokenEndpoint(ready.port, needClient(ready));
        return tokenRequest(needClient(ready));
      },
    },
  ];
}
