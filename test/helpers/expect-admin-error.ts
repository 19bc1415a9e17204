/**
 * Asserts that an admin API call fails with an `AdminError` of a given code (and message), the way
 * `expectOAuthError` does for HTTP answers.
 */
import { expect } from 'vitest';
import { AdminError } from '../../src/index.js';

/** Awaits `promise`, expects an `AdminError` with `code` (and a message matching `message`), returns it. */
export async function expectAdminError(promise: Promise<unknown>, code: AdminError['code'], message?: RegExp): Promise<AdminError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AdminError);
  expect((err as AdminError).code).toBe(code);
  if (message) expect((err as AdminError).message).toMatch(message);
  return err as AdminError;
}
