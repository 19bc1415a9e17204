/**
 * @module auth0
 * Peer: express-oauth2-jwt-bearer (auth0) verifying the same HS256 tokens with a shared secret
 * (`secret` + `tokenSigningAlg: 'HS256'`), plus `requiredScopes` for the same scope. It checks the
 * signature and claims on every request and has no notion of revocation.
 */
import express from 'express';
import { auth, requiredScopes } from 'express-oauth2-jwt-bearer';
import { AUDIENCE, HS256_KEY, ISSUER, PROTECTED_PATH, RESOURCE, SCOPE } from '../lib/fixtures.js';
import { run, serve } from './serve.js';

run(async () => {
  const app = express();
  app.get(
    PROTECTED_PATH,
    auth({ issuer: ISSUER, audience: AUDIENCE, secret: HS256_KEY, tokenSigningAlg: 'HS256' }),
    requiredScopes(SCOPE),
    (_req, res) => {
      res.json(RESOURCE);
    },
  );
  // Its errors carry a status and headers; render them as JSON like a host would.
  app.use((err: { status?: number; headers?: Record<string, string>; code?: string }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(err.status ?? 500).set(err.headers ?? {}).json({ error: err.code ?? 'server_error' });
  });
  await serve(app);
});
