/**
 * @module call-store
 * Every call to a dependency goes through here: the account store's, and the failure limiter's Redis.
 * {@link callStore} gives a call its deadline: a failure or a call slower than `storeTimeout` becomes a
 * {@link StoreUnavailableError} (a {@link StoreTimeoutError} for the latter), which the HTTP layer
 * answers with 503 and never lets a request through. A {@link DependencyMonitor} sees each call start
 * and end and keeps the dependency's health: the duration metric and a span of each store call, and
 * the state changes. The first failure after success is a `*.unavailable` event, the first success
 * after failure a `*.recovered` event, so an outage gives two events however many requests it fails.
 * A dependency that flaps is limited to {@link MAX_EVENTS_PER_MINUTE} events a minute (by the
 * configured clock); a change the limit held back is told at the first call after it allows, when the
 * dependency is still in that state, so the last event always says where it ended up.
 */
import { performance } from 'node:perf_hooks';
import { SpanStatusCode } from '@opentelemetry/api';
import { StoreTimeoutError, StoreUnavailableError } from '../errors.js';
import { describeError, type OperationalEventInput } from '../observability/operational-events.js';
import type { Telemetry } from '../observability/telemetry.js';
import { MissingDriverError } from '../store/missing-driver-error.js';

/** Most events one dependency may emit in a minute (a flapping dependency is not a flood of events). */
export const MAX_EVENTS_PER_MINUTE = 6;

/** What `callStore` reports to: `begin` when a call starts, and the returned function when it ends. */
export interface CallObserver {
  begin(operation: string): (error?: unknown) => void;
}

/**
 * Runs a store call with a deadline.
 * @example
 * ```ts
 * const account = await callStore(() => store.findAccount(clientId), 2000, 'findAccount')
 * ```
 */
export function callStore<T>(call: () => Promise<T>, timeoutMs: number, what: string, observer?: CallObserver): Promise<T> {
  const end = observer?.begin(what);
  return new Promise<T>((resolve, reject) => {
    // The first outcome wins: a call that answers after its deadline changes nothing.
    let settled = false;
    const fail = (error: StoreUnavailableError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      end?.(error);
      reject(error);
    };
    const timer = setTimeout(() => fail(new StoreTimeoutError(what, timeoutMs)), timeoutMs);
    timer.unref?.();
    let pending: Promise<T>;
    try {
      pending = Promise.resolve(call());
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        end?.();
        resolve(value);
      },
      // A missing driver is said in the message itself: what to install reaches ready(), events and logs.
      (err: unknown) => fail(new StoreUnavailableError(`Store call ${what} failed${err instanceof MissingDriverError ? `: ${err.message}` : ''}`, { cause: err })),
    );
  });
}

/** Watches the calls made to one dependency (the account store, or the failure limiter's Redis); see the module description. */
export class DependencyMonitor implements CallObserver {
  readonly #dependency: 'store' | 'limiter';
  readonly #telemetry: Telemetry;
  readonly #emit: (event: OperationalEventInput) => void;
  readonly #now: () => Date;
  /** Whether the dependency answers now (its last call succeeded). */
  #available = true;
  /** Whether the last event told it answers (no event yet: it does). */
  #toldAvailable = true;
  /** When the told `*.unavailable` event happened, for the recovery's `downtimeMs`. */
  #toldSince: Date | undefined;
  /** The call that began the current outage, and how it failed. */
  #failure: { operation: string; error: string } | undefined;
  /** When the events of the last minute were emitted (ms of the configured clock). */
  #recent: number[] = [];

  constructor(dependency: 'store' | 'limiter', telemetry: Telemetry, emit: (event: OperationalEventInput) => void, now: () => Date) {
    this.#dependency = dependency;
    this.#telemetry = telemetry;
    this.#emit = emit;
    this.#now = now;
  }

  begin(operation: string): (error?: unknown) => void {
    const started = performance.now();
    // Store calls get a span (a child of the request's); the limiter's Redis calls do not.
    const span = this.#dependency === 'store' ? this.#telemetry.startStoreSpan(operation) : undefined;
    return (error) => {
      const failed = error !== undefined;
      if (this.#dependency === 'store') {
        this.#telemetry.storeCall(operation, (performance.now() - started) / 1000, failed ? errorType(error) : undefined);
      }
      if (span) {
        if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: errorType(error) });
        span.end();
      }
      if (failed && this.#available) this.#failure = { operation, error: describeError(error) };
      this.#available = !failed;
      // Tell the current state when it differs from the last one told: at once, or, when a flapping
      // dependency used up the minute's events, at the first call after the limit allows, so the last
      // event always matches where the dependency ended up.
      if (this.#available !== this.#toldAvailable) this.#tell();
    };
  }

  #tell(): void {
    const now = this.#now();
    if (!this.#mayEmit(now.getTime())) return;
    this.#toldAvailable = this.#available;
    if (!this.#available) {
      this.#toldSince = now;
      const { operation, error } = this.#failure!;
      this.#emit(
        this.#dependency === 'store'
          ? { type: 'store.unavailable', dependency: 'store', operation, error }
          : { type: 'limiter.unavailable', dependency: 'limiter', operation, error, failMode: 'closed' },
      );
      return;
    }
    const downtimeMs = this.#toldSince ? now.getTime() - this.#toldSince.getTime() : 0;
    this.#emit({ type: this.#dependency === 'store' ? 'store.recovered' : 'limiter.recovered', dependency: this.#dependency, downtimeMs });
  }

  /** At most {@link MAX_EVENTS_PER_MINUTE} in any minute of the configured clock (a clock set back forgets the later ones). */
  #mayEmit(now: number): boolean {
    this.#recent = this.#recent.filter((t) => t <= now && now - t < 60_000);
    if (this.#recent.length >= MAX_EVENTS_PER_MINUTE) return false;
    this.#recent.push(now);
    return true;
  }
}

/** The `error.type` of a failed call: `timeout`, or the class name of the underlying error. */
function errorType(error: unknown): string {
  if (error instanceof StoreTimeoutError) return 'timeout';
  if (!(error instanceof Error)) return 'unknown';
  return error.cause instanceof Error ? error.cause.name : error.name;
}
