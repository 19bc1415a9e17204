/**
 * @module admin-problem
 * The admin router's errors, as RFC 9457 problem details (`application/problem+json`): one class with
 * a closed set of `type`s, each with one status and one title, rendered in one place
 * ({@link sendProblem}). A problem's `detail` never holds a secret, a stack trace or whether a client
 * ID exists in another client account.
 */
import type { ServerResponse } from 'node:http';
import { AdminError, type AdminErrorCode } from '../admin/admin-errors.js';
import { StoreUnavailableError } from '../errors.js';

/** Where the problem types are documented; each `type` is this address plus `#admin-<name>`. */
export const PROBLEM_TYPE_BASE = 'https://github.com/express-service-accounts/express-service-accounts/blob/main/docs/errors.md#admin-';

const PROBLEMS = {
  'invalid-request': { status: 400, title: 'The request is not valid' },
  unauthorized: { status: 401, title: 'Authentication required' },
  forbidden: { status: 403, title: 'Not allowed' },
  'cross-origin-request': { status: 403, title: 'Cross-origin request refused' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'secret-limit-reached': { status: 409, title: 'Too many live credentials' },
  'payload-too-large': { status: 413, title: 'Request body too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'service-unavailable': { status: 503, title: 'Service unavailable' },
  'server-error': { status: 500, title: 'Internal server error' },
  'not-implemented': { status: 501, title: 'Not supported by this server' },
} as const satisfies Record<string, { status: number; title: string }>;

/**
 * The name of an admin router problem; its `type` URI is `PROBLEM_TYPE_BASE + name`.
 *
 * @example
 * ```ts
 * import type { AdminProblemName } from 'express-service-accounts'
 *
 * const retryable = (name: AdminProblemName): boolean => name === 'service-unavailable'
 * ```
 */
export type AdminProblemName = keyof typeof PROBLEMS;

/** Every problem name, in the order docs/errors.md lists them. */
export const ADMIN_PROBLEM_NAMES = Object.keys(PROBLEMS) as AdminProblemName[];

/**
 * One failed check of a request body or query: a JSON Pointer (RFC 6901) into it, and what is wrong.
 *
 * @example
 * ```ts
 * import type { InvalidParam, ProblemDetails } from 'express-service-accounts'
 *
 * // A UI marking the fields the admin API refused.
 * const fieldErrors = (problem: ProblemDetails): Record<string, string> =>
 *   Object.fromEntries((problem.errors ?? []).map((e: InvalidParam) => [e.pointer.slice(1), e.detail]))
 * ```
 */
export interface InvalidParam {
  readonly pointer: string;
  readonly detail: string;
}

/**
 * The body of every error response of the admin router (RFC 9457 §3); `type` is one of the
 * documented problem types (docs/errors.md, "Admin API problems").
 *
 * @example
 * ```ts
 * import type { ProblemDetails } from 'express-service-accounts'
 *
 * const res = await fetch('/admin/service-accounts', { headers: { 'Content-Type': 'application/json' } })
 * if (!res.ok) {
 *   const problem = (await res.json()) as ProblemDetails
 *   if (problem.type.endsWith('#admin-unauthorized')) console.log('sign in again')
 * }
 * ```
 */
export interface ProblemDetails {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  /** For `invalid-request` from the schema checks: each failed check. */
  readonly errors?: readonly InvalidParam[];
}

/**
 * A refused admin router request. `detail` is public; `cause` is for the host's logs only.
 *
 * @example
 * ```ts
 * throw new AdminProblem('not-found', 'No service account has this client ID')
 * ```
 */
export class AdminProblem extends Error {
  readonly status: number;
  readonly title: string;
  readonly headers: Record<string, string>;
  readonly errors: readonly InvalidParam[] | undefined;

  constructor(
    readonly problem: AdminProblemName,
    detail: string,
    options: { headers?: Record<string, string>; errors?: readonly InvalidParam[]; cause?: unknown } = {},
  ) {
    super(detail, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = 'AdminProblem';
    this.status = PROBLEMS[problem].status;
    this.title = PROBLEMS[problem].title;
    this.headers = options.headers ?? {};
    this.errors = options.errors;
  }

  /** The RFC 9457 body. */
  toJSON(): ProblemDetails {
    return {
      type: PROBLEM_TYPE_BASE + this.problem,
      title: this.title,
      status: this.status,
      detail: this.message,
      ...(this.errors && { errors: this.errors }),
    };
  }
}

/** The one answer for a client ID the actor may not see, whether it exists elsewhere or nowhere. */
export const accountNotVisible = (): AdminProblem => new AdminProblem('not-found', 'No service account has this client ID');

const FROM_ADMIN_ERROR: Record<AdminErrorCode, (err: AdminError) => AdminProblem> = {
  invalid_input: (err) => new AdminProblem('invalid-request', err.message, { cause: err }),
  account_not_found: (err) => new AdminProblem('not-found', 'No service account has this client ID', { cause: err }),
  secret_not_found: (err) => new AdminProblem('not-found', 'This service account has no secret with this ID', { cause: err }),
  secret_limit_reached: (err) => new AdminProblem('secret-limit-reached', err.message, { cause: err }),
  credential_limit_reached: (err) => new AdminProblem('secret-limit-reached', err.message, { cause: err }),
  key_not_found: (err) => new AdminProblem('not-found', 'This service account has no key with this ID', { cause: err }),
  key_already_registered: (err) => new AdminProblem('invalid-request', err.message, { cause: err }),
  federated_credential_not_found: (err) => new AdminProblem('not-found', 'This service account has no federated credential with this ID', { cause: err }),
  federated_credential_already_registered: (err) => new AdminProblem('invalid-request', err.message, { cause: err }),
  // RFC 9110 §15.6.2: the server does not support what the request needs. The message names what the
  // host's store lacks, and nothing else.
  not_supported: (err) => new AdminProblem('not-implemented', err.message, { cause: err }),
};

/**
 * Maps anything thrown while answering to a problem: admin API refusals to their 4xx (or 501 for what
 * the store cannot hold), a store outage
 * to 503, anything else to a 500 that says nothing more.
 *
 * @example
 * ```ts
 * sendProblem(res, toAdminProblem(err))
 * ```
 */
export function toAdminProblem(err: unknown): AdminProblem {
  if (err instanceof AdminProblem) return err;
  if (err instanceof AdminError) return FROM_ADMIN_ERROR[err.code](err);
  if (err instanceof StoreUnavailableError) {
    return new AdminProblem('service-unavailable', 'The account store is not answering; try again shortly', {
      headers: { 'Retry-After': '1' },
      cause: err,
    });
  }
  return new AdminProblem('server-error', 'The request could not be completed', { cause: err });
}

/**
 * Writes a problem as the response: its status, its headers, `application/problem+json`.
 *
 * @example
 * ```ts
 * sendProblem(res, new AdminProblem('unsupported-media-type', 'Send application/json'))
 * ```
 */
export function sendProblem(res: ServerResponse, problem: AdminProblem): void {
  res.statusCode = problem.status;
  for (const [name, value] of Object.entries(problem.headers)) res.setHeader(name, value);
  // As RFC 9457 §3 shows it: JSON is UTF-8 (RFC 8259 §8.1), and the media type defines no charset.
  res.setHeader('Content-Type', 'application/problem+json');
  res.end(JSON.stringify(problem.toJSON()));
}
