/**
 * @module admin-route
 * What one operation of the admin router is, as data: method, path, schemas, documented answers and
 * handler (the table itself is admin-routes.ts).
 */
import type { TSchema } from '@sinclair/typebox';
import type { AdminProblemName } from './admin-problem.js';
import type { ScopedAdminApi } from './tenant-scope.js';

/** What a handler gets: the scoped admin API, the path parameters, the checked body and query. */
export interface RouteCall {
  readonly admin: ScopedAdminApi;
  readonly params: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly query: unknown;
  /** The request's path as the client sent it (mount included), for `Location` and `Link`. */
  readonly path: string;
}

/** What a handler answers: always JSON. */
export interface RouteResult {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

/**
 * One operation.
 *
 * @example
 * ```ts
 * import { ADMIN_ROUTES } from './admin-routes.js'
 *
 * const route = ADMIN_ROUTES.find((r: AdminRoute) => r.operationId === 'listServiceAccounts')
 * ```
 */
export interface AdminRoute {
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** Relative to the mount, with `{param}` segments (the OpenAPI path template). */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly description: string;
  /** The body's schema; an operation without one accepts no body or `{}`. */
  readonly body?: TSchema;
  /** Whether the body may be left out altogether (then the handler gets `undefined`). */
  readonly bodyOptional?: boolean;
  readonly query?: TSchema;
  readonly success: {
    readonly status: number;
    readonly description: string;
    readonly schema: TSchema;
    /** Documented response headers besides `Cache-Control`. */
    readonly headers?: readonly ('Location' | 'Link')[];
  };
  /** The problems it may answer besides those every operation may (401, 403, 500, 503). */
  readonly problems: readonly AdminProblemName[];
  handle(call: RouteCall): Promise<RouteResult>;
}

/** The problems an operation that changes an account may answer besides those every operation may. */
export const CHANGE_PROBLEMS: readonly AdminProblemName[] = ['invalid-request', 'not-found', 'unsupported-media-type', 'payload-too-large', 'cross-origin-request'];
