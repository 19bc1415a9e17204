/**
 * @module admin-openapi
 * The admin router's OpenAPI 3.1 document, generated from the route table (admin-routes.ts) and the
 * schemas the router validates with (admin-schemas.ts): nothing in it is written twice. Its paths
 * include the mount path, so a validator can match a request URL to its operation as it is.
 * docs/admin-openapi.json is this document for the mount `/admin`.
 */
import type { TSchema } from '@sinclair/typebox';
import { AdminProblem, PROBLEM_TYPE_BASE, type AdminProblemName } from './admin-problem.js';
import type { AdminRoute } from './admin-route.js';
import { ADMIN_ROUTES } from './admin-routes.js';
import {
  AccountPageSchema,
  AccountStatusSchema,
  AccountSummarySchema,
  AddFederatedCredentialBodySchema,
  AddKeyBodySchema,
  AddSecretBodySchema,
  CreateAccountBodySchema,
  CreatedAccountSchema,
  CreatedFederatedCredentialSchema,
  CreatedKeySchema,
  CreatedSecretSchema,
  EmptyBodySchema,
  FederatedCredentialSummarySchema,
  ProblemSchema,
  RevokedFederatedCredentialSchema,
  RevokedKeySchema,
  RevokedSecretSchema,
  SecretSummarySchema,
  KeySummarySchema,
  StaleCredentialSchema,
} from './admin-schemas.js';

type Json = Record<string, unknown>;

/** The schemas published under `components.schemas`, each named by its `title`. */
const COMPONENTS: readonly TSchema[] = [
  AccountSummarySchema,
  AccountPageSchema,
  SecretSummarySchema,
  CreatedAccountSchema,
  CreatedSecretSchema,
  RevokedSecretSchema,
  KeySummarySchema,
  CreatedKeySchema,
  RevokedKeySchema,
  FederatedCredentialSummarySchema,
  CreatedFederatedCredentialSchema,
  RevokedFederatedCredentialSchema,
  AccountStatusSchema,
  CreateAccountBodySchema,
  AddKeyBodySchema,
  AddFederatedCredentialBodySchema,
  AddSecretBodySchema,
  StaleCredentialSchema,
  EmptyBodySchema,
  ProblemSchema,
];
const NAMES: ReadonlySet<string> = new Set(COMPONENTS.map((schema) => String(schema.title)));

/** Problems any operation may answer, whatever it does. */
const EVERY_OPERATION: readonly AdminProblemName[] = ['unauthorized', 'forbidden', 'server-error', 'service-unavailable'];

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

/** A schema as plain JSON, with named schemas below its top replaced by references. */
function plain(schema: unknown, top = true): unknown {
  if (Array.isArray(schema)) return schema.map((item) => plain(item, false));
  if (typeof schema !== 'object' || schema === null) return schema;
  const title = (schema as { title?: unknown }).title;
  if (!top && typeof title === 'string' && NAMES.has(title)) return ref(title);
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, plain(value, false)]));
}

const schemaRef = (schema: TSchema): Json => plain(schema, false) as Json;

const noStore = { description: 'Always `no-store`: answers may hold secrets and per-person data.', schema: { type: 'string', const: 'no-store' } };
const HEADERS: Record<'Location' | 'Link', Json> = {
  Location: { description: 'The new account’s address.', schema: { type: 'string' } },
  Link: { description: 'The next page, as `<address>; rel="next"` (RFC 8288); absent on the last page.', schema: { type: 'string' } },
};

/** The headers some problems carry besides `Cache-Control`, by status. */
const PROBLEM_HEADERS: Readonly<Record<number, Json>> = {
  401: {
    'WWW-Authenticate': {
      description: 'The router’s `challenge` option (such as `Bearer realm="admin"`); absent when the host set none.',
      schema: { type: 'string' },
    },
  },
  503: { 'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'string' } } },
};

function problemResponses(names: readonly AdminProblemName[]): Json {
  const byStatus = new Map<number, AdminProblem[]>();
  for (const name of new Set([...names, ...EVERY_OPERATION])) {
    const problem = new AdminProblem(name, '');
    byStatus.set(problem.status, [...(byStatus.get(problem.status) ?? []), problem]);
  }
  const statuses = [...byStatus.keys()].sort((a, b) => a - b);
  return Object.fromEntries(
    statuses.map((status) => [
      String(status),
      {
        description: byStatus.get(status)!.map((p) => `${p.title} (\`${PROBLEM_TYPE_BASE}${p.problem}\`)`).join('; '),
        headers: { 'Cache-Control': noStore, ...PROBLEM_HEADERS[status] },
        content: { 'application/problem+json': { schema: ref('Problem') } },
      },
    ]),
  );
}

function operation(route: AdminRoute, pathParams: readonly string[]): Json {
  const query = route.query?.properties as Record<string, Json & { description?: string }> | undefined;
  const parameters = [
    ...pathParams.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
    ...Object.entries(query ?? {}).map(([name, schema]) => ({
      name,
      in: 'query',
      required: false,
      ...(schema.description && { description: schema.description }),
      schema: plain(schema),
    })),
  ];
  const body =
    route.body !== undefined
      ? { required: route.bodyOptional !== true, content: { 'application/json': { schema: schemaRef(route.body) } } }
      : route.method === 'POST'
        ? { required: false, description: 'None, or an empty JSON object.', content: { 'application/json': { schema: ref('EmptyRequest') } } }
        : undefined;
  const { success } = route;
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: route.description,
    tags: ['service-accounts'],
    ...(parameters.length > 0 && { parameters }),
    ...(body && { requestBody: body }),
    responses: {
      [String(success.status)]: {
        description: success.description,
        headers: { 'Cache-Control': noStore, ...Object.fromEntries((success.headers ?? []).map((name) => [name, HEADERS[name]])) },
        content: { 'application/json': { schema: schemaRef(success.schema) } },
      },
      ...problemResponses(route.problems),
    },
  };
}

const preflight = (allow: string): Json => ({
  summary: 'Allowed methods',
  description: 'Answers with `Allow` and no CORS headers: browsers on other origins may not call this API.',
  tags: ['service-accounts'],
  responses: { '204': { description: `No content; \`Allow: ${allow}\`.`, headers: { Allow: { schema: { type: 'string' } } } } },
});

/** The `Allow` header of `{mount}/openapi.json`. */
export const DOCUMENT_ALLOW = 'GET, HEAD, OPTIONS';

/**
 * The `Allow` header of a path: its methods, `HEAD` with `GET`, and `OPTIONS`.
 *
 * @example
 * ```ts
 * import { ADMIN_ROUTES } from './admin-routes.js'
 *
 * allowHeader(ADMIN_ROUTES.filter((route) => route.path === '/service-accounts')) // 'GET, HEAD, POST, OPTIONS'
 * ```
 */
export function allowHeader(routes: readonly AdminRoute[]): string {
  const methods = routes.flatMap((route) => (route.method === 'GET' ? ['GET', 'HEAD'] : [route.method]));
  return [...methods, 'OPTIONS'].join(', ');
}

/**
 * Builds the OpenAPI 3.1 document of the admin router mounted at `mountPath`.
 *
 * @example
 * ```ts
 * import { writeFileSync } from 'node:fs'
 * import { buildAdminOpenApiDocument } from 'express-service-accounts'
 *
 * writeFileSync('admin-openapi.json', JSON.stringify(buildAdminOpenApiDocument({ mountPath: '/admin' }), null, 2))
 * ```
 */
export function buildAdminOpenApiDocument(options: { mountPath?: string } = {}): Json {
  const mount = (options.mountPath ?? '/admin').replace(/\/+$/, '');
  const paths: Record<string, Json> = {};
  for (const path of new Set(ADMIN_ROUTES.map((route) => route.path))) {
    const routes = ADMIN_ROUTES.filter((route) => route.path === path);
    const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    paths[mount + path] = {
      ...Object.fromEntries(routes.map((route) => [route.method.toLowerCase(), operation(route, pathParams)])),
      options: { ...preflight(allowHeader(routes)), ...(pathParams.length > 0 && { parameters: pathParams.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })) }) },
    };
  }
  paths[`${mount}/openapi.json`] = {
    get: {
      operationId: 'getAdminOpenApiDocument',
      summary: 'This document',
      description: 'The OpenAPI 3.1 document of this API. Served to anyone: it describes the API’s shape only.',
      tags: ['service-accounts'],
      responses: { '200': { description: 'The document.', headers: { 'Cache-Control': noStore }, content: { 'application/json': { schema: { type: 'object' } } } } },
    },
    options: preflight(DOCUMENT_ALLOW),
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Service accounts admin API',
      version: '1.0.0',
      description:
        'Self-service management of service accounts, scoped to the caller’s client account. The host application ' +
        'authenticates callers (its own login) before this API runs. Errors are RFC 9457 problem details whose `type`s ' +
        `are documented at ${PROBLEM_TYPE_BASE.replace(/#admin-$/, '')}.`,
    },
    tags: [{ name: 'service-accounts', description: 'Service accounts, their secrets, public keys and federated credentials.' }],
    paths,
    components: {
      schemas: Object.fromEntries(COMPONENTS.map((schema) => [String(schema.title), plain(schema)])),
    },
  };
}
