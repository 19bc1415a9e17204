/**
 * Vitest setup file (runs before every test file, in its process): installs the hooks of the
 * secret-leak guard (see test/helpers/leak-guard.ts) and fails the test file if anything it captured
 * held a secret value or a hash. Issue 6 point 6: "a test scans every log line, audit event and
 * response produced by a full test run for secret values and hashes and finds none".
 *
 * Hooks (all pass-through; none changes what the code under test sees):
 * - bcrypt.hash: records every hash made in the process and its input (the SHA-256 pre-hash);
 * - console.*, process.stdout.write, process.stderr.write: captured;
 * - http.ServerResponse write/end: every response of an in-process server (status line, headers, body);
 * test/helpers/create-app.ts adds audit events, admin results and admin errors; run-cli.ts and
 * examples/example-server.ts add the output of the processes they spawn.
 */
import { ServerResponse } from 'node:http';
import { format } from 'node:util';
import bcrypt from 'bcrypt';
import { afterAll } from 'vitest';
import { leakGuard } from '../helpers/leak-guard.js';

const guard = leakGuard();
const INSTALLED = Symbol.for('express-service-accounts.test.leak-guard.installed');
const holder = globalThis as unknown as Record<symbol, boolean | undefined>;

if (!holder[INSTALLED]) {
  holder[INSTALLED] = true;

  // bcrypt: the library hashes through `bcrypt.hash(prehash, rounds)` (promise form).
  const hash = bcrypt.hash.bind(bcrypt) as (data: string | Buffer, salt: string | number) => Promise<string>;
  (bcrypt as { hash: unknown }).hash = (data: string | Buffer, salt: string | number, ...rest: unknown[]): unknown => {
    if (rest.length > 0) return (hash as (...args: unknown[]) => unknown)(data, salt, ...rest);
    return hash(data, salt).then((result) => {
      leakGuard().recordHash(String(data), result);
      return result;
    });
  };

  for (const level of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
    const original = console[level];
    console[level] = function (this: Console, ...args: unknown[]) {
      leakGuard().capture(`console.${level}`, format(...args));
      return original.apply(this, args);
    };
  }

  for (const [name, stream] of [['stdout', process.stdout], ['stderr', process.stderr]] as const) {
    const original = stream.write;
    stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
      leakGuard().capture(`process.${name}`, typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) || chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : String(chunk));
      return (original as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof stream.write;
  }

  // Every response of every in-process server (ServerResponse only: requests a test sends are not output).
  const text = (chunk: unknown): string =>
    typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8') : '';
  const proto = ServerResponse.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const write = proto.write!;
  const end = proto.end!;
  proto.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    leakGuard().capture('response body', text(chunk));
    return write.call(this, chunk, ...rest);
  };
  proto.end = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    const result = end.call(this, chunk, ...rest);
    const head = (this as unknown as { _header?: unknown })._header;
    leakGuard().capture('response', `${typeof head === 'string' ? head : `${this.statusCode}`}${typeof chunk === 'function' ? '' : text(chunk)}`);
    return result;
  };
}

afterAll(async () => {
  await guard.settleChildren();
  const findings = guard.takeFindings();
  if (findings.length > 0) {
    throw new Error(
      `Secret leak: ${findings.length} finding(s) in this test file's output (issue 6 point 6):\n` +
        findings.map((f) => `  - ${f.what} in ${f.channel}: ${f.line}`).join('\n'),
    );
  }
});
