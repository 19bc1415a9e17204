/**
 * @module flood
 * `npm run bench:flood` (or `npm run bench -- --flood`): legitimate first requests while a flood of
 * wrong secrets fills the token endpoint's bcrypt queue. One scenario per flood shape and limiter
 * setting (`FLOOD_SCENARIOS`, default all): 1 address, 50, 200 and 1,000 IPv4 addresses, and 1,000 /64s of
 * one IPv6 /48, each with the failure limiter off (the bcrypt gate alone) and on (its defaults). Per
 * scenario, a fresh library server (memory store, `trust proxy`) runs pinned on its core; a separate
 * process floods it with `FLOOD_CONNECTIONS` connections (a new unknown client ID each request, the
 * addresses in turn through `X-Forwarded-For`); once the flood has filled the queue, this process runs
 * `LEGIT_WORKERS` clients that each send first requests one after another for `LEGIT_SECONDS`, each from
 * its own address and for its own account (never verified by the server, so each needs one bcrypt
 * compare): what a new client sees during the flood, not what a queue of other newcomers adds to it.
 * Reports p50/p99 of the legitimate requests, their 503s and time-outs, the flood's statuses and the
 * compares per second the machine managed; writes `bench/results/flood.json`. Budget, per scenario:
 * p99 ≤ 2 s, every one served.
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

/** One flood shape: where its requests come from (see bench/lib/flood-load.ts), and whether the failure limiter is on. */
interface Scenario {
  readonly name: string;
  readonly addresses: string;
  readonly limiter: boolean;
}

const SHAPES: ReadonlyArray<readonly [string, string]> = [
  ['1 address', '203.0.113.1'],
  ['50 IPv4 addresses', 'ipv4:50'],
  ['200 IPv4 addresses', 'ipv4:200'],
  ['1,000 IPv4 addresses', 'ipv4:1000'],
  ['1,000 /64s of one IPv6 /48', 'ipv6-48:1000'],
];
const SCENARIOS: readonly Scenario[] = SHAPES.flatMap(([name, addresses]) => [
  { name: `${name}, limiter off`, addresses, limiter: false },
  { name: `${name}, limiter on`, addresses, limiter: true },
]);
/** Seconds the flood runs, once every flooding connection has had an answer, before the first legitimate request. */
const FLOOD_LEAD_SECONDS = 3;
/**
 * Seconds allowed for the server to accept every flooding connection. Node accepts one connection per
 * event-loop turn, and each turn answers many flood requests, so on a busy machine this takes tens of seconds.
 */
const FLOOD_START_SECONDS = 120;
/** Accounts made for the legitimate clients: more than they can use in `LEGIT_SECONDS`. */
const LEGIT_REQUESTS = 60;
const LEGIT_WORKERS = 2;
/** Seconds during which the legitimate clients start requests. */
const LEGIT_SECONDS = 15;
/** A legitimate request still waiting after this is counted as timed out. */
const LEGIT_TIMEOUT_MS = 30_000;
const P99_BUDGET_MS = 2000;
const log = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

interface Outcome {
  readonly status: number;
  readonly ms: number;
}

function startFlood(port: number, addresses: string, load: string | undefined): { running: Promise<void>; stop(): Promise<Record<string, number>> } {
  const script = resolve(__dirname, 'lib', 'flood-load.ts');
  const args = ['--import', 'tsx', script, String(port), String(FLOOD_CONNECTIONS), addresses];
  const child = load ? spawn('taskset', ['-c', load, process.execPath, ...args], { stdio: ['ignore', 'pipe', 'inherit'] }) : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  let notifyRunning: () => void = () => {};
  const running = new Promise<void>((done) => (notifyRunning = done));
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes('FLOOD_RUNNING\n')) notifyRunning();
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  process.on('exit', () => child.kill('SIGKILL'));
  return {
    running,
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

interface ScenarioResult {
  readonly scenario: Scenario;
  readonly budget: Budget;
  readonly legit: { sent: number; served: number; busy: number; other: number[]; p50: number; p99: number; max: number; inOrder: number[][] };
  readonly flood: { statuses: Record<string, number>; seconds: number; comparesPerSecond: number };
}

async function runScenario(scenario: Scenario, cpus: ReturnType<typeof pinCpus>): Promise<ScenarioResult> {
  log(`scenario: ${scenario.name}`);
  const server = await startServer('library', { flood: { accounts: LEGIT_REQUESTS + 1, limiter: scenario.limiter } }, cpus);
  const fresh = server.ready.fresh ?? [];
  if (fresh.length <= LEGIT_REQUESTS) throw new Error(`the server reported ${fresh.length} fresh accounts, not ${LEGIT_REQUESTS + 1}`);
  const port = server.ready.port;

  const floodStart = performance.now();
  // Warm-up, not measured: one first request before the flood (JIT of the success path, first signing).
  // A new connection for every request, as a newcomer opens one.
  const agent = new http.Agent({ keepAlive: false });
  const warm = await postToken(agent, port, { ...fresh[LEGIT_REQUESTS]!, address: '198.51.100.250' }, LEGIT_TIMEOUT_MS);
  if (warm !== 200) throw new Error(`the warm-up token request got ${warm}`);
  const flood = startFlood(port, scenario.addresses, cpus?.load);
  const startTimer = new AbortController();
  const tooLate = sleep(FLOOD_START_SECONDS * 1000, undefined, { signal: startTimer.signal }).then(
    () => Promise.reject(new Error(`the flood did not start within ${FLOOD_START_SECONDS} s`)),
    () => {}, // cancelled: the flood started
  );
  await Promise.race([flood.running, tooLate]).finally(() => startTimer.abort());
  log(`  every flooding connection answered after ${((performance.now() - floodStart) / 1000).toFixed(1)} s`);
  await sleep(FLOOD_LEAD_SECONDS * 1000);
  const outcomes: Outcome[] = [];
  const accounts = fresh.slice(0, LEGIT_REQUESTS);
  const until = performance.now() + LEGIT_SECONDS * 1000;
  let addresses = 0;
  const worker = async (): Promise<void> => {
    for (let client = accounts.shift(); client && performance.now() < until; client = accounts.shift()) {
      const start = performance.now();
      // Its own address each: two requests from one address would share its turn in the gate.
      const status = await postToken(agent, port, { ...client, address: `198.51.100.${++addresses}` }, LEGIT_TIMEOUT_MS);
      outcomes.push({ status, ms: performance.now() - start });
    }
  };
  await Promise.all(Array.from({ length: LEGIT_WORKERS }, worker));
  const floodStatuses = await flood.stop();
  const floodSeconds = (performance.now() - floodStart) / 1000;
  await stopAll();

  const served = Float64Array.from(outcomes.filter((o) => o.status === 200).map((o) => o.ms)).sort();
  const busy = outcomes.filter((o) => o.status === 503).length;
  const other = outcomes.filter((o) => o.status !== 200 && o.status !== 503);
  const p50 = percentile(served, 50);
  const p99 = percentile(served, 99);
  const max = served.length > 0 ? (served[served.length - 1] as number) : Number.NaN;
  // Every 401 and every 200 here cost one compare: how fast this machine compared during the flood.
  const comparesPerSecond = ((floodStatuses['401'] ?? 0) + served.length) / floodSeconds;
  const budget: Budget = {
    name: `${scenario.name}: legitimate first request p99 ≤ ${P99_BUDGET_MS} ms, every one served`,
    status: outcomes.length > 0 && served.length === outcomes.length && p99 <= P99_BUDGET_MS ? 'PASS' : 'FAIL',
    detail: `p99 ${p99.toFixed(0)} ms, ${busy} × 503, ${other.length} other (status 0 = timed out after ${LEGIT_TIMEOUT_MS / 1000} s)`,
  };
  log(`  ${served.length}/${outcomes.length} served, p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${max.toFixed(0)} ms; flood ${JSON.stringify(floodStatuses)}`);
  return {
    scenario,
    budget,
    legit: { sent: outcomes.length, served: served.length, busy, other: other.map((o) => o.status), p50, p99, max, inOrder: outcomes.map((o) => [o.status, Math.round(o.ms)]) },
    flood: { statuses: floodStatuses, seconds: floodSeconds, comparesPerSecond },
  };
}

export async function runFlood(settings: Settings): Promise<number> {
  const cpus = pinCpus();
  const machine = describeMachine();
  const only = process.env.FLOOD_SCENARIOS?.split(',').map((s) => s.trim());
  const scenarios = only ? SCENARIOS.filter((s) => only.some((o) => s.name.includes(o))) : SCENARIOS;
  installCleanup(settings.timeLimitSeconds * 1000 * scenarios.length);
  log(
    `bench flood: ${scenarios.length} scenarios of ${FLOOD_CONNECTIONS} flooding connections; legitimate first requests, ` +
      `${LEGIT_WORKERS} at a time for ${LEGIT_SECONDS} s after ${FLOOD_LEAD_SECONDS} s; load average ${machine.loadAverageAtStart}`,
  );
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) results.push(await runScenario(scenario, cpus));

  console.log('\n| flood | served | p50 ms | p99 ms | max ms | flood statuses | compares/s |');
  console.log('|---|---|---|---|---|---|---|');
  for (const { scenario, legit, flood } of results) {
    const statuses = Object.entries(flood.statuses).map(([status, n]) => `${status}: ${n}`).join(', ');
    console.log(`| ${scenario.name} | ${legit.served}/${legit.sent} | ${legit.p50.toFixed(0)} | ${legit.p99.toFixed(0)} | ${legit.max.toFixed(0)} | ${statuses} | ${flood.comparesPerSecond.toFixed(1)} |`);
  }
  console.log(`\nload average at the end: ${(loadavg()[0] ?? 0).toFixed(2)} (at the start ${machine.loadAverageAtStart})\n`);
  console.log(formatBudgets(results.map((r) => r.budget)));
  const path = writeResults('flood.json', {
    kind: 'flood',
    date: new Date().toISOString(),
    machine: { ...machine, loadAverageAtEnd: Number((loadavg()[0] ?? 0).toFixed(2)) },
    settings: { floodConnections: FLOOD_CONNECTIONS, legitWorkers: LEGIT_WORKERS, legitSeconds: LEGIT_SECONDS, pinned: cpus ?? false },
    scenarios: results,
  });
  console.log(`\nresults: ${path}`);
  return settings.strict && results.some((r) => r.budget.status === 'FAIL') ? 1 : 0;
}
