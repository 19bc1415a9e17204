/**
 * readTokenBody(req, limit, done): the token endpoint's body reader, in process, on streams shaped like
 * Node's request. It hands back the parameters and leaves the request as it found it (no `req.body`),
 * also when the host's parser read the body first. The HTTP behaviour is test/http/token-request-body.test.ts.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../src/errors.js';
import { readTokenBody } from '../../src/token-endpoint/token-request-body.js';
import type { TokenHttpRequest } from '../../src/token-endpoint/request-guards.js';

/** A request whose body arrives in `chunks`; without a `content-length` header it stands for a chunked body. */
function fakeRequest(headers: Record<string, string>, chunks: readonly string[], extra: Record<string, unknown> = {}): TokenHttpRequest {
  const stream = Readable.from(chunks.map((chunk) => Buffer.from(chunk)), { objectMode: false });
  return Object.assign(stream, { headers, ...extra }) as unknown as TokenHttpRequest;
}

function read(req: TokenHttpRequest, limit = 8192): Promise<{ err: InvalidRequestError | undefined; body?: unknown }> {
  return new Promise((resolve) => readTokenBody(req, limit, (err, body) => resolve({ err, body })));
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('readTokenBody', () => {
  it('hands back a form body without a prototype, a repeated name as an array, and sets no req.body', async () => {
    const text = 'grant_type=client_credentials&scope=a&scope=b&constructor=x';
    const req = fakeRequest({ ...FORM, 'content-length': String(text.length) }, [text]);
    const { err, body } = await read(req);
    expect(err).toBeUndefined();
    expect(Object.getPrototypeOf(body)).toBeNull();
    expect({ ...(body as object) }).toEqual({ grant_type: 'client_credentials', scope: ['a', 'b'], constructor: 'x' });
    expect(req.body).toBeUndefined();
    expect('body' in req).toBe(false);
  });

  it('hands back a JSON body read in several chunks', async () => {
    const req = fakeRequest({ 'content-type': 'application/json' }, ['{"grant_type":', '"client_credentials"}']);
    expect(await read(req)).toEqual({ err: undefined, body: { grant_type: 'client_credentials' } });
  });

  // RFC 6749 §3.2: "Request and response parameters MUST NOT be included more than once."
  it('fails a JSON object that repeats a top-level key, in the parse step', async () => {
    const req = fakeRequest({ 'content-type': 'application/json' }, ['{"scope":"a","scope":"b"}']);
    const { err, body } = await read(req);
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ status: 400, message: 'A parameter is repeated' });
    expect(body).toBeUndefined();
  });

  it('fails a JSON value that is no object or array as not a JSON object, and broken JSON as not JSON', async () => {
    for (const text of ['null', '42', '"grant_type"', 'true']) {
      expect((await read(fakeRequest({ 'content-type': 'application/json' }, [text]))).err, text).toMatchObject({ status: 400, message: 'The request body must be a JSON object' });
    }
    expect((await read(fakeRequest({ 'content-type': 'application/json' }, ['{"grant_type":']))).err).toMatchObject({ status: 400, message: 'The request body is not valid JSON' });
    // Text that is no JSON value at all is told the same as a value that is not an object.
    expect((await read(fakeRequest({ 'content-type': 'application/json' }, ['grant_type=client_credentials']))).err).toMatchObject({ status: 400, message: 'The request body must be a JSON object' });
  });

  it('hands back {} for a request without a body, and fails one of another media type', async () => {
    expect(await read(fakeRequest({}, []))).toEqual({ err: undefined, body: {} });
    const { err } = await read(fakeRequest({ 'content-type': 'text/plain', 'content-length': '3' }, ['abc']));
    expect(err).toMatchObject({ status: 400, message: expect.stringMatching(/^Unsupported content type/) });
  });

  it('fails with 413 on a declared length over the limit without reading the body', async () => {
    const req = fakeRequest({ ...FORM, 'content-length': '9000' }, ['x'.repeat(9000)]);
    const { err } = await read(req);
    expect(err).toMatchObject({ status: 413, message: 'The request body is too large' });
    expect(req.readableFlowing).toBeNull();
  });

  it('fails with 413 past the limit on a body without a declared length, and reads the rest of it', async () => {
    const req = fakeRequest(FORM, Array.from({ length: 10 }, () => 'x'.repeat(1000)));
    const ended = new Promise((resolve) => req.once('end', resolve));
    const { err } = await read(req);
    expect(err).toMatchObject({ status: 413, message: 'The request body is too large' });
    await ended;
    expect(req.readableEnded).toBe(true);
  });

  it('fails with 400 when the stream fails or the client aborts, once', async () => {
    const broken = fakeRequest({ ...FORM, 'content-length': '10' }, []);
    const failing = read(broken);
    broken.emit('error', new Error('socket hang up'));
    expect((await failing).err).toMatchObject({ status: 400, message: 'The request body could not be read' });

    const aborted = fakeRequest({ ...FORM, 'content-length': '10' }, []);
    const calls: unknown[] = [];
    readTokenBody(aborted, 8192, (err) => calls.push(err));
    aborted.emit('aborted');
    aborted.emit('error', new Error('aborted'));
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ status: 400, message: 'The request was aborted' });
  });

  describe('a body the host\'s parser already read', () => {
    it.each([
      ['Express 4 (body-parser 1 sets _body)', { _body: true }],
      ['Express 5 (the stream has ended)', {}],
    ])('%s: hands back the host\'s object itself and leaves req.body as it was', async (_name, extra) => {
      const parsed = { grant_type: 'client_credentials' };
      const req = fakeRequest({ ...FORM, 'content-length': '29' }, [], { ...extra, body: parsed });
      if (!('_body' in extra)) {
        req.resume();
        await new Promise((resolve) => req.once('end', resolve));
      }
      const { err, body } = await read(req);
      expect(err).toBeUndefined();
      expect(body).toBe(parsed);
      expect(req.body).toBe(parsed);
    });

    it('hands back {} when the host left req.body null, and leaves it null', async () => {
      const req = fakeRequest(FORM, [], { _body: true, body: null });
      expect(await read(req)).toEqual({ err: undefined, body: {} });
      expect(req.body).toBeNull();
    });

    it('fails with 413 when the declared length is over the limit, whatever the host\'s parser accepted', async () => {
      const req = fakeRequest({ ...FORM, 'content-length': '20000' }, [], { _body: true, body: { padding: 'x'.repeat(20_000) } });
      expect((await read(req)).err).toMatchObject({ status: 413 });
    });
  });
});
