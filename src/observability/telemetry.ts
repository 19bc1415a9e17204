/**
 * @module telemetry
 * What an instance reports to its host while it runs, each kept off the request's path: metrics and
 * traces through the OpenTelemetry API (the instruments, and the span of one HTTP request), and events
 * handed to the host's hooks (`onAudit`, `onEvent`).
 *
 * The OpenTelemetry API alone records nothing: every instrument is a no-op until the host installs an
 * OpenTelemetry SDK (a `MeterProvider` and `TracerProvider`), which is the convention for libraries.
 * Instruments are created once per instance, from the providers given in the `telemetry` option or else
 * the global ones registered when `createServiceAccounts()` runs.
 *
 * No client secret, access token or hash ever becomes an attribute: attributes are error codes,
 * reasons and store operation names only. The full list is in docs/observability.md.
 */
import {
  metrics,
  trace,
  SpanStatusCode,
  type Attributes,
  type Counter,
  type Histogram,
  type MeterProvider,
  type ObservableResult,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { ServerResponse } from 'node:http';

/** Name and version under which instruments and spans are reported (the instrumentation scope). */
export const INSTRUMENTATION_SCOPE = 'express-service-accounts';

/**
 * The `telemetry` option of `createServiceAccounts()`.
 *
 * @example
 * ```ts
 * import { PrometheusExporter } from '@opentelemetry/exporter-prometheus'
 * import { MeterProvider } from '@opentelemetry/sdk-metrics'
 *
 * const exporter = new PrometheusExporter({ preventServerStart: true })
 * const telemetry: TelemetryOptions = { meterProvider: new MeterProvider({ readers: [exporter] }), traceBearerChecks: false }
 * const sa = createServiceAccounts({ store, issuer, signingKeys, telemetry })
 * app.get('/metrics', (req, res) => exporter.getMetricsRequestHandler(req, res))
 * ```
 */
export interface TelemetryOptions {
  /** Where instruments are created. @default the global provider (`metrics.getMeterProvider()`) */
  meterProvider?: MeterProvider;
  /** Where spans are created. @default the global provider (`trace.getTracerProvider()`) */
  tracerProvider?: TracerProvider;
  /**
   * Whether every `requireBearer()` check gets a span. Off by default: a bearer check costs a few
   * microseconds, and a span per protected request would cost more than the check itself.
   * @default false
   */
  traceBearerChecks?: boolean;
}

/** What can be observed at collection time (gauges), each given by the part that owns it. */
export interface TelemetryGauges {
  /** Secret checks waiting for a bcrypt slot. */
  secretCheckQueueDepth(): number;
  /** Hits and misses of the account cache since start. */
  accountCacheCounts(): { hits: number; misses: number };
}

/** The instruments of one instance. */
export interface Telemetry {
  readonly tracer: Tracer;
  readonly traceBearerChecks: boolean;
  /** A token was issued. */
  tokenIssued(): void;
  /** A token request was refused: `code` is the OAuth error, `reason` our finer reason when known. */
  tokenRequestRefused(code: string, reason?: string): void;
  /** A bearer check was refused. */
  bearerCheckRefused(code: string, reason?: string): void;
  /** The failure limiter answered 429. */
  limiterRefused(): void;
  /** Fetching an outside issuer's keys failed (`issuer`: its identifier). */
  federatedKeyFetchFailed(issuer: string): void;
  /** A store call finished (`error` is the error type when it failed). */
  storeCall(operation: string, seconds: number, error: string | undefined): void;
  /** One bcrypt compare of a presented secret took `seconds`. */
  secretVerified(seconds: number): void;
  /** A secret check waited `seconds` for a bcrypt slot. */
  secretQueueWait(seconds: number): void;
  /** Starts a span for a store call (a no-op span without an OpenTelemetry SDK). */
  startStoreSpan(operation: string): Span;
  /** Gives the gauges their sources; a gauge without one reports nothing. */
  observe(gauges: Partial<TelemetryGauges>): void;
}

const PREFIX = 'service_accounts';
const ERROR_TYPE = 'error.type';
const REASON = `${PREFIX}.reason`;
const OPERATION = 'db.operation.name';

/** Buckets in seconds for store calls (1 ms to 10 s) and bcrypt (10 ms to 10 s). */
const STORE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const BCRYPT_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

function withReason(code: string, reason: string | undefined): Attributes {
  return reason === undefined ? { [ERROR_TYPE]: code } : { [ERROR_TYPE]: code, [REASON]: reason };
}

/** Creates the instruments of one instance. */
export function createTelemetry(options: TelemetryOptions, version: string): Telemetry {
  const gauges: Partial<TelemetryGauges> = {};
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(INSTRUMENTATION_SCOPE, version);
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_SCOPE, version);

  const issued: Counter = meter.createCounter(`${PREFIX}.tokens.issued`, {
    description: 'Access tokens issued by the token endpoint',
    unit: '{token}',
  });
  const tokenRefused: Counter = meter.createCounter(`${PREFIX}.token_requests.refused`, {
    description: 'Token requests refused, by OAuth error code (error.type) and reason',
    unit: '{request}',
  });
  const bearerRefused: Counter = meter.createCounter(`${PREFIX}.bearer_checks.refused`, {
    description: 'Requests refused by requireBearer(), by OAuth error code (error.type) and reason',
    unit: '{request}',
  });
  const limited: Counter = meter.createCounter(`${PREFIX}.limiter.refusals`, {
    description: 'Token requests answered 429 by the failed-authentication limiter',
    unit: '{request}',
  });
  const keyFetchFailures: Counter = meter.createCounter(`${PREFIX}.federation.key_fetch_failures`, {
    description: "Failed fetches of an outside issuer's discovery document or keys, by issuer (service_accounts.issuer)",
    unit: '{fetch}',
  });
  const storeDuration: Histogram = meter.createHistogram(`${PREFIX}.store.duration`, {
    description: 'Duration of account store calls, by operation (db.operation.name); error.type when it failed',
    unit: 's',
    advice: { explicitBucketBoundaries: STORE_BUCKETS },
  });
  const verifyDuration: Histogram = meter.createHistogram(`${PREFIX}.secret_verification.duration`, {
    description: 'Duration of one bcrypt comparison of a presented client secret',
    unit: 's',
    advice: { explicitBucketBoundaries: BCRYPT_BUCKETS },
  });
  const queueWait: Histogram = meter.createHistogram(`${PREFIX}.secret_verification.queue.wait`, {
    description: 'Time a client secret check waited for a bcrypt slot',
    unit: 's',
    advice: { explicitBucketBoundaries: STORE_BUCKETS },
  });
  meter
    .createObservableGauge(`${PREFIX}.secret_verification.queue.depth`, {
      description: 'Client secret checks waiting for a bcrypt slot',
      unit: '{check}',
    })
    .addCallback((result: ObservableResult) => {
      if (gauges.secretCheckQueueDepth) result.observe(gauges.secretCheckQueueDepth());
    });
  meter
    .createObservableGauge(`${PREFIX}.account_cache.hit_ratio`, {
      description: 'Share of account lookups answered from the cache since start (0 to 1)',
      unit: '1',
    })
    .addCallback((result: ObservableResult) => {
      if (!gauges.accountCacheCounts) return;
      const { hits, misses } = gauges.accountCacheCounts();
      if (hits + misses > 0) result.observe(hits / (hits + misses));
    });

  return {
    tracer,
    traceBearerChecks: options.traceBearerChecks ?? false,
    tokenIssued: () => issued.add(1),
    tokenRequestRefused: (code, reason) => tokenRefused.add(1, withReason(code, reason)),
    bearerCheckRefused: (code, reason) => bearerRefused.add(1, withReason(code, reason)),
    limiterRefused: () => limited.add(1),
    federatedKeyFetchFailed: (issuer) => keyFetchFailures.add(1, { [`${PREFIX}.issuer`]: issuer }),
    storeCall: (operation, seconds, error) =>
      storeDuration.record(seconds, error === undefined ? { [OPERATION]: operation } : { [OPERATION]: operation, [ERROR_TYPE]: error }),
    secretVerified: (seconds) => verifyDuration.record(seconds),
    secretQueueWait: (seconds) => queueWait.record(seconds),
    startStoreSpan: (operation) => tracer.startSpan(`${PREFIX}.store ${operation}`, { attributes: { [OPERATION]: operation } }),
    observe: (sources) => void Object.assign(gauges, sources),
  };
}

/**
 * One span per HTTP request handled by the library (the token endpoint, and `requireBearer()` when the
 * host opts in): ended when the response closes, with its status code, or earlier by its owner.
 */
export class RequestSpan {
  #ended = false;

  private constructor(
    readonly span: Span,
    res: ServerResponse,
  ) {
    res.once('close', () => this.end(res.statusCode));
  }

  /**
   * Starts `name` for the request answered by `res`, or returns `undefined` when the span would record
   * nothing (no OpenTelemetry SDK installed, or not sampled): then the caller skips its bookkeeping.
   */
  static start(tracer: Tracer, name: string, res: ServerResponse): RequestSpan | undefined {
    const span = tracer.startSpan(name);
    return span.isRecording() ? new RequestSpan(span, res) : undefined;
  }

  /** Ends the span once (later calls do nothing); with the response's status code when it is known. */
  end(statusCode?: number): void {
    if (this.#ended) return;
    this.#ended = true;
    if (statusCode !== undefined) {
      this.span.setAttribute('http.response.status_code', statusCode);
      if (statusCode >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.span.end();
  }
}

/**
 * `Omit` applied to each member of a union on its own. Plain `Omit<A | B, K>` keeps only the keys the
 * members share, so an event union would lose its `type`-specific fields.
 */
export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An event before the emitter stamps it with `at`. */
export type EventInput<E> = DistributiveOmit<E, 'at'>;

/**
 * A frozen deep copy: lists and plain objects copied and frozen (own enumerable data properties,
 * whatever their names: a claim condition may be named `__proto__`), dates copied, other values as
 * they are.
 */
function frozenCopy(value: unknown): unknown {
  if (value instanceof Date) return new Date(value.getTime());
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy));
  if (value !== null && typeof value === 'object') {
    return Object.freeze(Object.fromEntries(Object.entries(value).map(([key, member]) => [key, frozenCopy(member)])));
  }
  return value;
}

/**
 * Returns a function that stamps an event with `at` (the configured clock) and calls `hook` with it on
 * the next turn of the event loop, off the current call stack: a hook that throws, rejects or is slow
 * never breaks or delays a request, and one that edits the event changes nothing but its own copy. A
 * no-op when there is no hook.
 */
export function createHookEmitter<E extends { readonly at: Date }>(
  hook: ((event: E) => void | Promise<void>) | undefined,
  now: () => Date,
): (event: EventInput<E>) => void {
  if (!hook) return () => {};
  return (input) => {
    // An event's lists and dates are often the account record's own (its scopes, a credential's `expiresAt`).
    const event = frozenCopy({ ...input, at: now() }) as E;
    setImmediate(() => {
      try {
        Promise.resolve(hook(event)).catch(() => {});
      } catch {
        // The hook's failure is the host's to log; it never reaches the request.
      }
    });
  };
}
