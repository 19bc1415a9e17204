/**
 * @module jwt-minimal
 * Reference point: what a hand-written minimum costs with jsonwebtoken and an HS256 `KeyObject`.
 * - bearer check: `jwt.verify` (issuer, audience, algorithm) and the route's scope; no revocation,
 *   no account status, no principal;
 * - token endpoint: `express.urlencoded()`, the Basic header decoded, one plaintext client secret
 *   compared in constant time, `jwt.sign` of a token of the library's shape.
 */
import { createSecretKey, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import express from 'express';
import jwt from 'jsonwebtoken';
import { AUDIENCE, HS256_KEY, ISSUER, KID, PROTECTED_PATH, RESOURCE, SCOPE, TOKEN_PATH } from '../lib/fixtures.js';
import { run, serve } from './serve.js';

run(async () => {
  const key = createSecretKey(Buffer.from(HS256_KEY, 'utf8'));
  const clientId = `jwm_${randomBytes(12).toString('hex')}`;
  const secret = Buffer.from(randomBytes(32).toString('base64url'));

  const app = express();
  app.get(PROTECTED_PATH, (req, res) => {
    const header = req.headers.authorization;
    if (!header?.startsWith('Bearer ')) return void res.status(401).json({ error: 'invalid_token' });
    try {
      const claims = jwt.verify(header.slice(7), key, { algorithms: ['HS256'], issuer: ISSUER, audience: AUDIENCE }) as jwt.JwtPayload;
      if (typeof claims.scope !== 'string' || !claims.scope.split(' ').includes(SCOPE)) {
        return void res.status(403).json({ error: 'insufficient_scope' });
      }
    } catch {
      return void res.status(401).json({ error: 'invalid_token' });
    }
    res.json(RESOURCE);
  });
  app.post(TOKEN_PATH, express.urlencoded({ extended: false }), (req, res) => {
    const [scheme, encoded] = (req.headers.authorization ?? '').split(' ');
    const [id, given] = Buffer.from(encoded ?? '', 'base64').toString().split(':');
    const presented = Buffer.from(decodeURIComponent(given ?? ''));
    if (scheme !== 'Basic' || id !== clientId || presented.length !== secret.length || !timingSafeEqual(presented, secret)) {
      return void res.status(401).json({ error: 'invalid_client' });
    }
    if ((req.body as Record<string, unknown>).grant_type !== 'client_credentials') return void res.status(400).json({ error: 'unsupported_grant_type' });
    const iat = Math.floor(Date.now() / 1000);
    const claims = { iss: ISSUER, sub: clientId, client_id: clientId, aud: AUDIENCE, iat, exp: iat + 3600, jti: randomUUID(), scope: SCOPE, secret_id: 'plaintext' };
    const token = jwt.sign(claims, key, { algorithm: 'HS256', header: { alg: 'HS256', typ: 'at+jwt', kid: KID } });
    res.set('Cache-Control', 'no-store').json({ access_token: token, token_type: 'Bearer', expires_in: 3600, scope: SCOPE });
  });
  await serve(app, { client: { clientId, secret: secret.toString() } });
});
