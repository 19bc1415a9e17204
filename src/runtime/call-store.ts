/**
 * @module call-store
 * Every store call goes through here: a failure or a call slower than `storeTimeout` becomes a
 * {@link StoreUnavailableError} (a {@link StoreTimeoutError} for the latter), which the HTTP layer answers with 503 and never lets a request through.
 * An optional observer sees each call start and end (duration metrics, spans, outage events).
 */
import { StoreTimeoutError, StoreUnavailableError } from '../errors.js';
import type { CallObserver } from '../observability/dependency-monitor.js';
import { MissingDriverError } from '../store/missing-driver-error.js';

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
