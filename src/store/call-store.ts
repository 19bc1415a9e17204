/**
 * @module call-store
 * Every store call goes through here: a failure or a call slower than `storeTimeout` becomes a
 * {@link StoreUnavailableError}, which the HTTP layer answers with 503 and never lets a request through.
 */
import { StoreUnavailableError } from '../errors.js';

/**
 * Runs a store call with a deadline.
 * @example
 * ```ts
 * const account = await callStore(() => store.findAccount(clientId), 2000, 'findAccount')
 * ```
 */
export function callStore<T>(call: () => Promise<T>, timeoutMs: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new StoreUnavailableError(`Store call ${what} timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
    timer.unref?.();
    let pending: Promise<T>;
    try {
      pending = Promise.resolve(call());
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(new StoreUnavailableError(`Store call ${what} failed`, { cause: err }));
      },
    );
  });
}
