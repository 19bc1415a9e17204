/**
 * @module sequential-driver
 * The instruction bench's request driver, a process of its own (`node --import tsx`, never under
 * valgrind): W warm-up requests, a full garbage collection in the server (GC_SIGNAL in callgrind.ts),
 * `callgrind_control -z`, exactly N measured requests, then
 * `callgrind_control -d`. One keep-alive connection (`maxSockets: 1`), one request at a time; every
 * answer's status is checked, and one wrong answer fails the run. Input: `INSTR_DRIVER` (JSON
 * DriverInput in callgrind.ts); output: one line `INSTR_DRIVER_DONE {json}` on stdout.
 */
import { existsSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { callgrindControl, DONE_PREFIX, GC_SIGNAL, type DriverInput } from './callgrind.js';
import { assertionBody } from './assertion-body.js';
import { dpopProof } from './dpop-proof.js';
import type { LoadRequest } from './load.js';

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function send(port: number, load: LoadRequest): Promise<number> {
  return new Promise((resolve, reject) => {
    const text = load.assertion ? assertionBody(load.assertion) : load.body;
    const body = text === undefined ? undefined : Buffer.from(text);
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: load.path,
        method: load.method ?? 'GET',
        agent,
        headers: { ...load.headers, ...(load.dpop ? { dpop: dpopProof(load.dpop) } : {}), ...(body ? { 'content-length': String(body.length) } : {}) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function sendMany(input: DriverInput, count: number, phase: string): Promise<void> {
  for (let i = 0; i < count; i++) {
    const status = await send(input.port, input.request);
    if (status < 200 || status >= 300) throw new Error(`${phase} request ${i + 1}/${count} answered ${status}`);
  }
}

/** Has the server collect garbage and waits until it says it did (valgrind may take a while). */
async function collectGarbage(input: DriverInput): Promise<void> {
  rmSync(input.gcAck, { force: true });
  process.kill(input.pid, GC_SIGNAL);
  for (const started = Date.now(); !existsSync(input.gcAck); await sleep(20)) {
    if (Date.now() - started > 300_000) throw new Error('the server did not confirm its garbage collection within 300 s');
  }
}

async function main(): Promise<void> {
  const input = JSON.parse(process.env.INSTR_DRIVER ?? 'null') as DriverInput | null;
  if (!input) throw new Error('INSTR_DRIVER is not set');
  callgrindControl(input.pid, '--instr=on');
  await sendMany(input, input.warmup, 'warm-up');
  await collectGarbage(input);
  callgrindControl(input.pid, '--zero');
  await sendMany(input, input.requests, 'measured');
  callgrindControl(input.pid, '--dump');
  agent.destroy();
  process.stdout.write(`${DONE_PREFIX}${JSON.stringify({ requests: input.requests })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
