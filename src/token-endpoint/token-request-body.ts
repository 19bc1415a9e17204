/**
 * @module token-request-body
 * Reads and parses token request bodies (form and JSON) with a size limit, whether or not the host app
 * already mounted its own parsers, on Express 4 and 5. Every failure is a 400 (413 over the limit)
 * `invalid_request`, never a 500 or an HTML page. A JSON body the host's parser read first cannot be
 * checked for repeated keys: the host is warned once (docs/token-endpoint.md, "Your own body parsers").
 *
 * A token request is four short UTF-8 fields, so the reader is deliberately small: the body is
 * collected up to the limit, then parsed by `URLSearchParams` or `JSON.parse` into an object without
 * a prototype, with repeated parameters kept as arrays for the guards to refuse.
 */
import { InvalidRequestError } from '../errors.js';
import type { ServerResponse } from 'node:http';
import type { TokenHttpRequest } from './token-request-context.js';

type Middleware = (req: TokenHttpRequest, res: ServerResponse, next: (err?: unknown) => void) => void;

const rawJson = new WeakMap<object, string>();

/** The raw JSON text of a body this module parsed (for the duplicate-key check). */
export function getRawJson(req: object): string | undefined {
  return rawJson.get(req);
}

/** Whether an error comes from a host's body parser: those carry a `type` like `entity.parse.failed`. */
export function isBodyParserError(err: unknown): boolean {
  const type = (err as { type?: unknown } | null)?.type;
  return typeof type === 'string' && /^(entity|request|charset|encoding|parameters|stream)\./.test(type);
}

const tooLarge = (cause?: unknown): InvalidRequestError =>
  new InvalidRequestError('The request body is too large', { status: 413, ...(cause !== undefined ? { cause } : {}) });
const notJson = (cause?: unknown): InvalidRequestError =>
  new InvalidRequestError('The request body is not valid JSON', cause !== undefined ? { cause } : {});
const unsupportedEncoding = (cause?: unknown): InvalidRequestError =>
  new InvalidRequestError('The request body uses an unsupported charset or encoding', cause !== undefined ? { cause } : {});

/** Maps a host body parser's error to 413 (too large) or 400 `invalid_request`. */
export function toBodyError(err: unknown): InvalidRequestError {
  const e = err as { status?: number; type?: string };
  if (e.status === 413 || e.type === 'entity.too.large' || e.type === 'parameters.too.many') return tooLarge(err);
  if (e.type === 'entity.parse.failed') return notJson(err);
  if (e.type === 'charset.unsupported' || e.type === 'encoding.unsupported') return unsupportedEncoding(err);
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

/** The code of the warning below, for `process.on('warning')` listeners. */
export const BODY_ALREADY_PARSED_WARNING = 'ESA_TOKEN_BODY_ALREADY_PARSED';
let warnedAlreadyParsed = false;

/**
 * Warns once per process that a JSON token request reached us already parsed by another body parser.
 * JSON.parse keeps the last of repeated keys and body-parser (express.json() on Express 4 and 5)
 * keeps no copy of the text, so a repeated parameter (RFC 6749 §3.2) can no longer be refused.
 * Form bodies lose nothing: their parsers keep repeated names as arrays, which the guards refuse.
 */
function warnJsonAlreadyParsed(): void {
  if (warnedAlreadyParsed) return;
  warnedAlreadyParsed = true;
  process.emitWarning(
    'A JSON token request reached the token router already parsed by another body parser (such as express.json()), ' +
      'so a repeated parameter in it cannot be refused. Mount the token router before your body parsers ' +
      '(see "Your own body parsers" in docs/token-endpoint.md).',
    { type: 'ExpressServiceAccountsWarning', code: BODY_ALREADY_PARSED_WARNING },
  );
}

/**
 * A lower bound of the size in bytes of the body a host's parser read, from what it parsed (the
 * parameters' names and values); counting stops once past `limit`.
 */
function parsedSize(value: unknown, limit: number, depth = 0): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value !== 'object' || value === null) return String(value).length;
  if (depth > 32) return limit + 1;
  let size = 0;
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    size += Buffer.byteLength(key) + 2 + parsedSize((value as Record<string, unknown>)[key], limit - size, depth + 1);
    if (size > limit) break;
  }
  return size;
}

/** Most parameters a form body may carry; a token request has four. */
const MAX_PARAMETERS = 100;

type BodyKind = 'form' | 'json';

/** The body's kind from its media type, or an error for a charset other than UTF-8 (RFC 6749 App. B). */
function bodyKind(contentType: string | undefined): BodyKind | undefined | InvalidRequestError {
  if (contentType === undefined) return undefined;
  const [type = '', ...parameters] = contentType.split(';');
  const media = type.trim().toLowerCase();
  const kind: BodyKind | undefined =
    media === 'application/x-www-form-urlencoded' ? 'form' : /^application\/([a-z0-9.+-]+\+)?json$/.test(media) ? 'json' : undefined;
  if (kind === undefined) return undefined;
  for (const parameter of parameters) {
    const [name = '', value = ''] = parameter.split('=');
    if (name.trim().toLowerCase() !== 'charset') continue;
    const charset = value.trim().replace(/^"(.*)"$/, '$1').toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') return unsupportedEncoding();
  }
  return kind;
}

/** Collects the body up to `limit` bytes; past it, reports 413 at once and discards the rest. */
function readBody(req: TokenHttpRequest, limit: number, done: (err: InvalidRequestError | undefined, text?: string) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  // The listeners stay until the stream ends; once finished they do nothing, and past the limit the
  // data listener keeps the stream flowing, discarding the rest so the connection stays usable.
  const finish = (err: InvalidRequestError | undefined, text?: string): void => {
    if (finished) return;
    finished = true;
    chunks.length = 0;
    done(err, text);
  };
  const onData = (chunk: Buffer): void => {
    if (finished) return;
    size += chunk.length;
    if (size > limit) return finish(tooLarge());
    chunks.push(chunk);
  };
  const onEnd = (): void => {
    if (finished) return;
    finish(undefined, (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)).toString('utf8'));
  };
  const onError = (cause: unknown): void => finish(new InvalidRequestError('The request body could not be read', { cause }));
  const onAborted = (): void => finish(new InvalidRequestError('The request was aborted'));
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
  req.on('aborted', onAborted);
}

/** Form parameters into an object without a prototype; a repeated name becomes an array. */
function parseForm(text: string): Record<string, string | string[]> | InvalidRequestError {
  const body = Object.create(null) as Record<string, string | string[]>;
  let count = 0;
  for (const [name, value] of new URLSearchParams(text)) {
    if (++count > MAX_PARAMETERS) return tooLarge();
    const seen = body[name];
    body[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return body;
}

/** A JSON object or array (what body-parser's `strict` mode accepts); an empty body is `{}`. */
function parseJson(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return {};
  if (trimmed[0] !== '{' && trimmed[0] !== '[') return notJson();
  try {
    return JSON.parse(trimmed) as unknown;
  } catch (cause) {
    return notJson(cause);
  }
}

/**
 * Returns the body-reading middleware of the token endpoint.
 * @param limit largest body in bytes
 */
export function createTokenBodyParser(limit: number): Middleware {
  return (req, _res, next) => {
    // Checked first: a body the host's own parser (with its own, larger limit) already read is still ours to refuse.
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) {
      next(tooLarge());
      return;
    }
    if (alreadyParsed(req)) {
      if (bodyKind(req.headers['content-type']) === 'json') warnJsonAlreadyParsed();
      if (req.body === undefined || req.body === null) req.body = {};
      // A chunked body declares no length: judge what the host's parser made of it instead.
      if (declared === undefined && parsedSize(req.body, limit) > limit) {
        next(tooLarge());
        return;
      }
      next();
      return;
    }
    const kind = bodyKind(req.headers['content-type']);
    if (kind instanceof InvalidRequestError) {
      next(kind);
      return;
    }
    if (kind === undefined) {
      if (hasBody(req)) {
        next(new InvalidRequestError('Unsupported content type; send application/x-www-form-urlencoded or application/json'));
        return;
      }
      req.body = {};
      next();
      return;
    }
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      next(unsupportedEncoding());
      return;
    }
    readBody(req, limit, (err, text = '') => {
      if (err) return next(err);
      if (kind === 'json') rawJson.set(req, text);
      const body = kind === 'form' ? parseForm(text) : parseJson(text);
      if (body instanceof InvalidRequestError) return next(body);
      req.body = body;
      next();
    });
  };
}

/**
 * Whether a JSON text has an object at its top level with the same key twice (JSON.parse would keep
 * the last silently; RFC 6749 §3.2 forbids repeated parameters).
 */
export function hasDuplicateTopLevelKeys(text: string): boolean {
  // Only an object has keys: in a top-level array, the strings after its commas are elements.
  if (text.trimStart()[0] !== '{') return false;
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
