/**
 * @module hook-emitter
 * Hands events to a host's hook (`onAudit`, `onEvent`) stamped with the configured clock and off the
 * current call stack: a hook that throws, rejects or is slow never breaks or delays a request.
 */

/**
 * `Omit` applied to each member of a union on its own. Plain `Omit<A | B, K>` keeps only the keys the
 * members share, so an event union would lose its `type`-specific fields.
 */
export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An event before the emitter stamps it with `at`. */
export type EventInput<E> = DistributiveOmit<E, 'at'>;

/**
 * Returns a function that stamps an event with `at` and calls `hook` with it on the next turn of the
 * event loop; a no-op when there is no hook.
 */
export function createHookEmitter<E extends { readonly at: Date }>(
  hook: ((event: E) => void | Promise<void>) | undefined,
  now: () => Date,
): (event: EventInput<E>) => void {
  if (!hook) return () => {};
  return (input) => {
    const event = Object.freeze({ ...input, at: now() }) as unknown as E;
    setImmediate(() => {
      try {
        Promise.resolve(hook(event)).catch(() => {});
      } catch {
        // The hook's failure is the host's to log; it never reaches the request.
      }
    });
  };
}
