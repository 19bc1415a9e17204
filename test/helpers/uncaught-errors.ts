/**
 * Fails the current test when the process sees an uncaught exception or an unhandled rejection while
 * it runs (for example an `'error'` event nobody listens to, which would crash a real server).
 */
import { afterEach, beforeEach } from 'vitest';

/** The first three frames of an error's stack (after its message, which may span lines). */
function frames(error: Error): string {
  const stack = error.stack ?? '';
  const at = stack.indexOf('\n    at ');
  return at < 0 ? '' : stack.slice(at + 1).split('\n').slice(0, 3).map((line) => line.trim()).join(' < ');
}

export function failOnUncaughtErrors(): void {
  const seen: Array<{ kind: string; error: unknown }> = [];
  const uncaught = (error: unknown): void => void seen.push({ kind: 'uncaught exception', error });
  const unhandled = (error: unknown): void => void seen.push({ kind: 'unhandled rejection', error });
  beforeEach(() => {
    seen.length = 0;
    process.on('uncaughtException', uncaught);
    process.on('unhandledRejection', unhandled);
  });
  afterEach(() => {
    process.off('uncaughtException', uncaught);
    process.off('unhandledRejection', unhandled);
    if (seen.length > 0) {
      if (process.env.DEBUG_UNCAUGHT) for (const { error } of seen) console.error(error);
      // Which kind, and where it was thrown (the first lines of its stack): enough to find the emitter.
      const messages = seen.map(({ kind, error }) =>
        error instanceof Error ? `${kind}: ${error.message} (${frames(error)})` : `${kind}: ${String(error)}`,
      );
      throw new Error(`the process would have crashed: ${messages.join('; ')}`);
    }
  });
}
