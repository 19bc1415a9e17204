/**
 * docs/security.md, "Fair shares under a flood": a request refused because the bcrypt queue is full is
 * answered 503 with `Connection: close`, so the flood's next request waits in the server's line of new
 * connections, the line a newcomer's connection waits in. Node accepts at most one new connection per
 * turn of its event loop, and reads every open connection at every turn: while a refused flood kept its
 * connections open, each turn answered one request of each of them, turns grew long, and a newcomer's
 * connection, opened in the first seconds of a flood, waited behind the flood's own unaccepted
 * connections for many of those long turns. Requests the gate admits, and every other answer, keep
 * the connection.
 *
 * The flood's compares are held (bcrypt never finishes until released), so the queue stays full for
 * as long as the test needs and the order of events is the test's, not the machine's.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { generateSecret } from '../../src/credentials/generate-credentials.js';
import { createTestApp } from '../helpers/create-app.js';
import { heldBcrypt } from '../helpers/held-bcrypt.js';

// bcrypt compares counted, and held until released (test/helpers/held-bcrypt.ts).
vi.mock('bcrypt', async (importOriginal) => (await import('../helpers/held-bcrypt.js')).withHeldCompares(await importOriginal()));

const QUEUE = 2;

interface Answer {
  readonly status: number;
  readonly connection: string | undefined;
  /** Resolves once the server has closed the connection this answer came on. */
  readonly closed: Promise<void>;
}

describe('a token request refused because the bcrypt queue is full', () => {
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    heldBcrypt.release();
    await stop?.();
    stop = undefined;
  });

  // RFC 9112 §9.6: "A server that sends a "close" connection option MUST initiate closure of the
  // connection [...] after it sends the response containing close." The rule (docs/security.md): a
  // refused client retries over a new connection, in line with newcomers; admitted ones keep theirs.
  it('is answered 503 with Connection: close and its connection is closed; admitted requests keep theirs', async () => {
    const { app, sa } = createTestApp({ failureLimit: false, maxQueuedSecretChecks: QUEUE });
    app.set('trust proxy', true);
    const newcomer = await sa.admin.createAccount({ name: 'newcomer' });
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    // One socket per request, kept alive unless the server closes it.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    stop = async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sa.close();
    };
    const post = (clientId: string, secret: string, address: string): Promise<Answer> =>
      new Promise((resolve, reject) => {
        const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }).toString();
        const req = http.request(
          { host: '127.0.0.1', port, method: 'POST', path: '/oauth/token', agent, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(body.length), 'x-forwarded-for': address } },
          (res) => {
            const socket = res.socket;
            const closed = new Promise<void>((done) => (socket.destroyed ? done() : socket.once('close', () => done())));
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, closed }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });

    // The flood: unknown client IDs, each from its own address, every compare held: two run, QUEUE wait, two are refused.
    heldBcrypt.hold();
    const wrong = generateSecret().value;
    const refusals: Answer[] = [];
    let waiting: { count: number; done: () => void } | undefined;
    const refusedCount = (count: number): Promise<void> =>
      new Promise((done) => (refusals.length >= count ? done() : (waiting = { count, done })));
    const flood: Array<Promise<Answer>> = [];
    for (let i = 0; i < 2 + QUEUE + 2; i++) {
      const sent = post(`esa_flood${i}`, wrong, `203.0.113.${i + 1}`);
      flood.push(
        sent.then((answer) => {
          if (answer.status === 503) refusals.push(answer);
          if (waiting && refusals.length >= waiting.count) waiting.done();
          return answer;
        }),
      );
    }
    await refusedCount(2);
    for (const busy of refusals) {
      expect(busy.status).toBe(503);
      expect(busy.connection).toBe('close');
      await busy.closed; // the server closed it: the refused client must connect again
    }

    // A newcomer's first request takes the place of a waiting flood compare, which is answered 503 and closed too.
    const served = post(newcomer.clientId, newcomer.secret.value, '198.51.100.7');
    await refusedCount(3);
    heldBcrypt.release();
    const answer = await served;
    expect(answer.status).toBe(200);
    expect(answer.connection).toBe('keep-alive');

    const answers = await Promise.all(flood);
    expect(answers.map((a) => a.status).sort()).toEqual([401, 401, 401, 503, 503, 503]);
    for (const a of answers) expect(a.connection).toBe(a.status === 503 ? 'close' : 'keep-alive');
    await refusals[2]!.closed;
  });
});
