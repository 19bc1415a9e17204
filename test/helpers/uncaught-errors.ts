/**
 * Fails the current test when the process sees an uncaught exception or an unhandled rejection while
 * it runs (for example an `'error'` event nobody listens to, which would crash a real server).
 */
import { afterEach, beforeEach } from 'vitest';

export function failOnUncaughtErrors(): void {
  const seen: unknown[] = [];
  const record = (error: unknown): void => {
    seen.push(error);
  };
  beforeEach(() => {
    seen.length = 0;
    process.on('uncaughtException', record);
    process.on('unhandledRejection', record);
  });
  afterEach(() => {
    process.off('uncaughtException', record);
    process.off('unhandledRejection', record);
    if (seen.length > 0) {
      const messages = seen.map((error) => (error instanceof Error ? error.message : String(error)));
      throw new Error(`the process would have crashed: ${messages.join('; ')}`);
    }
  });
}
