/**
 * @module token-request-body
 * Parses token request bodies (form and JSON) with a size limit, whether or not the host app already
 * mounted its own parsers, on Express 4 and 5. Every parse failure is a 400 (413 over the limit)
 * `invalid_request`, never a 500 or an HTML page.
 */
import bodyParser from 'body-parser';
import { InvalidRequestError } from '../errors.js';
import type { Middleware, TokenHttpRequest } from './token-request.js';

const rawJson = new WeakMap<object, string>();

/** The raw JSON text of a body this module parsed (for the duplicate-key check). */
export function getRawJson(req: object): string | undefined {
  return rawJson.get(req);
}

/** Whether an error comes from a body parser (ours or the host's): those carry a `type` like `entity.parse.failed`. */
export function isBodyParserError(err: unknown): boolean {
  const type = (err as { type?: unknown } | null)?.type;
  return typeof type === 'string' && /^(entity|request|charset|encoding|parameters|stream)\./.test(type);
}

/** Maps a body parser's error to 413 (too large) or 400 `invalid_request`. */
export function toBodyError(err: unknown): InvalidRequestError {
  const e = err as { status?: number; type?: string };
  if (e.status === 413 || e.type === 'entity.too.large' || e.type === 'parameters.too.many') {
    return new InvalidRequestError('The request body is too large', { status: 413, cause: err });
  }
  if (e.type === 'entity.parse.failed') return new InvalidRequestError('The request body is not valid JSON', { cause: err });
  if (e.type === 'charset.unsupported' || e.type === 'encoding.unsupported') {
    return new InvalidRequestError('The request body uses an unsupported charset or encoding', { cause: err });
  }
  return new InvalidRequestError('The request body could not be read', { cause: err });
}

function hasBody(req: TokenHttpRequest): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Whether an earlier parser (the host's) already consumed the body. */
function alreadyParsed(req: TokenHttpRequest): boolean {
  // body-parser 1 (Express 4) sets _body; body-parser 2 (Express 5) leaves the stream consumed.
  return req._body === true || req.readableEnded;
}

/**
 * Returns the body-parsing middleware of the token endpoint.
 * @param limit largest body in bytes
 */
export function createTokenBodyParser(limit: number): Middleware {
  const json = bodyParser.json({
    limit,
    strict: true,
    type: ['application/json', 'application/*+json'],
    verify: (req, _res, buf) => {
      rawJson.set(req, buf.toString('utf8'));
    },
  }) as unknown as Middleware;
  const form = bodyParser.urlencoded({
    limit,
    extended: false,
    parameterLimit: 100,
    type: 'application/x-www-form-urlencoded',
  }) as unknown as Middleware;

  return (req, res, next) => {
    // Checked first: a body the host's own parser (with its own, larger limit) already read is still ours to refuse.
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) {
      next(new InvalidRequestError('The request body is too large', { status: 413 }));
      return;
    }
    if (alreadyParsed(req)) {
      if (req.body === undefined || req.body === null) req.body = {};
      next();
      return;
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    const parser = type === 'application/x-www-form-urlencoded' ? form : /^application\/([a-z0-9.+-]+\+)?json$/.test(type) ? json : undefined;
    if (!parser) {
      if (hasBody(req)) {
        next(new InvalidRequestError('Unsupported content type; send application/x-www-form-urlencoded or application/json'));
        return;
      }
      req.body = {};
      next();
      return;
    }
    parser(req, res, (err?: unknown) => {
      if (err) next(toBodyError(err));
      else {
        if (req.body === undefined) req.body = {};
        next();
      }
    });
  };
}

/**
 * Whether a JSON text has an object at its top level with the same key twice (JSON.parse would keep
 * the last silently; RFC 6749 §3.2 forbids repeated parameters).
 */
export function hasDuplicateTopLevelKeys(text: string): boolean {
  const keys = new Set<string>();
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (depth === 1 && expectKey) {
        let key: string;
        try {
          key = JSON.parse(text.slice(i, j + 1)) as string;
        } catch {
          return false;
        }
        if (keys.has(key)) return true;
        keys.add(key);
        expectKey = false;
      }
      i = j;
    } else if (c === '{' || c === '[') {
      depth++;
      expectKey = depth === 1 && c === '{';
    } else if (c === '}' || c === ']') depth--;
    else if (c === ',' && depth === 1) expectKey = true;
  }
  return false;
}
