/**
 * Checks responses of the admin router against its committed OpenAPI document (docs/admin-openapi.json):
 * the operation exists for the method and path, the status is documented, and the media type, the
 * documented headers and the body match (the body with Ajv, a JSON Schema 2020-12 validator independent
 * of the TypeBox checks the router itself runs). `adminClient(app)` sends requests and checks each answer.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Express } from 'express';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import request from 'supertest';
import { expect } from 'vitest';

type Json = Record<string, any>;

export const COMMITTED_DOCUMENT_PATH = resolve(__dirname, '..', '..', 'docs', 'admin-openapi.json');
const document = JSON.parse(readFileSync(COMMITTED_DOCUMENT_PATH, 'utf8')) as Json;

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(document, 'admin-openapi.json');

/** Response headers a client acts on; each must be documented where the router sends it. */
const MEANINGFUL_HEADERS = ['location', 'link', 'allow', 'retry-after', 'www-authenticate'] as const;

const pointer = (...segments: string[]): string =>
  segments.map((s) => `/${encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))}`).join('');

const TEMPLATES = Object.keys(document.paths as Json).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}/?$`),
}));

/** The document's path template for a request path (query dropped), or undefined. */
export function templateOf(path: string): string | undefined {
  const bare = path.split('?')[0]!;
  return TEMPLATES.find(({ pattern }) => pattern.test(bare))?.template;
}

/** Whether the document has an operation for this method on this path (HEAD counts as GET). */
export function hasOperation(method: string, path: string): boolean {
  const template = templateOf(path);
  const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  return template !== undefined && (document.paths as Json)[template][verb] !== undefined;
}

/** Throws (a failed expectation) unless the response is one the document describes. */
export function expectDocumented(method: string, path: string, res: request.Response): void {
  const template = templateOf(path);
  expect(template, `${method} ${path}: no path of the document matches`).toBeDefined();
  const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  const operation = (document.paths as Json)[template!][verb] as Json | undefined;
  expect(operation, `${method} ${template}: not in the document`).toBeDefined();
  const response = operation!.responses[String(res.status)] as Json | undefined;
  expect(response, `${method} ${template}: status ${res.status} is not documented`).toBeDefined();
  for (const [name, header] of Object.entries((response!.headers ?? {}) as Json)) {
    const value = res.headers[name.toLowerCase()];
    if (header.schema?.const !== undefined) expect(value, `${method} ${template} ${res.status}: header ${name}`).toBe(header.schema.const);
  }
  // A header a client acts on must be in the document when the answer carries it.
  const documentedHeaders = Object.keys((response!.headers ?? {}) as Json).map((name) => name.toLowerCase());
  for (const name of MEANINGFUL_HEADERS) {
    if (res.headers[name] !== undefined) expect(documentedHeaders, `${method} ${template} ${res.status}: header ${name} is not documented`).toContain(name);
  }
  const content = response!.content as Json | undefined;
  if (!content || method.toLowerCase() === 'head') {
    if (!content) expect(res.text ?? '', `${method} ${template} ${res.status}: documented without a body`).toBe('');
    return;
  }
  const mediaType = String(res.headers['content-type'] ?? '').split(';')[0]!.trim();
  expect(Object.keys(content), `${method} ${template} ${res.status}: media type`).toContain(mediaType);
  const schemaPath = pointer('paths', template!, verb, 'responses', String(res.status), 'content', mediaType, 'schema');
  const validate = ajv.getSchema(`admin-openapi.json#${schemaPath}`);
  expect(validate, `no schema at ${schemaPath}`).toBeDefined();
  const body: unknown = JSON.parse(res.text);
  const valid = validate!(body);
  expect(valid, `${method} ${template} ${res.status}: ${ajv.errorsText(validate!.errors)}\n${res.text}`).toBe(true);
  // A problem's type is one the document names for that status of that operation.
  if (mediaType === 'application/problem+json') {
    expect(response!.description, `${method} ${template} ${res.status}: problem type not documented`).toContain(`\`${(body as { type: string }).type}\``);
  }
}

export interface SendOptions {
  token?: string;
  /** A JSON body (sent as application/json unless `type` says otherwise). */
  body?: unknown;
  /** A raw body, sent as is with `type`. */
  raw?: string;
  type?: string;
  headers?: Record<string, string>;
}

/** Sends requests to an app and checks every answer against the document. */
export function adminClient(app: Express) {
  const send = async (method: 'GET' | 'HEAD' | 'POST' | 'DELETE' | 'OPTIONS' | 'PUT' | 'PATCH', path: string, options: SendOptions = {}): Promise<request.Response> => {
    let req = request(app)[method.toLowerCase() as 'get'](path);
    if (options.token !== undefined) req = req.set('Authorization', `Bearer ${options.token}`);
    for (const [name, value] of Object.entries(options.headers ?? {})) req = req.set(name, value);
    if (options.type !== undefined) req = req.type(options.type);
    if (options.raw !== undefined) req = req.send(options.raw);
    else if (options.body !== undefined) req = req.send(options.body as object);
    const res = await req;
    if (method !== 'PUT' && method !== 'PATCH') expectDocumented(method, path, res);
    return res;
  };
  return {
    send,
    get: (path: string, options?: SendOptions) => send('GET', path, options),
    post: (path: string, options?: SendOptions) => send('POST', path, options),
    delete: (path: string, options?: SendOptions) => send('DELETE', path, options),
    options: (path: string, options?: SendOptions) => send('OPTIONS', path, options),
  };
}
