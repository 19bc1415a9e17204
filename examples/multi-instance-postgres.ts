/**
 * Several instances of one API on PostgreSQL. Run it twice (different PORTs) with the same
 * DATABASE_URL, TOKEN_ISSUER and TOKEN_SIGNING_KEY: a token from one instance works on the other,
 * and revoking a secret or disabling an account through either instance (or the CLI) makes both
 * refuse the affected tokens within a second. The store's change feed (LISTEN/NOTIFY, with polling as
 * the safety net) drops each instance's cached status; no protected request waits on the database.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test TOKEN_SIGNING_KEY=$(openssl rand -hex 32) \
 *     TOKEN_ISSUER=https://api.example.com PORT=3001 npx tsx examples/multi-instance-postgres.ts
 */
import express from 'express';
import { createServiceAccounts } from 'express-service-accounts';
import { createPostgresAccountStore } from 'express-service-accounts/sql';
import Redis from 'ioredis';

const { DATABASE_URL, TOKEN_SIGNING_KEY, TOKEN_ISSUER, REDIS_URL } = process.env;
if (!DATABASE_URL || !TOKEN_SIGNING_KEY || !TOKEN_ISSUER) {
  throw new Error('Set DATABASE_URL, TOKEN_ISSUER and TOKEN_SIGNING_KEY (the same on every instance)');
}

const serviceAccounts = createServiceAccounts({
  store: createPostgresAccountStore({ connectionString: DATABASE_URL }),
  issuer: TOKEN_ISSUER,
  signingKeys: [{ alg: 'HS256', key: TOKEN_SIGNING_KEY }],
  // With REDIS_URL, failed-authentication counts are shared, so the limit holds across instances.
  failureLimit: REDIS_URL ? { max: 10, windowSeconds: 60, redis: new Redis(REDIS_URL) } : { max: 10, windowSeconds: 60 },
});

const app = express();
app.use('/oauth', serviceAccounts.tokenRouter);
app.get('/api/whoami', serviceAccounts.requireBearer(), (req, res) => {
  res.json({ instance: process.pid, principal: req.serviceAccount });
});

const server = app.listen(Number(process.env.PORT ?? 3001), async () => {
  await serviceAccounts.ready(); // create the schema and start listening for changes before traffic
  console.log('instance %d on http://localhost:%d', process.pid, (server.address() as { port: number }).port);
});
const shutdown = (): void => {
  server.close(() => void serviceAccounts.close().then(() => process.exit(0)));
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
