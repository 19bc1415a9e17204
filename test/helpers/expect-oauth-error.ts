/**
 * expectOAuthError(res, status, code, { challenge }): the RFC 6749 §5.2 body (exactly error +
 * error_description, both strings), JSON content type, and no stack or HTML anywhere. With
 * `challenge`, also the `WWW-Authenticate` header (a RegExp or exact string; `null` = must be absent).
 */
import { expect } from 'vitest';
import type { Response } from 'supertest';

export interface ExpectOAuthErrorOptions {
  /** Expected `WWW-Authenticate`: exact string, pattern, or `null` when the header must be absent. */
  challenge?: string | RegExp | null;
}

export function expectOAuthError(res: Response, status: number, code: string, options: ExpectOAuthErrorOptions = {}): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body).toEqual({ error: code, error_description: expect.any(String) });
  expect(Object.keys(res.body as object).sort()).toEqual(['error', 'error_description']);
  expect(res.text).not.toMatch(/<html|\bat .+\.(ts|js):\d+/i);
  if (options.challenge === null) expect(res.headers['www-authenticate']).toBeUndefined();
  else if (typeof options.challenge === 'string') expect(res.headers['www-authenticate']).toBe(options.challenge);
  else if (options.challenge instanceof RegExp) expect(res.headers['www-authenticate']).toMatch(options.challenge);
}

/** RFC 6749 §5.1: every token response, errors included, carries `Cache-Control: no-store` and `Pragma: no-cache`. */
export function expectNoStore(res: Response): void {
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers.pragma).toBe('no-cache');
}

/** CONTRACT §2: "no CORS headers are ever sent". */
export function expectNoCorsHeaders(res: Response): void {
  expect(Object.keys(res.headers).filter((name) => name.toLowerCase().startsWith('access-control-'))).toEqual([]);
}

/** CONTRACT §2: an error body "never echoes a secret" (nor a bcrypt hash). */
export function expectNoSecret(res: Response, ...secrets: string[]): void {
  for (const secret of secrets) {
    expect(res.text).not.toContain(secret);
    expect(JSON.stringify(res.headers)).not.toContain(secret);
  }
  expect(res.text).not.toMatch(/\$2[aby]\$/);
}
