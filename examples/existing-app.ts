/**
 * Mounting service accounts in an existing Express API: the host keeps its own global body parsers,
 * its own routes and its own error handler; the library adds POST /oauth/token (mounted before the
 * host's parsers, so it reads token requests itself) and guards /partner.
 *
 *   TOKEN_SIGNING_KEY=... npx tsx examples/existing-app.ts
 */
import express from 'express';
import { createServiceAccounts } from 'express-service-accounts';
import { openAccountStore } from 'express-service-accounts/sql';

const signingKey = process.env.TOKEN_SIGNING_KEY;
if (!signingKey || signingKey.length < 32) throw new Error('Set TOKEN_SIGNING_KEY to at least 32 characters');

const serviceAccounts = createServiceAccounts({
  store: openAccountStore(process.env.SERVICE_ACCOUNTS_STORE ?? 'sqlite:./.data/service-accounts.db'),
  issuer: 'https://api.example.com',
  signingKeys: [{ alg: 'HS256', key: signingKey }],
  onAudit: (event) => console.log(JSON.stringify({ audit: event.type, clientId: 'clientId' in event ? event.clientId : undefined })),
});

const app = express();
app.set('trust proxy', 1); // behind one reverse proxy: the failure limiter counts real client addresses
// Before the host's parsers: the token router reads its bodies itself and refuses a repeated JSON key,
// which it cannot see once express.json() has parsed the body (docs/token-endpoint.md).
app.use('/oauth', serviceAccounts.tokenRouter);
app.use(express.json()); // the host's own parsers, for its own routes

app.get('/public/status', (_req, res) => {
  res.json({ ok: true });
});

const partner = express.Router();
partner.use(serviceAccounts.requireBearer());
partner.get('/orders', (req, res) => {
  // Every action is attributed to the account's name.
  res.json({ orders: [], requestedBy: req.serviceAccount?.name });
});
partner.post('/orders', serviceAccounts.requireBearer({ scope: 'orders:write' }), (req, res) => {
  res.status(201).json({ createdBy: req.serviceAccount?.name });
});
app.use('/partner', partner);

const server = app.listen(Number(process.env.PORT ?? 3001), () => {
  console.log('listening on http://localhost:%d', (server.address() as { port: number }).port);
});
process.on('SIGTERM', () => {
  server.close(() => void serviceAccounts.close());
});
