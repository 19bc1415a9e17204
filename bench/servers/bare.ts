/**
 * @module bare
 * The limit: bare Express answering the same JSON as every other server, with no authentication.
 * `GET /api/resource` for the bearer cases, `POST /oauth/token` (a fixed token response of the same
 * size as a real one) for the token cases; with `parseBody`, the body is read by `express.urlencoded()`
 * first (an informational row: what reading a form body costs before any OAuth work).
 */
import express from 'express';
import { PROTECTED_PATH, RESOURCE, TOKEN_PATH } from '../lib/fixtures.js';
import { readConfig, run, serve } from './serve.js';

run(async () => {
  const config = readConfig();
  const tokenResponse = { access_token: config.token ?? 'x', token_type: 'Bearer', expires_in: 3600, scope: 'bench:read' };
  const app = express();
  app.get(PROTECTED_PATH, (_req, res) => {
    res.json(RESOURCE);
  });
  const parse = config.parseBody ? [express.urlencoded({ extended: false })] : [];
  app.post(TOKEN_PATH, ...parse, (_req, res) => {
    res.set('Cache-Control', 'no-store').json(tokenResponse);
  });
  await serve(app);
});
