// Runs in a project that installed the packed tarball: import of every ES module entry point (the
// same classes as require() would give are not expected: that is the dual-package contract), then one
// real token round trip over HTTP with a SQLite store from express-service-accounts/sql.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { createServiceAccounts, MemoryAccountStore, InvalidTokenError, OAuthError } from 'express-service-accounts';
import { openAccountStore } from 'express-service-accounts/sql';
import { describeAccountStore } from 'express-service-accounts/testing';

assert.equal(typeof MemoryAccountStore, 'function');
assert.ok(new InvalidTokenError('expired') instanceof OAuthError);
assert.equal(typeof describeAccountStore, 'function');
assert.match(import.meta.resolve('express-service-accounts/testing'), /dist\/testing\/index\.mjs$/);

const dir = mkdtempSync(join(tmpdir(), 'esa-smoke-'));
const serviceAccounts = createServiceAccounts({
  store: openAccountStore(`sqlite:${join(dir, 'accounts.db')}`),
  issuer: 'http://localhost',
  signingKeys: { alg: 'HS256', key: 'a package smoke test key of 32+ bytes' },
  secretHashRounds: 4,
});
const app = express();
app.use('/oauth', serviceAccounts.tokenRouter);
app.get('/whoami', serviceAccounts.requireBearer(), (req, res) => res.json(req.serviceAccount));
const server = app.listen(0);
await new Promise((resolve) => server.once('listening', resolve));
const base = `http://127.0.0.1:${server.address().port}`;
try {
  const account = await serviceAccounts.admin.createAccount({ name: 'smoke-esm', scopes: ['jobs:write'] });
  const token = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${account.clientId}:${account.secret.value}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ grant_type: 'client_credentials' }),
  });
  assert.equal(token.status, 200);
  const body = await token.json();
  assert.equal(body.scope, 'jobs:write');
  const me = await fetch(`${base}/whoami`, { headers: { authorization: `Bearer ${body.access_token}` } });
  assert.equal(me.status, 200);
  assert.equal((await me.json()).name, 'smoke-esm');
} finally {
  server.close();
  await serviceAccounts.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log('import: ok');
