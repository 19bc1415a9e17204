/**
 * The token endpoint next to the host's own body parsers, express.json() and express.urlencoded(), on
 * Express 4 (body-parser 1) and Express 5 (body-parser 2), in both mounting orders
 * (docs/token-endpoint.md, "Your own body parsers"). A repeated JSON key can only be refused when the
 * router reads the body itself: once the host's parser has read it, the text is gone and the parsed
 * object holds the last value, so the host is warned (once per process) to mount the router first.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express5 from 'express';
import express4 from 'express4';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CreatedAccount } from '../../src/index.js';
import { BODY_ALREADY_PARSED_WARNING } from '../../src/token-endpoint/token-request-body.js';
import { createTestApp } from '../helpers/create-app.js';
import { expectNoSecret, expectOAuthError } from '../helpers/expect-oauth-error.js';
import { decodeToken, duplicateCredentialsJson } from '../helpers/tokens.js';

type Order = 'router first' | 'parsers first';

/** A host app on Express `version` with global JSON and form parsers, mounted before or after the token router. */
async function hostApp(version: 4 | 5, order: Order) {
  const { sa } = createTestApp({ express: version });
  const account = await sa.admin.createAccount({ name: 'host-parsed' });
  const other = await sa.admin.createAccount({ name: 'other-client' });
  const express = (version === 4 ? express4 : express5) as unknown as typeof express5;
  const app = express();
  const parsers = () => {
    app.use(express.json());
    app.use(express.urlencoded({ extended: true }));
  };
  if (order === 'parsers first') parsers();
  app.use('/oauth', sa.tokenRouter);
  if (order === 'router first') parsers();
  app.post('/api/echo', (req, res) => {
    res.json(req.body ?? null);
  });
  return { app, account, other };
}

const form = (a: CreatedAccount) => ({ grant_type: 'client_credentials', client_id: a.clientId, client_secret: a.secret.value });

describe('the warning when a JSON token request was parsed by the host first', () => {
  const warnings: Error[] = [];
  const listen = (w: Error) => warnings.push(w);
  beforeEach(() => {
    process.on('warning', listen);
  });
  afterEach(() => {
    process.off('warning', listen);
  });
  // Warnings are emitted on the next tick.
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  const ours = () => warnings.filter((w) => (w as Error & { code?: string }).code === BODY_ALREADY_PARSED_WARNING);

  // This test runs first in its file (its own process): the warning is once per process.
  it('is given once per process, for JSON only, and never when the router reads the body itself', async () => {
    for (const version of [4, 5] as const) {
      const first = await hostApp(version, 'router first');
      await request(first.app).post('/oauth/token').send(form(first.account)).expect(200);
      const parsed = await hostApp(version, 'parsers first');
      await request(parsed.app).post('/oauth/token').type('form').send(form(parsed.account)).expect(200);
    }
    await settle();
    expect(ours()).toEqual([]);

    const e5 = await hostApp(5, 'parsers first');
    await request(e5.app).post('/oauth/token').send(form(e5.account)).expect(200);
    await settle();
    expect(ours()).toHaveLength(1);
    expect(ours()[0]).toMatchObject({ name: 'ExpressServiceAccountsWarning', message: expect.stringMatching(/Mount the token router before your body parsers/) });

    const e4 = await hostApp(4, 'parsers first');
    await request(e4.app).post('/oauth/token').send(form(e4.account)).expect(200);
    await settle();
    expect(ours()).toHaveLength(1);
  });
});

describe.each([4, 5] as const)('Express %i with global express.json() and express.urlencoded()', (version) => {
  // RFC 6749 §3.2: "Request and response parameters MUST NOT be included more than once."
  it('router mounted first: a repeated JSON key is refused with 400 invalid_request, and the host parsers still serve its routes', async () => {
    const { app, account, other } = await hostApp(version, 'router first');
    const res = await request(app).post('/oauth/token').set('Content-Type', 'application/json').send(duplicateCredentialsJson(other, account));
    expectOAuthError(res, 400, 'invalid_request');
    expectNoSecret(res, account.secret.value);
    await request(app).post('/oauth/token').send(form(account)).expect(200);
    const echoed = await request(app).post('/api/echo').send({ hello: 'host' }).expect(200);
    expect(echoed.body).toEqual({ hello: 'host' });
  });

  // RFC 6749 §3.2 (as above), for forms: the host's urlencoded parser keeps a repeated name as an array.
  it('parsers mounted first: a repeated form parameter is still refused with 400 invalid_request', async () => {
    const { app, account } = await hostApp(version, 'parsers first');
    const res = await request(app)
      .post('/oauth/token')
      .type('form')
      .send(`grant_type=client_credentials&client_id=${account.clientId}&client_id=${account.clientId}&client_secret=${account.secret.value}`);
    expectOAuthError(res, 400, 'invalid_request');
  });

  // A body its Content-Encoding does not inflate: the host's parser fails with zlib's error, which is the
  // client's mistake, so 400 invalid_request as when the router reads the body itself, never a 500.
  it.each(['gzip', 'deflate', 'br'])('parsers mounted first: a body that is not really %s is 400 invalid_request', async (encoding) => {
    const { app } = await hostApp(version, 'parsers first');
    for (const type of ['application/x-www-form-urlencoded', 'application/json']) {
      const res = await request(app).post('/oauth/token').set('Content-Type', type).set('Content-Encoding', encoding).send(type.endsWith('json') ? '{"grant_type":"client_credentials"}' : 'grant_type=client_credentials');
      expectOAuthError(res, 400, 'invalid_request');
    }
  });

  // CONTRACT §2: a malformed body is 400 invalid_request, never a 500. express.urlencoded({ extended: true })
  // refuses brackets nested deeper than its depth (32) with a 400 error of its own type.
  it('parsers mounted first: a parameter nested past the host parser\'s depth is 400 invalid_request', async () => {
    const { app, account } = await hostApp(version, 'parsers first');
    const deep = `a${'[b]'.repeat(40)}=1`;
    const res = await request(app).post('/oauth/token').type('form').send(`${new URLSearchParams(form(account)).toString()}&${deep}`);
    expectOAuthError(res, 400, 'invalid_request');
  });

  // The documented limitation (docs/token-endpoint.md, "Your own body parsers"): JSON.parse keeps the last
  // of repeated keys and body-parser keeps no copy of the text, so the request is judged on the last values.
  it('parsers mounted first: a repeated JSON key cannot be seen, and the last values count', async () => {
    const { app, account, other } = await hostApp(version, 'parsers first');
    const res = await request(app).post('/oauth/token').set('Content-Type', 'application/json').send(duplicateCredentialsJson(other, account));
    expect(res.status).toBe(200);
    expect(decodeToken((res.body as { access_token: string }).access_token).payload.sub).toBe(account.clientId);
  });
});

/** A host app on Express `version` whose own middlewares run before the token router. */
async function appWith(version: 4 | 5, mount: (app: ReturnType<typeof express5>, express: typeof express5) => void) {
  const { sa } = createTestApp({ express: version });
  const account = await sa.admin.createAccount({ name: 'host-parsed' });
  const other = await sa.admin.createAccount({ name: 'other-client' });
  const express = (version === 4 ? express4 : express5) as unknown as typeof express5;
  const app = express();
  mount(app, express);
  app.use('/oauth', sa.tokenRouter);
  return { app, account, other };
}

describe.each([4, 5] as const)('Express %i with a global parser that keeps the body as text or bytes', (version) => {
  const parsers = {
    'express.text({ type: "*/*" })': (app: ReturnType<typeof express5>, express: typeof express5) => app.use(express.text({ type: '*/*' })),
    'express.raw({ type: "*/*" })': (app: ReturnType<typeof express5>, express: typeof express5) => app.use(express.raw({ type: '*/*' })),
  };
  describe.each(Object.entries(parsers))('%s', (_name, mount) => {
    // CONTRACT §2: a form or JSON body with valid credentials is answered with a token.
    it('issues a token for a form and for a JSON body', async () => {
      const { app, account } = await appWith(version, mount);
      await request(app).post('/oauth/token').type('form').send(form(account)).expect(200);
      await request(app).post('/oauth/token').set('Content-Type', 'application/json').send(JSON.stringify(form(account))).expect(200);
      await request(app).post('/oauth/revoke').type('form').send({ ...form(account), grant_type: undefined, token: 'not-a-token' }).expect(200);
    });

    // RFC 6749 §3.2 and CONTRACT §2: malformed bodies are 400 invalid_request, never a 401 or a 500.
    it('refuses bad JSON, a repeated parameter, a repeated JSON key and another media type with 400 invalid_request', async () => {
      const { app, account, other } = await appWith(version, mount);
      const json = (text: string) => request(app).post('/oauth/token').set('Content-Type', 'application/json').send(text);
      expectOAuthError(await json('{"grant_type":'), 400, 'invalid_request');
      expectOAuthError(await json('null'), 400, 'invalid_request');
      expectOAuthError(await json(duplicateCredentialsJson(other, account)), 400, 'invalid_request');
      const repeated = `grant_type=client_credentials&grant_type=client_credentials&client_id=${account.clientId}&client_secret=${account.secret.value}`;
      expectOAuthError(await request(app).post('/oauth/token').type('form').send(repeated), 400, 'invalid_request');
      const plain = await request(app).post('/oauth/token').set('Content-Type', 'text/plain').send(repeated);
      expectOAuthError(plain, 400, 'invalid_request');
      const latin1 = await request(app).post('/oauth/token').set('Content-Type', 'application/x-www-form-urlencoded; charset=iso-8859-1').send(repeated);
      expectOAuthError(latin1, 400, 'invalid_request');
    });

    // CONTRACT §2: a body larger than the limit (8 KiB by default) is 413 invalid_request.
    it('413 invalid_request for a chunked body over the limit', async () => {
      const { app, account } = await appWith(version, mount);
      const body = `${new URLSearchParams(form(account)).toString()}&pad=${'a'.repeat(10_000)}`;
      const server = http.createServer(app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        // Written in two pieces: Transfer-Encoding: chunked, no Content-Length.
        const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
          const req = http.request(
            { port: (server.address() as AddressInfo).port, host: '127.0.0.1', method: 'POST', path: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
            (answer) => {
              let text = '';
              answer.setEncoding('utf8');
              answer.on('data', (chunk: string) => (text += chunk));
              answer.on('end', () => resolve({ status: answer.statusCode ?? 0, text }));
            },
          );
          req.on('error', reject);
          req.write(body.slice(0, 10));
          req.end(body.slice(10));
        });
        expect(res.status).toBe(413);
        expect(JSON.parse(res.text)).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  });

  // CONTRACT §2: a JSON value that is no object is a malformed body, 400 invalid_request, not 401.
  it('express.json({ strict: false }): a JSON null is 400 invalid_request', async () => {
    const { app } = await appWith(version, (host, express) => host.use(express.json({ strict: false })));
    expectOAuthError(await request(app).post('/oauth/token').set('Content-Type', 'application/json').send('null'), 400, 'invalid_request');
  });
});

describe.each([4, 5] as const)('Express %i with a hand-written global parser that passes its own errors on', (version) => {
  /** Reads the body, parses JSON itself and hands JSON.parse's SyntaxError, or a 400 http-error, to next(). */
  const ownParser = (failure: 'syntax' | 'http-400') => (app: ReturnType<typeof express5>) =>
    app.use((req, _res, next) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (text += chunk));
      req.on('end', () => {
        try {
          req.body = JSON.parse(text) as unknown;
          next();
        } catch (e) {
          next(failure === 'syntax' ? e : Object.assign(new Error('Malformed JSON'), { status: 400, statusCode: 400, expose: true }));
        }
      });
    });

  // CONTRACT §2: a malformed body is 400 invalid_request, never a 500.
  it.each(['syntax', 'http-400'] as const)('bad JSON it refuses (%s) is 400 invalid_request, at /token, /revoke and /introspect', async (failure) => {
    const { app, account } = await appWith(version, ownParser(failure));
    for (const path of ['/token', '/revoke', '/introspect']) {
      const res = await request(app).post(`/oauth${path}`).set('Content-Type', 'application/json').send('{"grant_type":');
      expectOAuthError(res, 400, 'invalid_request');
    }
    await request(app).post('/oauth/token').set('Content-Type', 'application/json').send(JSON.stringify(form(account))).expect(200);
  });
});

describe.each([4, 5] as const)('Express %i: a host parser\'s failures other than 400 and 413', (version) => {
  /** Reads the body and hands `failure` to next(), as a hand-written parser (or one of another library) would. */
  const failingParser = (failure: Error) => (app: ReturnType<typeof express5>) =>
    app.use((req, _res, next) => {
      req.resume();
      req.on('end', () => next(failure));
    });
  const failures: [string, () => Error][] = [
    // http-errors' 415 with the charset it refused in its message (request data), without a body-parser type.
    ['415 (status and statusCode)', () => Object.assign(new Error('unsupported charset "X-SECRET-CHARSET"'), { status: 415, statusCode: 415, expose: true })],
    ['403 (statusCode only)', () => Object.assign(new Error('body signature X-SECRET-CHARSET does not match'), { statusCode: 403 })],
    ['422 of an unknown type', () => Object.assign(new Error('X-SECRET-CHARSET'), { status: 422, type: 'multipart.invalid' })],
  ];

  // RFC 6749 §5.2: a request the server cannot read is the client's fault, 400 invalid_request, as for a
  // host parser's 400; never a 500, and nothing of the parser's message, which may quote the request.
  it.each(failures)('a %s is 400 invalid_request at /token, /revoke and /introspect, without its message', async (_name, failure) => {
    const { app } = await appWith(version, failingParser(failure()));
    for (const path of ['/token', '/revoke', '/introspect']) {
      const res = await request(app).post(`/oauth${path}`).type('form').send('grant_type=client_credentials');
      expectOAuthError(res, 400, 'invalid_request');
      expect(res.text).not.toMatch(/SECRET/);
    }
  });

  // RFC 6585 §4: a host's rate limiter that refuses with http-errors' 429 (before the router reads
  // anything) tells the client to wait: still 429 with its Retry-After, not 400 (a client told its
  // request is malformed does not retry) nor 500.
  it('a host middleware\'s 429 stays 429 too_many_requests with its Retry-After, without its message', async () => {
    const limited = () => Object.assign(new Error('X-SECRET rate limit for 203.0.113.7'), { status: 429, statusCode: 429, expose: true, headers: { 'Retry-After': '17' } });
    const { app } = await appWith(version, (host) => host.use((_req, _res, next) => next(limited())));
    for (const path of ['/token', '/revoke', '/introspect']) {
      const res = await request(app).post(`/oauth${path}`).type('form').send('grant_type=client_credentials');
      expectOAuthError(res, 429, 'too_many_requests');
      expect(res.headers['retry-after']).toBe('17');
      expect(res.text).not.toMatch(/SECRET|203\.0/);
    }
    const { app: plain } = await appWith(version, (host) => host.use((_req, _res, next) => next(Object.assign(new Error('slow down'), { status: 429 }))));
    const res = await request(plain).post('/oauth/token').type('form').send('grant_type=client_credentials');
    expectOAuthError(res, 429, 'too_many_requests');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  // body-parser's own 415s (an unsupported charset or Content-Encoding) are 400 invalid_request too.
  it('express.json(): an unsupported charset or Content-Encoding is 400 invalid_request', async () => {
    const { app } = await appWith(version, (host, express) => host.use(express.json()));
    const latin1 = await request(app).post('/oauth/token').set('Content-Type', 'application/json; charset=x-secret-charset').send('{"grant_type":"client_credentials"}');
    expectOAuthError(latin1, 400, 'invalid_request');
    expect(latin1.text).not.toMatch(/SECRET/i);
    const encoded = await request(app).post('/oauth/token').set('Content-Type', 'application/json').set('Content-Encoding', 'x-secret-coding').send('{"grant_type":"client_credentials"}');
    expectOAuthError(encoded, 400, 'invalid_request');
    expect(encoded.text).not.toMatch(/SECRET/i);
  });

  // A 5xx is the host's own fault, not the client's: here a middleware set the request's encoding
  // before express.json(), which fails with body-parser's 500 `stream.encoding.set`.
  it('a host parser\'s 5xx stays 500 server_error, without its message', async () => {
    const { app } = await appWith(version, (host, express) => {
      host.use((req, _res, next) => {
        req.setEncoding('utf8');
        next();
      });
      host.use(express.json());
    });
    for (const path of ['/token', '/revoke', '/introspect']) {
      const res = await request(app).post(`/oauth${path}`).set('Content-Type', 'application/json').send('{"grant_type":"client_credentials"}');
      expectOAuthError(res, 500, 'server_error');
      expect(res.text).not.toMatch(/stream|encoding/);
    }
  });
});
