/**
 * @module flood
 * `npm run bench:flood` (or `npm run bench -- --flood`): legitimate first requests while one address
 * floods the token endpoint. The library server (memory store, `trust proxy`, no failure limiter, so
 * the bcrypt gate alone) runs pinned on its core; a separate process floods it from one address with
 * `FLOOD_CONNECTIONS` connections of wrong secrets (a new unknown client ID each time); once the flood
 * has filled the bcrypt queue, this process sends `LEGIT_REQUESTS` first requests, one every
 * `LEGIT_INTERVAL_MS`, each from its own address and for its own account (never verified by the
 * server, so each needs one bcrypt compare). Reports p50/p99 of the legitimate requests, their 503s and
 * time-outs, and what the flood got; writes `bench/results/flood.json`. Budget: p99 ≤ 2 s, no 503.
 */
import http from 'node:http';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadavg } from 'node:os';
import { installCleanup, pinCpus, startServer, stopAll } from './lib/children.js';
import { percentile } from './lib/load.js';
import { describeMachine, formatBudgets, writeResults, type Budget } from './lib/report.js';
import type { Settings } from './lib/settings.js';
import { postToken } from './lib/token-post.js';

/** Above the default queue of 256 + 2 running, so the flood alone fills the gate. */
const FLOOD_CONNECTIONS = 300;
const FLOOD_ADDRESS = '203.0.113.1';
/** Seconds the flood runs before the first legitimate request (the queue fills within ~1 s). */
const FLOOD_LEAD_SECONDS = 3;
const LEGIT_REQUESTS = 60;
const LEGIT_INTERVAL_MS = 250;
/** A legitimate request still waiting after this is counted as timed out (before the fair gate, some waited 40 s). */
const LEGIT_TIMEOUT_MS = 60_000;
const P99_BUDGET_MS = 2000;
const log = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

interface Outcome {
  readonly status: number;
  readonly ms: number;
}

function startFlood(port: number, load: string | undefined): { stop(): Promise<Record<string, number>> } {
  const script = resolve(__dirname, 'lib', 'flood-load.ts');
  const args = ['--import', 'tsx', script, String(port), String(FLOOD_CONNECTIONS), FLOOD_ADDRESS];
  const child = load ? spawn('taskset', ['-c', load, process.execPath, ...args], { stdio: ['ignore', 'pipe', 'inherit'] }) : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  process.on('exit', () => child.kill('SIGKILL'));
  return {
    async stop() {
      child.kill('SIGTERM');
      await exited;
      try {
        return (JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { statuses?: Record<string, number> }).statuses ?? {};
      } catch {
        return {};
      }
    },
  };
}

export async function runFlood(settings: Settings): Promise<number> {
  const cpus = pinCpus();
  const machine = describeMachine();
  installCleanup(settings.timeLimitSeconds * 1000);
  log(
    `bench flood: ${FLOOD_CONNECTIONS} flooding connections from ${FLOOD_ADDRESS}; ${LEGIT_REQUESTS} legitimate first requests, ` +
      `one every ${LEGIT_INTERVAL_MS} ms after ${FLOOD_LEAD_SECONDS} s; load average ${machine.loadAverageAtStart}`,
  );
  const server = await startServer('library', { flood: { accounts: LEGIT_REQUESTS } }, cpus);
  const fresh = server.ready.fresh ?? [];
  if (fresh.length < LEGIT_REQUESTS) throw new Error(`the server reported ${fresh.length} fresh accounts, not ${LEGIT_REQUESTS}`);
  const port = server.ready.port;

  const flood = startFlood(port, cpus?.load);
  await sleep(FLOOD_LEAD_SECONDS * 1000);
  log('  flooding; sending the legitimate requests');
  const agent = new http.Agent({ keepAlive: true, maxSockets: LEGIT_REQUESTS });
  const outcomes = await Promise.all(
    fresh.slice(0, LEGIT_REQUESTS).map(async (client, i): Promise<Outcome> => {
      await sleep(i * LEGIT_INTERVAL_MS);
      const start = performance.now();
      const status = await postToken(agent, port, { ...client, address: `198.51.100.${i + 1}` }, LEGIT_TIMEOUT_MS);
      return { status, ms: performance.now() - start };
    }),
  );
  const floodStatuses = await flood.stop();
  await stopAll();

  const served = Float64Array.from(outcomes.filter((o) => o.status === 200).map((o) => o.ms)).sort();
  const busy = outcomes.filter((o) => o.status === 503).length;
  const other = outcomes.filter((o) => o.status !== 200 && o.status !== 503);
  const p50 = percentile(served, 50);
  const p99 = percentile(served, 99);
  const max = served.length > 0 ? (served[served.length - 1] as number) : Number.NaN;
  const budget: Budget = {
    name: `legitimate first request during a flood from one address: p99 ≤ ${P99_BUDGET_MS} ms, every one served`,
    status: served.length === LEGIT_REQUESTS && p99 <= P99_BUDGET_MS ? 'PASS' : 'FAIL',
    detail: `p99 ${p99.toFixed(0)} ms, ${busy} × 503, ${other.length} other (status 0 = timed out after ${LEGIT_TIMEOUT_MS / 1000} s)`,
  };
  console.log(`\nlegitimate first requests: ${served.length}/${LEGIT_REQUESTS} served (200), ${busy} × 503, ${other.length} other`);
  console.log(`  latency of the served ones: p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${max.toFixed(0)} ms`);
  console.log(`flood from ${FLOOD_ADDRESS}: ${JSON.stringify(floodStatuses)}\n`);
  console.log(formatBudgets([budget]));
  const path = writeResults('flood.json', {
    kind: 'flood',
    date: new Date().toISOString(),
    machine: { ...machine, loadAverageAtEnd: Number((loadavg()[0] ?? 0).toFixed(2)) },
    settings: { floodConnections: FLOOD_CONNECTIONS, legitRequests: LEGIT_REQUESTS, legitIntervalMs: LEGIT_INTERVAL_MS, pinned: cpus ?? false },
    legit: { served: served.length, busy, other: other.map((o) => o.status), p50, p99, max },
    flood: floodStatuses,
    budget,
  });
  console.log(`\nresults: ${path}`);
  return settings.strict && budget.status === 'FAIL' ? 1 : 0;
}
