/**
 * How the token endpoint reads a request body when it reads it itself (docs/token-endpoint.md, "Your
 * own body parsers"): the media types and charsets it takes (RFC 6749 App. B: UTF-8 only), what it
 * refuses with 400 or 413 `invalid_request`, an empty body read as no parameters, the limit on form
 * parameters, and a keep-alive connection that stays usable after a body over the limit. On Express 5
 * and Express 4; the host's own parsers are test/http/host-body-parsers.test.ts.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import express5 from 'express';
import express4 from 'express4';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CreatedAccount } from '../../src/index.js';
import { createTestApp } from '../helpers/create-app.js';
import { expectNoSecret, expectOAuthError } from '../helpers/expect-oauth-error.js';
import { failOnUncaughtErrors } from '../helpers/uncaught-errors.js';

const GRANT = 'client_credentials';

describe.each([5, 4] as const)('the token endpoint reading the body itself (Express %i)', (version) => {
  failOnUncaughtErrors();
  let t: ReturnType<typeof createTestApp>;
  let account: CreatedAccount;
  beforeEach(async () => {
    t = createTestApp({ express: version, failureLimit: false });
    account = await t.sa.admin.createAccount({ name: 'body-reader' });
  });
  afterEach(async () => {
    await t.sa.close();
  });

  const post = () => request(t.app).post('/oauth/token');
  const formText = () => `grant_type=${GRANT}&client_id=${account.clientId}&client_secret=${account.secret.value}`;
  const jsonText = () => JSON.stringify({ grant_type: GRANT, client_id: account.clientId, client_secret: account.secret.value });

  // RFC 6749 §4.4.2 and App. B: the form media type in UTF-8; JSON is taken too (docs/token-endpoint.md).
  it.each([
    ['application/x-www-form-urlencoded; charset=UTF-8', 'form'],
    ['application/x-www-form-urlencoded;charset=utf8', 'form'],
    ['Application/X-WWW-Form-URLEncoded', 'form'],
    ['application/json', 'json'],
    ['application/json; charset="utf-8"', 'json'],
    ['application/json ; charset = utf-8 ; foo=bar', 'json'],
    ['APPLICATION/JSON', 'json'],
    ['application/vnd.api+json', 'json'],
    ['application/merge-patch+json; charset=utf-8', 'json'],
  ] as const)('issues a token for a body sent as %s', async (type, kind) => {
    const res = await post().set('Content-Type', type).send(kind === 'form' ? formText() : jsonText());
    expect(res.status, res.text).toBe(200);
  });

  // RFC 6749 App. B: parameters are encoded in UTF-8; any other charset is refused, not guessed.
  it.each([
    ['application/json; charset=utf-16', 'json'],
    ['application/json; charset=latin1', 'json'],
    ['application/vnd.api+json; charset="iso-8859-1"', 'json'],
    ['application/x-www-form-urlencoded; charset=iso-8859-1', 'form'],
    ['application/x-www-form-urlencoded; charset=bogus', 'form'],
  ] as const)('400 invalid_request for a body sent as %s', async (type, kind) => {
    const res = await post().set('Content-Type', type).send(kind === 'form' ? formText() : jsonText());
    expectOAuthError(res, 400, 'invalid_request');
    expect(res.body.error_description).toBe('The request body uses an unsupported charset or encoding');
    expectNoSecret(res, account.secret.value);
  });

  // RFC 8259 §8.1: "implementations that parse JSON texts MAY ignore the presence of a byte order mark".
  it('issues a token for a JSON body that starts with a byte order mark', async () => {
    const res = await post().set('Content-Type', 'application/json').send(`\uFEFF${jsonText()}`);
    expect(res.status, res.text).toBe(200);
  });

  it.each(['application/jsonx', 'application/json-seq', 'application/foo_bar+json', 'text/json', 'application/json, text/plain'])(
    '400 invalid_request for a body sent as %s (not a JSON media type)',
    async (type) => {
      const res = await post().set('Content-Type', type).send(jsonText());
      expectOAuthError(res, 400, 'invalid_request');
      expect(res.body.error_description).toMatch(/^Unsupported content type/);
    },
  );

  it.each(['gzip', 'deflate', 'br', 'x-bogus'])('400 invalid_request for a body with Content-Encoding: %s', async (encoding) => {
    const res = await post().type('form').set('Content-Encoding', encoding).send(formText());
    expectOAuthError(res, 400, 'invalid_request');
    expect(res.body.error_description).toBe('The request body uses an unsupported charset or encoding');
  });

  it('issues a token for a body with Content-Encoding: identity', async () => {
    const res = await post().type('form').set('Content-Encoding', 'Identity').send(formText());
    expect(res.status, res.text).toBe(200);
  });

  // An empty body carries no parameters: with Basic credentials the request gets as far as the grant check.
  it.each([
    ['no body and no Content-Type', undefined, undefined],
    ['an empty form', 'application/x-www-form-urlencoded', ''],
    ['an empty JSON body', 'application/json', ''],
    ['a JSON body of whitespace', 'application/json', ' \r\n\t'],
  ] as const)('reads %s as no parameters', async (_name, type, body) => {
    let req = post().auth(account.clientId, account.secret.value);
    if (type !== undefined) req = req.set('Content-Type', type);
    const res = await (body !== undefined ? req.send(body) : req);
    expectOAuthError(res, 400, 'invalid_grant');
    expect(res.body.error_description).toBe('The grant_type parameter is missing');
  });

  // A form body of up to 100 parameters is read; past that it is refused as too large.
  it('reads a form of 100 parameters and refuses one of 101 with 413 invalid_request', async () => {
    const padding = (count: number) => Array.from({ length: count }, (_, i) => `p${i}=`).join('&');
    const hundred = await post().type('form').send(`${formText()}&${padding(97)}`);
    expect(hundred.status, hundred.text).toBe(200);
    const tooMany = await post().type('form').send(`${formText()}&${padding(98)}`);
    expectOAuthError(tooMany, 413, 'invalid_request');
    expect(tooMany.body.error_description).toBe('The request body is too large');
  });

  // RFC 6749 §3.2: "Request and response parameters MUST NOT be included more than once." JSON.parse
  // would keep the last of repeated keys; the reader refuses them, also when only their escapes differ.
  it.each([
    ['a repeated key', (a: CreatedAccount) => `{"grant_type":"${GRANT}","client_id":"${a.clientId}","client_secret":"${a.secret.value}","scope":"a","scope":"b"}`],
    ['a repeated key spelled with an escape', (a: CreatedAccount) => `{"grant_type":"${GRANT}","client_id":"${a.clientId}","client_secret":"${a.secret.value}","\\u0067rant_type":"${GRANT}"}`],
    ['a repeated unknown key', (a: CreatedAccount) => `{"grant_type":"${GRANT}","client_id":"${a.clientId}","client_secret":"${a.secret.value}","x":1,"x":2}`],
  ])('400 invalid_request for a JSON body with %s', async (_name, body) => {
    const res = await post().set('Content-Type', 'application/json').send(body(account));
    expectOAuthError(res, 400, 'invalid_request');
    expect(res.body.error_description).toBe('A parameter is repeated');
    expectNoSecret(res, account.secret.value);
  });

  // CONTRACT §2: "malformed body (... a repeated parameter, non-string field) | 400 | invalid_request";
  // a repeated form parameter and a JSON array are told the same way: once, as a string.
  it('400 invalid_request for a parameter repeated in a form or given as a JSON array, saying how to send it', async () => {
    const form = await post().type('form').send(`${formText()}&scope=a&scope=b`);
    const json = await post().set('Content-Type', 'application/json').send({ grant_type: GRANT, client_id: account.clientId, client_secret: account.secret.value, scope: ['a'] });
    for (const res of [form, json]) {
      expectOAuthError(res, 400, 'invalid_request');
      expect(res.body.error_description).toBe('The parameter scope must be sent once, as a string');
    }
  });

  it('400 invalid_request for a JSON array body, as for any JSON value that is not an object', async () => {
    for (const body of ['[]', `[{"grant_type":"${GRANT}"}]`, 'null']) {
      const res = await post().set('Content-Type', 'application/json').send(body);
      expectOAuthError(res, 400, 'invalid_request');
      expect(res.body.error_description, body).toBe('The request body must be a JSON object');
    }
  });

  it('takes a key repeated inside a nested JSON value as any other unknown parameter', async () => {
    const res = await post().set('Content-Type', 'application/json').send(`{"extra":{"a":1,"a":2},"grant_type":"${GRANT}","client_id":"${account.clientId}","client_secret":"${account.secret.value}"}`);
    expect(res.status, res.text).toBe(200);
  });

  // A body over the limit is refused at once; the rest of it is read and discarded, so the client's
  // keep-alive connection carries its next request (CONTRACT §2: "the server keeps serving").
  it('413 for a body over the limit, and the same keep-alive connection then serves the next request', async () => {
    const server = http.createServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const send = (headers: Record<string, string>, chunks: readonly string[]) =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = http.request({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', method: 'POST', path: '/oauth/token', agent, headers }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
        });
        req.on('error', reject);
        for (const chunk of chunks) req.write(chunk);
        req.end();
      });
    try {
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const big = `${formText()}&padding=${'x'.repeat(100_000)}`;
      const pieces = Array.from({ length: 10 }, (_, i) => big.slice(i * 10_010, (i + 1) * 10_010));
      const chunked = await send(form, pieces);
      expect(chunked).toEqual({ status: 413, reused: false });
      expect(await send({ ...form, 'content-length': String(formText().length) }, [formText()])).toEqual({ status: 200, reused: true });
      const declared = await send({ ...form, 'content-length': String(big.length) }, [big]);
      expect(declared).toEqual({ status: 413, reused: true });
      expect(await send({ ...form, 'content-length': String(formText().length) }, [formText()])).toEqual({ status: 200, reused: true });
    } finally {
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  // RFC 9112 §6.1: a body framed by chunked alone is read; any other transfer coding (Node frames
  // `gzip, chunked` and hands the still-coded bytes over as if plain) is refused, so a proxy and this
  // server cannot read one request two ways. Coding names are case-insensitive (RFC 9112 §7).
  it.each([
    ['chunked', 200],
    ['CHUNKED', 200],
    ['gzip, chunked', 400],
    ['x-custom, chunked', 400],
    ['deflate,chunked', 400],
    ['gzip\r\nTransfer-Encoding: chunked', 400],
  ] as const)('Transfer-Encoding %j gets %i', async (codings, status) => {
    const server = http.createServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
      const body = formText();
      socket.write(
        `POST /oauth/token HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
          `Transfer-Encoding: ${codings}\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      );
      let raw = '';
      socket.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      await new Promise((resolve) => socket.on('close', resolve));
      expect(raw.split('\r\n')[0], raw).toBe(`HTTP/1.1 ${status} ${status === 200 ? 'OK' : 'Bad Request'}`);
      const answer = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
      if (status === 400) expect(answer).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
      else expect(answer.token_type).toBe('Bearer');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('a client that goes away in the middle of its body crashes nothing, and the next request is served', async () => {
    const server = http.createServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      // The app's listener runs first, so the endpoint is reading the body when this one sees the request.
      const received = new Promise<http.IncomingMessage>((resolve) => server.once('request', resolve));
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write('POST /oauth/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"grant_type":');
      const req = await received;
      const closed = new Promise((resolve) => req.once('close', resolve));
      socket.destroy();
      await closed;
      await new Promise((resolve) => setImmediate(resolve));
      const res = await request(server).post('/oauth/token').type('form').send(formText());
      expect(res.status, res.text).toBe(200);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe.each([5, 4] as const)('the token endpoint behind the host\'s own parsers (Express %i)', (version) => {
  // Checked on the declared Content-Length first: a host parser with a larger limit of its own does not lift ours.
  it('413 invalid_request for a body over bodyLimit that the host\'s parser (limit 1 MB) already read', async () => {
    const { sa } = createTestApp({ express: version });
    const account = await sa.admin.createAccount({ name: 'host-parsed' });
    const express = (version === 4 ? express4 : express5) as unknown as typeof express5;
    const app = express();
    app.use(express.json({ limit: '1mb' }));
    app.use(express.urlencoded({ extended: false, limit: '1mb' }));
    app.use('/oauth', sa.tokenRouter);
    const fields = { grant_type: GRANT, client_id: account.clientId, client_secret: account.secret.value, padding: 'x'.repeat(20_000) };
    expectOAuthError(await request(app).post('/oauth/token').type('form').send(fields), 413, 'invalid_request');
    expectOAuthError(await request(app).post('/oauth/token').send(fields), 413, 'invalid_request');
    const { padding: _padding, ...small } = fields;
    expect((await request(app).post('/oauth/token').send(small)).status).toBe(200);
    await sa.close();
  });
});
