/**
 * @module hook-emitter
 * Hands events to a host's hook (`onAudit`, `onEvent`) stamped with the configured clock and off the
 * current call stack: a hook that throws, rejects or is slow never breaks or delays a request.
 */

/**
 * Returns a function that stamps an event with `at` and calls `hook` with it on the next turn of the
 * event loop; a no-op when there is no hook.
 */
export function createHookEmitter<E extends { readonly at: Date }>(
  hook: ((event: E) => void | Promise<void>) | undefined,
  now: () => Date,
): (event: Omit<E, 'at'>) => void {
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
