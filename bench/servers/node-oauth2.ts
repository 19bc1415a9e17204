/**
 * @module node-oauth2
 * Peer: @node-oauth/oauth2-server 5 behind Express, wired as its docs show (`new Request(req)`,
 * `new Response(res)`, errors carrying `code` as the HTTP status). Its in-memory model:
 * - bearer check: `authenticate()` with `getAccessToken` looking the token up in a Map (the
 *   "in-memory model" of its docs), scope checked by `verifyScope`;
 * - token endpoint: the client credentials grant against plaintext client secrets, issuing a JWT of
 *   the same shape and key as the library's through `generateAccessToken` (HS256 `KeyObject`).
 */
import { createSecretKey, randomBytes, randomUUID } from 'node:crypto';
import express from 'express';
import jwt from 'jsonwebtoken';
import OAuth2Server from '@node-oauth/oauth2-server';
import { AUDIENCE, HS256_KEY, ISSUER, KID, PROTECTED_PATH, RESOURCE, SCOPE, TOKEN_PATH } from '../lib/fixtures.js';
import { readConfig, run, serve } from './serve.js';

const { Request, Response } = OAuth2Server;

run(async () => {
  const config = readConfig();
  const signingKey = createSecretKey(Buffer.from(HS256_KEY, 'utf8'));
  const client: OAuth2Server.Client = { id: `nos_${randomBytes(12).toString('hex')}`, grants: ['client_credentials'], scopes: [SCOPE] };
  const clientSecret = randomBytes(32).toString('base64url');
  const user = { id: client.id };
  const tokens = new Map<string, OAuth2Server.Token>();
  const accessToken = config.token ?? randomBytes(20).toString('hex');
  tokens.set(accessToken, { accessToken, accessTokenExpiresAt: new Date(Date.now() + 3_600_000), scope: [SCOPE], client, user });

  const model: OAuth2Server.ClientCredentialsModel = {
    async getAccessToken(token) {
      return tokens.get(token);
    },
    async verifyScope(token, scope) {
      return scope.every((s) => token.scope?.includes(s) ?? false);
    },
    async getClient(clientId, secret) {
      return clientId === client.id && secret === clientSecret ? client : undefined;
    },
    async getUserFromClient() {
      return user;
    },
    async validateScope(_user, c, scope) {
      const allowed = c.scopes as string[];
      if (!scope || scope.length === 0) return allowed;
      return scope.every((s) => allowed.includes(s)) ? scope : false;
    },
    async generateAccessToken(c, _user, scope) {
      const iat = Math.floor(Date.now() / 1000);
      const claims = {
        iss: ISSUER, sub: c.id, client_id: c.id, aud: AUDIENCE, iat, exp: iat + 3600, jti: randomUUID(),
        scope: scope.join(' '), secret_id: 'plaintext',
      };
      return jwt.sign(claims, signingKey, { algorithm: 'HS256', header: { alg: 'HS256', typ: 'at+jwt', kid: KID } });
    },
    // Self-contained JWTs: nothing needs to be kept to answer the token request.
    async saveToken(token, c, u) {
      return { ...token, client: c, user: u };
    },
  };
  const oauth = new OAuth2Server({ model });

  const sendError = (res: express.Response, response: OAuth2Server.Response, err: unknown): void => {
    const e = err as { code?: number; name?: string; message?: string };
    res.set(response.headers ?? {}).status(typeof e.code === 'number' ? e.code : 500).json({ error: e.name, error_description: e.message });
  };

  const app = express();
  app.get(PROTECTED_PATH, async (req, res) => {
    const response = new Response(res);
    try {
      await oauth.authenticate(new Request(req), response, { scope: [SCOPE] });
      res.json(RESOURCE);
    } catch (err) {
      sendError(res, response, err);
    }
  });
  app.post(TOKEN_PATH, express.urlencoded({ extended: false }), async (req, res) => {
    const response = new Response(res);
    try {
      await oauth.token(new Request(req), response, { accessTokenLifetime: 3600 });
      res.set(response.headers ?? {}).status(response.status ?? 200).json(response.body);
    } catch (err) {
      sendError(res, response, err);
    }
  });
  await serve(app, { client: { clientId: client.id, secret: clientSecret }, token: accessToken });
});
