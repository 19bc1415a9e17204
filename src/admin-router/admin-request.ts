/**
 * @module admin-request
 * What the admin router accepts from a request, checked before anything runs: only `application/json`
 * bodies (UTF-8, at most 16 KiB), so an HTML form on another site, which can only send
 * `application/x-www-form-urlencoded`, `multipart/form-data` or `text/plain`, never reaches an
 * operation; a request without a body and without a media type, which a cross-site `fetch()` can send
 * without a CORS preflight, only when the browser does not mark it cross-origin; and bodies and
 * queries that match their JSON Schema (admin-schemas.ts).
 */
import type { IncomingMessage } from 'node:http';
import { parse as parseContentType } from 'content-type';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { isCrossOriginRequest } from '../cross-origin-request.js';
import { alreadyParsed, collectBody, hasBody, parsedSize } from '../token-endpoint/token-request-body.js';
import { AdminProblem } from './admin-problem.js';

/** The largest body accepted, in bytes. */
export const ADMIN_BODY_LIMIT = 16 * 1024;

type AdminHttpRequest = IncomingMessage & { body?: unknown; _body?: unknown };

const unsupported = (detail: string): AdminProblem => new AdminProblem('unsupported-media-type', detail);

/**
 * Refuses a request to change something unless its body is JSON: 415 `unsupported-media-type` for any
 * other media type (even with an empty body), a charset other than UTF-8, a `Content-Encoding`, or a
 * body without a media type; 403 `cross-origin-request` for a request without body or media type that
 * a browser marks cross-origin. Resolves whether the request carries JSON.
 *
 * @example
 * ```ts
 * const body = checkMediaType(req) ? await readJsonBody(req) : undefined
 * ```
 */
export function checkMediaType(req: IncomingMessage): boolean {
  const header = req.headers['content-type'];
  if (header === undefined) {
    if (hasBody(req)) throw unsupported('Send the request body as application/json');
    if (isCrossOriginRequest(req)) {
      throw new AdminProblem('cross-origin-request', 'This request came from another site; send it with Content-Type: application/json');
    }
    return false;
  }
  let type: string;
  let charset: string | undefined;
  try {
    const parsed = parseContentType(header);
    type = parsed.type;
    charset = parsed.parameters.charset?.toLowerCase();
  } catch {
    throw unsupported('Send the request body as application/json');
  }
  if (type !== 'application/json') throw unsupported('Send the request body as application/json');
  if (charset !== undefined && charset !== 'utf-8') throw unsupported('Send the request body as UTF-8 JSON');
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') throw unsupported('Send the request body without Content-Encoding');
  return true;
}

/**
 * Reads a JSON body (or takes what the host's own `express.json()` made of it). Resolves `undefined`
 * for an empty body; rejects with 413 `payload-too-large` or 400 `invalid-request` for text that is
 * not JSON.
 *
 * @example
 * ```ts
 * const body = await readJsonBody(req)
 * ```
 */
export function readJsonBody(req: AdminHttpRequest): Promise<unknown> {
  const tooLarge = () => new AdminProblem('payload-too-large', `The body may be at most ${ADMIN_BODY_LIMIT} bytes`);
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > ADMIN_BODY_LIMIT) return Promise.reject(tooLarge());
  if (alreadyParsed(req)) {
    const body = req.body;
    // A parser that found no body leaves {} (Express 4) or undefined (Express 5).
    const empty = body === undefined || (!hasBody(req) && typeof body === 'object' && body !== null && Object.keys(body).length === 0);
    // A chunked body declared no length, and the host's parser (whose limit is its own) read it: what
    // it parsed (never longer than the text sent) must fit.
    if (!empty && req.headers['content-length'] === undefined && parsedSize(body, ADMIN_BODY_LIMIT) > ADMIN_BODY_LIMIT) {
      return Promise.reject(tooLarge());
    }
    return Promise.resolve(empty ? undefined : body);
  }
  if (!hasBody(req)) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    collectBody(req, ADMIN_BODY_LIMIT, (err, text = '') => {
      if (err) {
        const name = err.status === 413 ? 'payload-too-large' : 'invalid-request';
        return reject(new AdminProblem(name, err.status === 413 ? `The body may be at most ${ADMIN_BODY_LIMIT} bytes` : err.message, { cause: err }));
      }
      if (text.trim() === '') return resolve(undefined);
      try {
        resolve(JSON.parse(text.replace(/^\uFEFF/, '')));
      } catch (cause) {
        reject(new AdminProblem('invalid-request', 'The request body is not valid JSON', { cause }));
      }
    });
  });
}

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/**
 * Checks a value against its schema; a 400 `invalid-request` problem lists each failed check as a
 * JSON Pointer and a message (never the value, which may be a pasted secret).
 *
 * @example
 * ```ts
 * import { CreateAccountBodySchema, type CreateAccountBody } from './admin-schemas.js'
 *
 * const body = await readJsonBody(req)
 * const input = validate<CreateAccountBody>(CreateAccountBodySchema, body, 'The request body')
 * ```
 */
export function validate<T>(schema: TSchema, value: unknown, what: string): T {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  if (check.Check(value)) return value as T;
  const errors = [...check.Errors(value)].slice(0, 10).map((error) => ({ pointer: error.path, detail: error.message }));
  throw new AdminProblem('invalid-request', `${what} does not match its schema`, { errors });
}
