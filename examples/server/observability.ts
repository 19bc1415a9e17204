/**
 * What an operator sees of the example server: one JSON log line per request on stdout (pino-http),
 * naming the service account or the signed-in person of a protected request and never holding a token or secret; the audit
 * and operational events as JSON lines too; and, with METRICS=1, the OpenTelemetry SDK with a
 * Prometheus exporter whose text the app serves at GET /metrics.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MeterProvider as MeterProviderApi } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import type { AuditEvent, OperationalEvent } from 'express-service-accounts';
import { pino, type Logger } from 'pino';
import { pinoHttp, type HttpLogger } from 'pino-http';
import { loggablePath } from './loggable-path.js';

/**
 * The JSON logger of the server (stdout). Written synchronously, like `console.log`: lines come out in
 * the order they were logged (the start-up banner stays last) and none is lost when the process exits.
 */
export function createLogger(): Logger {
  return pino({ base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ dest: 1, sync: true }));
}

type LoggedRequest = IncomingMessage & {
  id?: unknown;
  serviceAccount?: { name: string; clientId: string };
  actor?: { type: string; id: string; name: string };
  /** The signed-in person of the stand-in login's session (passport), also on routes without requireActor(). */
  user?: { id?: unknown; name?: unknown } | null;
};

/**
 * Who made a protected request: the service account (requireBearer), or the signed-in person
 * (requireActor, or the session on the self-service page, which reads the person without it).
 */
function callerOf(req: LoggedRequest): object {
  if (req.serviceAccount) return { serviceAccount: { name: req.serviceAccount.name, clientId: req.serviceAccount.clientId } };
  if (req.actor?.type === 'user') return { user: { name: req.actor.name, id: req.actor.id } };
  const { user } = req;
  if (req.actor === undefined && typeof user?.id === 'string' && typeof user.name === 'string') return { user: { name: user.name, id: user.id } };
  return {};
}

/**
 * One line per request, written when the response is finished. Only the method, the path (never the
 * query string, and no segment that looks like a secret or a token: see loggable-path.ts), the status
 * and the duration are logged: no header (so never an Authorization header), no body.
 */
export function createRequestLogger(logger: Logger): HttpLogger {
  return pinoHttp({
    logger,
    quietReqLogger: true,
    wrapSerializers: false,
    serializers: {
      req: (req: LoggedRequest) => ({ id: req.id, method: req.method, path: loggablePath(req.url) }),
      res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
      err: (err: Error) => ({ type: err.name, message: err.message }),
    },
    // Called again when the response is finished, after requireBearer() or requireActor() has named the caller.
    customProps: callerOf,
    customSuccessMessage: () => 'request completed',
    customErrorMessage: () => 'request failed',
  });
}

/** Audit events (who did what) as JSON lines. The hook never receives a secret. */
export function logAudit(logger: Logger, event: AuditEvent): void {
  logger.info({ audit: event }, event.type);
}

/** Operational events (outages, recoveries) as JSON lines: warnings, but for recoveries. */
export function logOperationalEvent(logger: Logger, event: OperationalEvent): void {
  const recovered = event.type === 'store.recovered' || event.type === 'limiter.recovered';
  const state = event.type === 'change_feed.state_changed' && (event.state === 'push' || event.state === 'polling');
  logger[recovered || state ? 'info' : 'warn']({ event }, event.type);
}

/** The metrics side: a MeterProvider for the library, and the handler of GET /metrics. */
export interface Metrics {
  readonly meterProvider: MeterProviderApi;
  handle(req: IncomingMessage, res: ServerResponse): void;
  shutdown(): Promise<void>;
}

/** With METRICS=1: the OpenTelemetry SDK with a Prometheus exporter (served by the app, not a port of its own). */
export function createMetrics(): Metrics {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({ readers: [exporter] });
  return {
    meterProvider,
    handle: (req, res) => exporter.getMetricsRequestHandler(req, res),
    shutdown: () => meterProvider.shutdown(),
  };
}
