/**
 * @module host-errors
 * What the token router answers for an error a middleware of the host app passed on before the router
 * ran (its body parsers, its rate limiter, ...), on the router's own paths. The answer is always the
 * router's JSON error (RFC 6749 §5.2), never the host's message, which may quote the request:
 *
 * - a rate limiter's 429 stays 429 `too_many_requests`, with its `Retry-After` (RFC 6585 §4), so the
 *   client waits and retries;
 * - a body it could not read is the client's fault: 413 over a limit, else 400 `invalid_request`
 *   (any 4xx in http-errors' `status`/`statusCode`, a body-parser `type` like `entity.parse.failed`,
 *   zlib's errors, `JSON.parse`'s `SyntaxError` from a hand-written parser);
 * - anything else, a 5xx included (body-parser's `stream.encoding.set`), is the host's own failure:
 *   500 `server_error`.
 */
import { InvalidRequestError, TooManyRequestsError } from '../errors.js';
import { notJson, tooLarge, unsupportedEncoding } from './token-request-body.js';

/** An error's HTTP status as http-errors sets it (`status`, mirrored as `statusCode`). */
function statusOf(err: unknown): number | undefined {
  const e = err as { status?: unknown; statusCode?: unknown } | null;
  const status = e?.status ?? e?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

/** A body-parser error `type` (body-parser, raw-body, qs). */
const PARSER_TYPE = /^(entity|request|charset|encoding|parameters|stream)\./;

/** zlib's errors name their cause in a `code` like `Z_DATA_ERROR` (or `ERR_BROTLI_...`, `ERR__ERROR_FORMAT_PADDING_1`). */
const isZlibError = (e: { code?: unknown }): boolean => typeof e.code === 'string' && /^(Z_|ERR_BROTLI|ERR__ERROR_FORMAT)/.test(e.code);

/** The whole seconds of a numeric `Retry-After` among http-errors' `headers`, if it has one. */
function retryAfterOf(err: unknown): number | undefined {
  const headers = (err as { headers?: unknown } | null)?.headers;
  if (typeof headers !== 'object' || headers === null) return undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === 'retry-after' && /^\d{1,9}$/.test(String(value).trim())) return Number(String(value).trim());
  }
  return undefined;
}

/** Maps a body the host could not read to 413 (too large) or 400 `invalid_request`. */
function bodyError(err: unknown): InvalidRequestError {
  const e = err as { type?: string };
  if (statusOf(err) === 413 || e.type === 'entity.too.large' || e.type === 'parameters.too.many') return tooLarge(err);
  if (e.type === 'entity.parse.failed' || (e.type === undefined && err instanceof SyntaxError)) return notJson(err);
  if (e.type === 'charset.unsupported' || e.type === 'encoding.unsupported' || isZlibError(e as { code?: unknown })) return unsupportedEncoding(err);
  return new InvalidRequestError('The request body could not be read', { cause: err });
}

/**
 * The error to render for one a host middleware passed on: a {@link TooManyRequestsError}, an
 * `invalid_request` or the error itself (rendered 500 `server_error`, its message kept for logs only).
 *
 * @example
 * ```ts
 * hostErrorAnswer(Object.assign(new Error('Too Many Requests'), { status: 429, headers: { 'Retry-After': '30' } }))
 * // → TooManyRequestsError, Retry-After: 30
 * ```
 */
export function hostErrorAnswer(err: unknown): unknown {
  const status = statusOf(err);
  if (status === 429) return new TooManyRequestsError(retryAfterOf(err) ?? 1, 'Too many requests; retry later');
  if (status !== undefined) return status >= 400 && status < 500 ? bodyError(err) : err;
  const type = (err as { type?: unknown } | null)?.type;
  if ((typeof type === 'string' && PARSER_TYPE.test(type)) || err instanceof SyntaxError) return bodyError(err);
  return err;
}
