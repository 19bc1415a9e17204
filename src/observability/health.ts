/**
 * @module health
 * `sa.health()`: the state of each part an instance depends on, as one typed report with an overall
 * verdict. It never throws and answers within the store timeout (`storeTimeout`), and one probe of the
 * store serves every call for a second, so it can back a readiness probe that anyone may call.
 */
import type { ChangeFeedState } from '../store/account-store.js';
import { describeError } from './operational-events.js';

/**
 * The overall verdict: `ok`; `degraded` (requests are served, but something needs attention: the
 * change feed is reconnecting or failing, the limiter's Redis is down so token requests that need it
 * get 503, or the secret-check queue is full); `unavailable` (the store does not answer: token
 * requests and uncached bearer checks get 503).
 *
 * @example
 * ```ts
 * import type { HealthStatus } from 'express-service-accounts'
 *
 * const httpStatus = (status: HealthStatus): number => (status === 'unavailable' ? 503 : 200)
 * ```
 */
export type HealthStatus = 'ok' | 'degraded' | 'unavailable';

/**
 * What `sa.health()` reports.
 *
 * @example
 * ```ts
 * import type { HealthReport } from 'express-service-accounts'
 *
 * app.get('/readyz', async (_req, res) => {
 *   const report: HealthReport = await sa.health()
 *   res.status(report.store.status === 'ok' ? 200 : 503).json(report)
 * })
 * ```
 */
export interface HealthReport {
  readonly status: HealthStatus;
  readonly checkedAt: Date;
  /** The account store, probed with a read that has the `storeTimeout` deadline (one probe a second at most). */
  readonly store: {
    readonly status: 'ok' | 'unavailable';
    /** How long the probe took (up to the deadline when it timed out). */
    readonly latencyMs: number;
    /** Why it is unavailable: our error's name and message, and the class name and code of its root cause (such as `Error ECONNREFUSED`). */
    readonly error?: string;
  };
  /**
   * How changes made by other instances reach this one: a {@link ChangeFeedState} the store reports,
   * `watching` (the store watches but reports no detail), `unsupported` (the store cannot watch: account
   * status is cached for at most 500 ms instead) or `not_started` (nothing has used the instance yet).
   */
  readonly changeFeed: { readonly status: ChangeFeedState | 'watching' | 'unsupported' | 'not_started' };
  /** The failed-authentication limiter: `off`, counting in this process's `memory`, or in `redis` (probed now). */
  readonly limiter: {
    readonly status: 'ok' | 'unavailable' | 'off';
    readonly backend: 'memory' | 'redis' | 'none';
    readonly error?: string;
  };
  /** bcrypt comparisons of client secrets: running now, waiting, and how many may wait. */
  readonly secretChecks: { readonly running: number; readonly queued: number; readonly queueLimit: number };
}

/** The store's and the change feed's part of the report. */
export interface StoreHealthSources {
  probeStore(): Promise<void>;
  changeFeed(): HealthReport['changeFeed']['status'];
}

/** The token endpoint's part of the report: its failure limiter and its secret checks. */
export interface TokenEndpointHealthSources {
  readonly limiterBackend: HealthReport['limiter']['backend'];
  probeLimiter(): Promise<void>;
  secretChecks(): HealthReport['secretChecks'];
}

/** The parts of an instance the report reads. */
export interface HealthSources extends StoreHealthSources, TokenEndpointHealthSources {
  now(): Date;
}


/**
 * How long one probe of the store (and of the limiter's Redis) answers every `sa.health()` call:
 * 1 second. Calls made while a probe is running share it. So a flood of readiness requests costs the
 * store at most one read a second, and the report is never more than about a second old (its
 * `checkedAt` says when the probe ended). The change feed and the secret-check queue are read live.
 * @example
 * ```ts
 * const report = await sa.health()
 * const stale = Date.now() - report.checkedAt.getTime() >= HEALTH_PROBE_REUSE_MS // the next call probes again
 * ```
 */
export const HEALTH_PROBE_REUSE_MS = 1000;

interface Probes {
  readonly at: Date;
  readonly store: HealthReport['store'];
  readonly limiter: HealthReport['limiter'];
}

/** Probes the store and the limiter's backend at once; never rejects. */
async function probe(sources: HealthSources): Promise<Probes> {
  const started = performance.now();
  const [store, limiter] = await Promise.all([
    sources.probeStore().then(
      () => ({ status: 'ok' as const, latencyMs: Math.round(performance.now() - started) }),
      (error: unknown) => ({ status: 'unavailable' as const, latencyMs: Math.round(performance.now() - started), error: describeError(error) }),
    ),
    sources.limiterBackend === 'redis'
      ? sources.probeLimiter().then(
          () => ({ status: 'ok' as const, backend: 'redis' as const }),
          (error: unknown) => ({ status: 'unavailable' as const, backend: 'redis' as const, error: describeError(error) }),
        )
      : { status: sources.limiterBackend === 'none' ? ('off' as const) : ('ok' as const), backend: sources.limiterBackend },
  ]);
  return { at: sources.now(), store, limiter };
}

function report({ at, store, limiter }: Probes, sources: HealthSources): HealthReport {
  const changeFeed = { status: safely(sources.changeFeed, 'not_started' as const) };
  const secretChecks = safely(sources.secretChecks, { running: 0, queued: 0, queueLimit: 0 });
  const degraded =
    changeFeed.status === 'reconnecting' ||
    changeFeed.status === 'failing' ||
    limiter.status === 'unavailable' ||
    (secretChecks.queueLimit > 0 && secretChecks.queued >= secretChecks.queueLimit);
  return {
    status: store.status === 'unavailable' ? 'unavailable' : degraded ? 'degraded' : 'ok',
    checkedAt: at,
    store,
    changeFeed,
    limiter,
    secretChecks,
  };
}

/**
 * Returns `sa.health()`: each call builds a report, from the last probe when it ended less than
 * {@link HEALTH_PROBE_REUSE_MS} ago (by `sources.now`), else from the running probe, else from a new
 * one. Never rejects.
 *
 * @example
 * ```ts
 * import { createTokenEndpoint } from '../token-endpoint/token-endpoint.js'
 *
 * const tokenEndpoint = createTokenEndpoint(runtime)
 * const health = createHealthCheck({ ...runtime.storeHealth, ...tokenEndpoint.health, now: config.now })
 * const report = await health()
 * ```
 */
export function createHealthCheck(sources: HealthSources): () => Promise<HealthReport> {
  let last: Probes | undefined;
  let running: Promise<Probes> | undefined;
  const fresh = (probes: Probes): boolean => {
    const age = sources.now().getTime() - probes.at.getTime();
    return age >= 0 && age < HEALTH_PROBE_REUSE_MS; // a clock set back probes again
  };
  return async () => {
    if (last && fresh(last)) return report(last, sources);
    running ??= probe(sources).then((probes) => {
      last = probes;
      running = undefined;
      return probes;
    });
    return report(await running, sources);
  };
}

function safely<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}
