/**
 * The runnable example API (examples/README.md): `npm start` (or `npx tsx examples/server.ts`).
 *
 *   PORT                    where to listen                              (default 3000)
 *   SERVICE_ACCOUNTS_STORE  sqlite:PATH or postgres://...                (default sqlite:./.data/service-accounts.db)
 *   TOKEN_TTL_SECONDS       access token lifetime                        (default 3600)
 *   MAX_TOKEN_TTL_SECONDS   longest token lifetime an account may be given (default TOKEN_TTL_SECONDS)
 *   MAX_CREDENTIAL_LIFETIME every new credential must expire within it: 90d, 12h, 30m, 4s (default: no rule)
 *   TOKEN_ISSUER            iss of its tokens, issuer of its metadata    (default http://localhost:PORT)
 *   TOKEN_FAILURE_LIMIT     failed authentications per client ID and per address per minute before 429; 0 = off (default 10)
 *   MAX_ASSERTION_LIFETIME_SECONDS  longest lifetime a private_key_jwt assertion may have left, 10 to 3600 (default 3600)
 *   ACCEPT_TOKEN_ENDPOINT_AUDIENCE  1: also accept the token endpoint URL as an untyped assertion's audience; or that
 *                           URL itself, when a proxy changes the path (default 0; see docs/private-key-jwt.md)
 *   TOKEN_SIGNING_KEY       ≥ 32 characters (HS256) or a PEM EC P-256 private key (ES256);
 *                           generated once beside a SQLite file when absent; required with PostgreSQL
 *   METRICS                 1: Prometheus metrics at GET /metrics through the OpenTelemetry SDK (default 0)
 *   HEALTH_DETAILS_TOKEN    ≥ 32 characters: GET /readyz with `Authorization: Bearer <it>` returns the full
 *                           health report; without it, /readyz answers {"status"} alone (default: none)
 *   ADMIN_TOKEN             bearer token of an all-tenants operator of the admin API at /admin (default: none)
 *   ADMIN_TENANT_TOKENS     token1=clientAccountA,token2=clientAccountB: bearer tokens of one client account's
 *                           administrators; with either variable the admin API is mounted (default: none)
 *   FEDERATION_ALLOWED_ISSUERS  the only outside issuers federated credentials may name: URLs separated by commas,
 *                           `none`, or `any` (default: any; with ADMIN_TENANT_TOKENS, a warning unless a list)
 *   FEDERATION_ALLOW_PRIVATE_NETWORKS  1: fetch outside issuers' keys from private network addresses (default 0)
 *   FEDERATION_ALLOW_HTTP_LOOPBACK     1: trust outside issuers on 127.0.0.1, over plain http too (default 0)
 *
 * Every request is logged as one JSON line on stdout; GET /healthz is liveness, GET /readyz readiness.
 * A request must arrive within 15 s (headers within 10 s); idle keep-alive connections close about 6 s
 * after their last answer (keepAliveTimeout 5 s, plus the second Node adds).
 *
 * It imports only the package's public entry points, as an application would.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServiceAccounts, type CreatedAccount, type ServiceAccounts } from 'express-service-accounts';
import { openAccountStore } from 'express-service-accounts/sql';
import { openActivityStore } from './server/activity-store.js';
import { activityEntry, createApp } from './server/app.js';
import { provisionDemoAccount } from './server/demo-account.js';
import { createHttpServer } from './server/http-server.js';
import { provisioningLock } from './server/provisioning-lock.js';
import { readSettings, StartupError } from './server/settings.js';
import { resolveSigningKey } from './server/signing-key.js';
import { createAdminMount } from './server/admin.js';
import { createLogger, createMetrics, createRequestLogger, logAudit, logOperationalEvent } from './server/observability.js';

function listen(server: Server, port: number): Promise<number> {
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(port, () => {
      server.off('error', fail);
      done((server.address() as AddressInfo).port);
    });
  });
}

function printDemoAccount(account: CreatedAccount, url: string): void {
  // Without jq: node is there, since it runs this server.
  const accessToken = `node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).access_token'`;
  console.log(
    [
      `Provisioned a demo service account "${account.name}" (scopes: ${account.scopes.join(' ')}).`,
      `  client ID:     ${account.clientId}`,
      `  client secret: ${account.secret.value}`,
      'The secret is shown this once and never again: copy it now.',
      'Get a token into ACCESS_TOKEN:',
      `  ACCESS_TOKEN=$(curl -s -u '${account.clientId}:${account.secret.value}' -d grant_type=client_credentials ${url}/oauth/token | ${accessToken})`,
      'Then call the API with it:',
      `  curl -s -H "Authorization: Bearer $ACCESS_TOKEN" ${url}/api/whoami`,
      'People sign in beside the tokens (a stand-in login, any name) and call the same routes:',
      `  curl -s -c hirer-cookies.txt -d name=Ada ${url}/login`,
      `  curl -s -b hirer-cookies.txt ${url}/api/activity`,
      ...(account.secret.expiresAt ? [`The demo secret expires at ${account.secret.expiresAt.toISOString()} (MAX_CREDENTIAL_LIFETIME).`] : []),
    ].join('\n'),
  );
}

/** The environment variable each option the server passes comes from, for a refusal to name. */
const OPTION_VARIABLES: readonly (readonly [string, string])[] = [
  ['signingKeys', 'TOKEN_SIGNING_KEY'],
  ['issuer', 'TOKEN_ISSUER'],
  ['tokenLifetime', 'TOKEN_TTL_SECONDS'],
  ['maxAccessTokenLifetime', 'MAX_TOKEN_TTL_SECONDS'],
  ['maxCredentialLifetime', 'MAX_CREDENTIAL_LIFETIME'],
  ['maxAssertionLifetime', 'MAX_ASSERTION_LIFETIME_SECONDS'],
  ['failureLimit', 'TOKEN_FAILURE_LIMIT'],
  ['acceptTokenEndpointAudience', 'ACCEPT_TOKEN_ENDPOINT_AUDIENCE'],
  ['federation.allowedIssuers', 'FEDERATION_ALLOWED_ISSUERS'],
];

/** A library option refusal, with the environment variable it came from: `... (from TOKEN_SIGNING_KEY)`. */
function withVariableName(message: string): string {
  const option = /option "([^"]+)"/.exec(message)?.[1];
  const variable = option && OPTION_VARIABLES.find(([name]) => option === name || option.startsWith(`${name}.`) || option.startsWith(`${name}[`))?.[1];
  return variable ? `${message} (from ${variable})` : message;
}

async function main(): Promise<void> {
  const settings = readSettings(process.env);
  const signingKey = resolveSigningKey(settings.signingKey, settings.store);

  // Listen first so PORT=0 works: the default issuer needs the real port.
  const server = createHttpServer();
  const port = await listen(server, settings.port);
  const url = `http://localhost:${port}`;
  const issuer = settings.issuer ?? url;

  const logger = createLogger();
  const metrics = settings.metrics ? createMetrics() : undefined;
  const activity = openActivityStore(settings.store, { retentionSeconds: settings.activityRetentionSeconds });
  let sa: ServiceAccounts;
  try {
    sa = createServiceAccounts({
      store: openAccountStore(settings.storeUrl),
      issuer,
      signingKeys: [signingKey.key],
      tokenLifetime: settings.tokenLifetime,
      maxAccessTokenLifetime: settings.maxAccessTokenLifetime,
      ...(settings.maxCredentialLifetime !== undefined && { maxCredentialLifetime: settings.maxCredentialLifetime }),
      maxAssertionLifetime: settings.maxAssertionLifetime,
      acceptTokenEndpointAudience: settings.acceptTokenEndpointAudience,
      failureLimit: settings.failureLimit,
      federation: {
        allowHttpLoopback: settings.federationAllowHttpLoopback,
        allowPrivateNetworks: settings.federationAllowPrivateNetworks,
        ...(settings.federationAllowedIssuers !== undefined && { allowedIssuers: settings.federationAllowedIssuers }),
      },
      ...(metrics && { telemetry: { meterProvider: metrics.meterProvider } }),
      onEvent: (event) => logOperationalEvent(logger, event),
      onAudit: (event) => {
        logAudit(logger, event);
        if (event.type === 'token.issued') {
          const actor = { type: 'service_account', clientId: event.clientId, name: event.name } as const;
          activity.record(activityEntry('token.issued', actor)).catch((error: unknown) => {
            console.error('error: could not record activity:', error instanceof Error ? error.message : String(error));
          });
        }
      },
    });
  } catch (error) {
    server.close();
    throw error instanceof TypeError ? new StartupError(withVariableName(error.message)) : error;
  }
  if (settings.admin !== undefined && settings.admin.tenants.size > 0 && settings.federationAllowedIssuers === undefined) {
    // FEDERATION_ALLOWED_ISSUERS unset or `any`: said on every start, so it is not missed.
    console.warn(
      'warning: ADMIN_TENANT_TOKENS without a FEDERATION_ALLOWED_ISSUERS list: tenant administrators choose the addresses this server fetches ' +
        'keys from (public addresses only, unless FEDERATION_ALLOW_PRIVATE_NETWORKS=1); list the issuers they may name instead',
    );
  }
  const guessable = settings.admin && [
    ...(settings.admin.operator !== undefined && settings.admin.operator.length < 32 ? ['ADMIN_TOKEN'] : []),
    ...([...settings.admin.tenants.keys()].some((token) => token.length < 32) ? ['ADMIN_TENANT_TOKENS'] : []),
  ];
  if (guessable && guessable.length > 0) {
    // Nothing limits wrong tokens at /admin: a short one can be guessed by whoever reaches the server.
    console.warn(`warning: ${guessable.join(' and ')} with a token shorter than 32 characters: anyone who can reach /admin may guess it (try: openssl rand -hex 32)`);
  }
  const admin = settings.admin && createAdminMount(sa, settings.admin);
  server.on(
    'request',
    createApp(sa, {
      issuer,
      activity,
      requestLogger: createRequestLogger(logger),
      ...(metrics && { metrics }),
      ...(settings.healthDetailsToken !== undefined && { healthDetailsToken: settings.healthDetailsToken }),
      ...(admin && { admin }),
    }),
  );

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: shutting down`);
    const force = setTimeout(() => server.closeAllConnections(), 5000);
    force.unref();
    server.close(() => {
      void Promise.allSettled([sa.close(), activity.close(), metrics?.shutdown()]).finally(() => process.exit(0));
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  try {
    await sa.ready(); // create the schema and start watching for changes before saying we are ready
    const demo = await provisionDemoAccount(sa.admin, provisioningLock(settings.store), settings.maxCredentialLifetime);
    if (demo) printDemoAccount(demo, url);
    // The provisioning's audit lines are logged off the request path (setImmediate): let them out
    // first, so "Listening on" is the last line of the start-up, as examples/README.md says.
    await new Promise((done) => setImmediate(done));
  } catch (error) {
    server.close();
    await Promise.allSettled([sa.close(), activity.close()]);
    const message = error instanceof Error ? error.message : String(error);
    // A missing driver is already in the message (with its fix); other causes are added to it.
    const cause = error instanceof Error && error.cause instanceof Error && !message.includes(error.cause.message) ? `: ${error.cause.message}` : '';
    throw new StartupError(`cannot use the account store: ${message}${cause}`);
  }

  if (metrics) console.log(`Metrics: ${url}/metrics (Prometheus text format)`);
  console.log(`Signing key: ${signingKey.origin}. Issuer: ${issuer}`);
  console.log(`Listening on ${url}`);
}

main().catch((error: unknown) => {
  const message = error instanceof StartupError ? error.message : error instanceof Error ? error.message : String(error);
  console.error(`error: ${message.split('\n')[0]}`);
  process.exit(1);
});
