/**
 * @module collect-body
 * Collects a request body into one string, in one pass, up to a size limit. Past the limit it reports
 * at once and keeps the stream flowing, discarding the rest, so the connection can carry the next
 * request. Framework-free: it only listens to the stream's events.
 *
 * Why not `raw-body`: on the token endpoint it cost about 43,000–62,000 more instructions per request
 * (3–4%), and 79,000 through its promise form, with the same behaviour for a body this small (measured
 * with `npm run bench:instructions`, docs/performance.md). It builds an `AsyncResource` per call,
 * concatenates even a single chunk into a new buffer and removes its five listeners afterwards; V8 then
 * has more hot functions to optimize (`Buffer.concat`, the stream's `removeListener`, the async-hooks
 * helpers), which is where most of those instructions went.
 */
import { InvalidRequestError } from '../errors.js';

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
