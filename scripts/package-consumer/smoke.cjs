// Runs in a project that installed the packed tarball: require() of every CommonJS entry point, then
// one real token round trip over HTTP with the in-memory store.
'use strict';
const assert = require('node:assert/strict');
const express = require('express');
const core = require('express-service-accounts');
const sql = require('express-service-accounts/sql');
const testing = require('express-service-accounts/testing');

assert.equal(typeof core.createServiceAccounts, 'function');
assert.equal(typeof core.MemoryAccountStore, 'function');
assert.equal(typeof core.OAuthError, 'function');
assert.equal(typeof sql.openAccountStore, 'function');
assert.equal(typeof sql.createSqliteAccountStore, 'function');
assert.equal(typeof sql.createPostgresAccountStore, 'function');
// Internals stay out of the published API: options are resolved by createServiceAccounts(), and the
// SQL store is built by its factories only.
assert.equal('resolveConfig' in core, false);
assert.equal('SqlAccountStore' in sql, false);
assert.equal(typeof testing.describeAccountStore, 'function');
// Outside a test runner there are no global test functions: the suite says what to pass.
assert.throws(() => testing.describeAccountStore('smoke', async () => ({ store: new core.MemoryAccountStore(), cleanup: async () => {} })), {
  name: 'TypeError',
  message: /\{ describe, it, expect, beforeEach, afterEach \}/,
});

async function main() {
  const serviceAccounts = core.createServiceAccounts({
    store: new core.MemoryAccountStore(),
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
    const account = await serviceAccounts.admin.createAccount({ name: 'smoke-cjs' });
    const token = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: account.clientId, client_secret: account.secret.value }),
    });
    assert.equal(token.status, 200);
    const { access_token } = await token.json();
    const me = await fetch(`${base}/whoami`, { headers: { authorization: `Bearer ${access_token}` } });
    assert.equal(me.status, 200);
    assert.equal((await me.json()).name, 'smoke-cjs');
    const refused = await fetch(`${base}/whoami`);
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate'), /^Bearer realm=/);
  } finally {
    server.close();
    await serviceAccounts.close();
  }
  console.log('require(): ok');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
