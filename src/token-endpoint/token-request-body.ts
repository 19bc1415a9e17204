/**
 * @module token-request-body
 * Reads and parses token request bodies (form and JSON) with a size limit, whether or not the host app
 * already mounted its own parsers, on Express 4 and 5. Every failure is a 400 (413 over the limit)
 * `invalid_request`, never a 500 or an HTML page. A JSON body the host's parser read first cannot be
 * checked for repeated keys: the host is warned once (docs/token-endpoint.md, "Your own body parsers").
 *
 * A token request is four short UTF-8 fields, so the reader does one pass: `content-type` parses the
 * header, {@link collectBody} collects the stream up to the limit and decodes it as UTF-8 once, then
 * `URLSearchParams` or `JSON.parse` turns the text into the parameters (a form into an object without
 * a prototype, a repeated name kept as an array for the guards to refuse; a JSON object repeating a
 * key is refused here, as `JSON.parse` would keep the last value). The admin router reads its JSON
 * bodies with the same {@link collectBody}, {@link alreadyParsed} and {@link hasBody}.
 *
 * Why not `raw-body`: on the token endpoint it cost about 43,000–62,000 more instructions per request
 * (3–4%), and 79,000 through its promise form, with the same behaviour for a body this small (measured
 * with `npm run bench:instructions`, docs/performance.md). It builds an `AsyncResource` per call,
 * concatenates even a single chunk into a new buffer and removes its five listeners afterwards; V8 then
 * has more hot functions to optimize (`Buffer.concat`, the stream's `removeListener`, the async-hooks
 * helpers), which is where most of those instructions went.
 *
 * The success path refers to no error class: the parsers report a refusal as a value of their own
 * (`'charset'`, `undefined`), and an error is built only when one is sent.
 */
import { parse as parseContentType } from 'content-type';
import { InvalidRequestError, NOT_A_JSON_OBJECT_DESCRIPTION } from '../errors.js';
import type { TokenHttpRequest } from './request-guards.js';

/** 413 `invalid_request`: the body is over the limit. */
export const tooLarge = (cause?: unknown): InvalidRequestError =>
  new InvalidRequestError('The request body is too large', { status: 413, ...(cause !== undefined ? { cause } : {}) });

/** What `collectBody` reads: a request stream (`IncomingMessage`). */
export interface BodyStream {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end' | 'aborted', listener: () => void): unknown;
  on(event: 'error', listener: (err: unknown) => void): unknown;
}

/**
 * Collects the body as UTF-8 text up to `limit` bytes. Calls `done` once: with the text, or with 413
 * `invalid_request` past the limit (the rest is read and discarded), or 400 `invalid_request` when the
 * stream fails or the client aborts.
 */
export function collectBody(stream: BodyStream, limit: number, done: (err: InvalidRequestError | undefined, text?: string) => void): void {
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
    // One chunk (the usual case for a token request) is decoded as it is, without a copy.
    finish(undefined, (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)).toString('utf8'));
  };
  stream.on('data', onData);
  stream.on('end', onEnd);
  stream.on('error', (cause) => finish(new InvalidRequestError('The request body could not be read', { cause })));
  stream.on('aborted', () => finish(new InvalidRequestError('The request was aborted')));
}

/** 400 `invalid_request`: the body is not JSON. */
export const notJson = (cause?: unknown): InvalidRequestError =>
  new InvalidRequestError('The request body is not valid JSON', cause !== undefined ? { cause } : {});
/** 400 `invalid_request`: the body's charset is not UTF-8, or its `Content-Encoding` is not supported. */
export const unsupportedEncoding = (cause?: unknown): InvalidRequestError =>
  new InvalidRequestError('The request body uses an unsupported charset or encoding', cause !== undefined ? { cause } : {});

/**
 * Whether the request declares a body (a non-zero length, or chunked).
 * @example
 * ```ts
 * const empty = !hasBody(req) // no Transfer-Encoding, and no Content-Length or `Content-Length: 0`
 * ```
 */
export function hasBody(req: TokenHttpRequest): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Whether an earlier parser (the host's) already consumed the body.
 * @example
 * ```ts
 * if (alreadyParsed(req)) console.log(req.body) // what the host's express.json() or express.urlencoded() made of it
 * else collectBody(req, 4096, (err, text) => console.log(err ?? text)) // the stream is still unread
 * ```
 */
export function alreadyParsed(req: TokenHttpRequest): boolean {
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
 * parameters' names and values); counting stops once past `limit`, and a value nested deeper than
 * 32 levels counts as past it. Used by the token and admin routers for a chunked body (no
 * Content-Length) that the host's parser read under its own limit.
 * @example
 * ```ts
 * const tooLarge = parsedSize(req.body, 16_384) > 16_384 // answer 413
 * ```
 */
export function parsedSize(value: unknown, limit: number, depth = 0): number {
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

/** `application/json` and the `+json` structured syntax suffix types (RFC 6839 §3.1), such as `application/vnd.api+json`. */
const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json$/;
/** The charset labels of UTF-8 (RFC 6749 App. B), compared without case. */
const UTF8 = /^utf-?8$/i;

/** The body's kind from its media type, or `'charset'` for a charset other than UTF-8 (RFC 6749 App. B). */
function bodyKind(contentType: string | undefined): BodyKind | 'charset' | undefined {
  if (contentType === undefined) return undefined;
  // The media type comes lower-cased; a parameter named twice keeps its first value.
  const { type, parameters } = parseContentType(contentType);
  const kind: BodyKind | undefined = type === 'application/x-www-form-urlencoded' ? 'form' : JSON_TYPE.test(type) ? 'json' : undefined;
  if (kind === undefined) return undefined;
  const charset = parameters.charset;
  return charset === undefined || UTF8.test(charset) ? kind : 'charset';
}

/** Form parameters into an object without a prototype, a repeated name as an array; `undefined` past {@link MAX_PARAMETERS}. */
function parseForm(text: string): Record<string, string | string[]> | undefined {
  const body = Object.create(null) as Record<string, string | string[]>;
  let count = 0;
  for (const [name, value] of new URLSearchParams(text)) {
    if (++count > MAX_PARAMETERS) return undefined;
    const seen = body[name];
    body[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return body;
}

/**
 * Hands `done` a JSON object or array (what body-parser's `strict` mode accepts); an empty body is `{}`.
 * An object that repeats a key at its top level is refused (RFC 6749 §3.2), where `JSON.parse` keeps the last.
 */
function parseJson(text: string, done: (err: InvalidRequestError | undefined, body?: unknown) => void): void {
  const trimmed = text.trim();
  if (trimmed === '') return done(undefined, {});
  // A JSON number, string, true, false or null holds no parameters, like text that is no JSON at all.
  if (trimmed[0] !== '{' && trimmed[0] !== '[') return done(new InvalidRequestError(NOT_A_JSON_OBJECT_DESCRIPTION));
  let body: unknown;
  try {
    body = JSON.parse(trimmed) as unknown;
  } catch (cause) {
    return done(notJson(cause));
  }
  if (hasDuplicateTopLevelKeys(trimmed)) return done(new InvalidRequestError('A parameter is repeated'));
  done(undefined, body);
}

/**
 * Whether the request's `Transfer-Encoding` is absent or exactly `chunked` (any case, RFC 9112 §7).
 * Node frames any list ending in `chunked` (`gzip, chunked`) and hands over the still-coded body as
 * if it were plain, so a proxy that decodes the other codings and this server would read one request
 * two ways (RFC 9112 §6.1): only `chunked` is accepted.
 */
function onlyChunked(transferEncoding: string | undefined): boolean {
  if (transferEncoding === undefined) return true;
  const codings = transferEncoding.split(',').map((coding) => coding.trim().toLowerCase()).filter((coding) => coding !== '');
  return codings.length === 1 && codings[0] === 'chunked';
}

/**
 * Reads the token request body and hands back its parameters, without touching `req` (beyond reading
 * its stream): an object (form bodies without a prototype), `{}` for an empty body, or what the host's
 * own parser already made of it (`{}` when that is `undefined`, or `null` for a request without a body). Fails with 413
 * `invalid_request` over `limit` bytes (the declared `Content-Length` is checked first, also for a body
 * the host's parser already read) or past 100 form parameters, after which the rest of the body is
 * read and discarded so the connection stays usable; and with 400 `invalid_request` for bad JSON, a
 * repeated JSON key, a charset other than UTF-8, a `Content-Encoding`, a `Transfer-Encoding` other than `chunked`, an
 * aborted request, or a body of another media type.
 *
 * @param limit largest body in bytes
 * @example
 * ```ts
 * import { sendOAuthError } from '../errors.js'
 *
 * readTokenBody(req, config.bodyLimit, (err, body) => {
 *   if (err) sendOAuthError(res, err, config.realm)
 *   else console.log(body) // the parsed form or JSON, for the request guards
 * })
 * ```
 */
export function readTokenBody(req: TokenHttpRequest, limit: number, done: (err: InvalidRequestError | undefined, body?: unknown) => void): void {
  const headers = req.headers;
  if (!onlyChunked(headers['transfer-encoding'])) return done(new InvalidRequestError('Unsupported transfer coding; send the body as is or chunked'));
  // Checked first: a body the host's own parser (with its own, larger limit) already read is still ours to refuse.
  const declared = headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return done(tooLarge());
  const kind = bodyKind(headers['content-type']);
  if (alreadyParsed(req)) {
    const parsed = req.body;
    // A parser that kept the body as it came (express.text() or express.raw() for every type) left us
    // the text: it is read as if this router had read it, with every check.
    if (typeof parsed === 'string' || Buffer.isBuffer(parsed)) return parseKeptBody(parsed, kind, limit, done);
    if (kind === 'json') warnJsonAlreadyParsed();
    // A parser that found no body may leave `undefined` or `null`; a body it read as `null` (a non-strict
    // JSON parser, given `null`) holds no parameters, and the guards refuse it as they do when we read it.
    const body = parsed === undefined || (parsed === null && !hasBody(req)) ? {} : parsed;
    // A chunked body declares no length: judge what the host's parser made of it instead.
    if (declared === undefined && parsedSize(body, limit) > limit) return done(tooLarge());
    return done(undefined, body);
  }
  if (kind === 'charset') return done(unsupportedEncoding());
  if (kind === undefined) {
    if (hasBody(req)) return done(new InvalidRequestError('Unsupported content type; send application/x-www-form-urlencoded or application/json'));
    return done(undefined, {});
  }
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') return done(unsupportedEncoding());
  // One pass: the bytes, one UTF-8 decoding, one parse. A leading byte order mark is kept in the text:
  // a form has none (it would stay part of the first name), and the JSON parse step trims it.
  collectBody(req, limit, (err, text = '') => {
    if (err) return done(err);
    parseText(kind, text, done);
  });
}

/** The parameters of a body's text, by its kind: a JSON object (or array), or a form. */
function parseText(kind: BodyKind, text: string, done: (err: InvalidRequestError | undefined, body?: unknown) => void): void {
  if (kind === 'json') return parseJson(text, done);
  const body = parseForm(text);
  if (body === undefined) return done(tooLarge());
  done(undefined, body);
}

/**
 * A body a host's parser kept as text (`express.text()`) or as bytes (`express.raw()`): judged as the
 * router judges what it reads itself (limit, media type, UTF-8 only, repeated parameters).
 */
function parseKeptBody(
  kept: string | Buffer,
  kind: BodyKind | 'charset' | undefined,
  limit: number,
  done: (err: InvalidRequestError | undefined, body?: unknown) => void,
): void {
  const size = typeof kept === 'string' ? Buffer.byteLength(kept) : kept.length;
  if (size > limit) return done(tooLarge());
  if (kind === 'charset') return done(unsupportedEncoding());
  if (kind === undefined) {
    if (size > 0) return done(new InvalidRequestError('Unsupported content type; send application/x-www-form-urlencoded or application/json'));
    return done(undefined, {});
  }
  parseText(kind, typeof kept === 'string' ? kept : kept.toString('utf8'), done);
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
