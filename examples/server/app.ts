/**
 * The example API: the token endpoint, protected routes that people (a stand-in login) and service
 * accounts both call and that record each action against the caller's name, discovery documents, a
 * health check, and JSON for every error.
 */
import { randomUUID } from 'node:crypto';
import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler } from 'express';
import type { ServiceAccounts } from 'express-service-accounts';
import type { ActivityEntry, ActivityStore, Actor, Job } from './activity-store.js';
import type { HttpLogger } from 'pino-http';
import type { Metrics } from './observability.js';
import { adminNotFound } from './admin.js';
import { loggablePath } from './loggable-path.js';
import { readiness } from './readiness.js';
import { consoleAdministrator, hirerOrServiceAccount, mountHumanLogin, requireRole } from './human-login.js';

/** What the app is given besides the service accounts instance. */
export interface AppParts {
  /** The public base URL the discovery documents point to. */
  readonly issuer: string;
  readonly activity: ActivityStore;
  /** Logs one JSON line per request. */
  readonly requestLogger?: HttpLogger;
  /** With METRICS=1: serves GET /metrics. */
  readonly metrics?: Metrics;
  /** HEALTH_DETAILS_TOKEN: a caller presenting it as a bearer token gets the full readiness report. */
  readonly healthDetailsToken?: string;
  /** With ADMIN_TOKEN or ADMIN_TENANT_TOKENS: the admin API, mounted at /admin (admin.ts). */
  readonly admin?: RequestHandler;
}

/** A new activity entry, now. */
export function activityEntry(action: ActivityEntry['action'], actor: Actor, target?: ActivityEntry['target']): ActivityEntry {
  return { id: randomUUID(), at: new Date().toISOString(), action, actor, ...(target && { target }) };
}

/** The activity history's actor for the person or service account requireActor() admitted. */
function actorOf(req: Request): Actor {
  const actor = req.actor!;
  return actor.type === 'service_account' ? { type: 'service_account', clientId: actor.id, name: actor.name } : { type: 'user', id: actor.id, name: actor.name };
}

function jsonError(status: number, error: string, description: string): { status: number; body: { error: string; error_description: string } } {
  return { status, body: { error, error_description: description } };
}

/**
 * A person's write (signed in by session cookie) must send JSON: an HTML form on another site can only
 * send form or text/plain bodies, and a JSON body needs a CORS preflight this app never answers. A write
 * without a body is fine. A service account's bearer token is never sent by a browser on its own, so
 * its body is read as before.
 */
const jsonBodyOnly: RequestHandler = (req, res, next) => {
  if (req.actor?.type === 'service_account') return next();
  const empty = req.headers['transfer-encoding'] === undefined && Number(req.headers['content-length'] ?? 0) === 0;
  if (empty || req.is('application/json')) return next();
  const { status, body } = jsonError(415, 'invalid_request', 'Send the request body as application/json');
  res.status(status).json(body);
};

/** Builds the app. */
export function createApp(sa: ServiceAccounts, { issuer, activity, requestLogger, metrics, healthDetailsToken, admin }: AppParts): Express {
  const app = express();
  app.disable('x-powered-by');
  const base = issuer.replace(/\/+$/, '');
  if (requestLogger) app.use(requestLogger);

  // Liveness: the process serves requests. It looks at nothing else, so a database outage never gets
  // the process restarted (Kubernetes livenessProbe).
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // Readiness: 503 while the account store does not answer (Kubernetes readinessProbe); 200 when it
  // answers, even if something else is degraded. The full report only with HEALTH_DETAILS_TOKEN.
  app.get('/readyz', readiness(sa, healthDetailsToken));
  if (metrics) app.get('/metrics', (req, res) => metrics.handle(req, res));

  // RFC 8414 metadata; jwks_uri only when signing is asymmetric (docs/token-endpoint.md). For an issuer
  // with a path (https://api.example.com/t1), also where RFC 8414 §3.1 puts it: the well-known path
  // inserted before the issuer's path (/.well-known/oauth-authorization-server/t1).
  // Compared as text, not given to Express as a route: an issuer's path may hold `:`, `(` or `*`.
  const issuerPath = new URL(base).pathname.replace(/\/+$/, '');
  const metadataPath = `/.well-known/oauth-authorization-server${issuerPath}`;
  app.get(/^\/\.well-known\/oauth-authorization-server(\/.*)?$/, (req, res, next) => {
    if (req.path !== '/.well-known/oauth-authorization-server' && req.path !== metadataPath) return next();
    res.json(sa.authorizationServerMetadata({ tokenEndpoint: `${base}/oauth/token`, jwksUri: `${base}/.well-known/jwks.json` }));
  });
  // Public keys only; with HS256 there is nothing public to publish.
  app.get('/.well-known/jwks.json', (_req, res) => {
    if (sa.jwks.keys.length === 0) {
      const { status, body } = jsonError(404, 'not_found', 'This server signs with a shared key (HS256): it has no public keys');
      res.status(status).json(body);
      return;
    }
    res.set('Cache-Control', 'public, max-age=300').json(sa.jwks);
  });

  app.use('/oauth', sa.tokenRouter);
  if (admin) app.use('/admin', admin, adminNotFound);
  // People sign in beside the tokens (a stand-in login); the routes below accept either.
  const signedIn = mountHumanLogin(app, (hirer) => activity.record(activityEntry('user.signed_in', { type: 'user', id: hirer.id, name: hirer.name })));
  const hirerOrAccount = hirerOrServiceAccount(sa, signedIn);
  // The self-service page (docs/console.md): a signed-in hirer manages their client account's
  // service accounts in the browser; someone not signed in is pointed to the sign-in form.
  app.use('/console', signedIn, sa.consoleRouter({ authorize: consoleAdministrator, signInUrl: '/login' }));

  const api = express.Router();
  api.get('/whoami', sa.requireBearer(), (req, res) => {
    res.json(req.serviceAccount);
  });
  api.post('/jobs', hirerOrAccount('jobs:write'), requireRole('hirer'), jsonBodyOnly, express.json({ limit: '16kb' }), async (req, res) => {
    const title: unknown = (req.body as { title?: unknown } | undefined)?.title ?? 'Untitled job';
    if (typeof title !== 'string' || title.trim() === '' || title.length > 200) {
      const { status, body } = jsonError(400, 'invalid_request', 'title must be a string of 1 to 200 characters');
      res.status(status).json(body);
      return;
    }
    const job: Job = { id: randomUUID(), title: title.trim(), createdAt: new Date().toISOString(), createdBy: actorOf(req) };
    await activity.addJob(job);
    await activity.record(activityEntry('job.created', job.createdBy, { type: 'job', id: job.id }));
    res.status(201).location(`/api/jobs/${job.id}`).json(job);
  });
  api.get('/jobs', hirerOrAccount('jobs:read'), async (_req, res) => {
    res.json(await activity.listJobs());
  });
  api.get('/activity', hirerOrAccount(), async (_req, res) => {
    res.json(await activity.list());
  });
  app.use('/api', api);

  // Never Express's HTML pages: unknown routes and errors answer JSON, without a stack.
  app.use((req, res) => {
    const { status, body } = jsonError(404, 'not_found', `No route for ${req.method} ${loggablePath(req.path)}`);
    res.status(status).json(body);
  });
  const onError: ErrorRequestHandler = (err: { status?: unknown; statusCode?: unknown; expose?: unknown; message?: unknown }, _req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const raw = typeof err.status === 'number' ? err.status : typeof err.statusCode === 'number' ? err.statusCode : 500;
    const { status, body } =
      raw >= 400 && raw < 500
        ? jsonError(raw, 'invalid_request', err.expose === true && typeof err.message === 'string' ? err.message : 'Bad request')
        : jsonError(500, 'server_error', 'Internal server error');
    if (status === 500) console.error('error:', String(err.message));
    res.status(status).json(body);
  };
  app.use(onError);
  return app;
}
