/**
 * @module flood
 * `npm run bench:flood` (or `npm run bench -- --flood`): legitimate first requests from the first second
 * of a flood of wrong secrets that fills the token endpoint's bcrypt queue. One scenario per flood shape,
 * limiter setting and store (`FLOOD_SCENARIOS` picks by name, `;` between names, `FLOOD_STORES` by store,
 * `,` between stores; default all): on
 * the memory store, 1 address, 50, 200 and 1,000 IPv4 addresses, and 1,000 /64s of one IPv6 /48, each
 * with the failure limiter off (the bcrypt gate alone) and on (its defaults); on SQLite and PostgreSQL
 * (when reachable), 50 IPv4 addresses, limiter off and on. Per scenario, a fresh library server (`trust
 * proxy`) runs pinned on its core; a separate process floods it with `FLOOD_CONNECTIONS` connections (a
 * new unknown client ID each request, the addresses in turn through `X-Forwarded-For`). One second after
 * the flood's first request, this process runs `LEGIT_WORKERS` newcomers that each send first requests
 * one after another for `LEGIT_SECONDS`, each from its own address, over a new connection, for its own
 * account (never verified by the server, so each needs one bcrypt compare), and one remembered client
 * (verified before the flood) that sends a request over a new connection every `REMEMBERED_GAP_MS`.
 * Reports the newcomers' first answers (at second 1 of the flood), their p50/p99, 503s and time-outs,
 * the remembered client's p99, the flood's statuses, how long the server took to accept every flooding
 * connection, and the compares per second the machine managed; writes `bench/results/flood.json`.
 * Budget, per scenario: every newcomer served, its first answers and p99 ≤ 2 s; the remembered client's
 * p99 ≤ 2 s.
 */
import http from 'node:http';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadavg } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installCleanup, pinCpus, startServer, stopAll } from './lib/children.js';
import { dropSchema, postgresAvailable, schemaUrl } from './lib/postgres.js';
import { percentile } from './lib/load.js';
import { describeMachine, formatBudgets, writeResults, type Budget } from './lib/report.js';
import type { Settings } from './lib/settings.js';
import { postToken } from './lib/token-post.js';

/** Well above the default queue of 256 + 2 running, so the flood alone fills the gate. */
const FLOOD_CONNECTIONS = 400;

type StoreKind = 'memory' | 'sqlite' | 'postgres';
const STORES: readonly StoreKind[] = ['memory', 'sqlite', 'postgres'];
const POSTGRES_SCHEMA = 'bench_flood';

/** One flood shape: where its requests come from (see bench/lib/flood-load.ts), whether the failure limiter is on, and the store. */
interface Scenario {
  readonly name: string;
  readonly addresses: string;
  readonly limiter: boolean;
  readonly store: StoreKind;
}

const SHAPES: ReadonlyArray<readonly [string, string]> = [
  ['1 address', '203.0.113.1'],
  ['50 IPv4 addresses', 'ipv4:50'],
  ['200 IPv4 addresses', 'ipv4:200'],
  ['1,000 IPv4 addresses', 'ipv4:1000'],
  ['1,000 /64s of one IPv6 /48', 'ipv6-48:1000'],
];
const withLimiter = (name: string, addresses: string, store: StoreKind): Scenario[] => {
  const on = store === 'memory' ? name : `${name}, ${store === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`;
  return [
    { name: `${on}, limiter off`, addresses, limiter: false, store },
    { name: `${on}, limiter on`, addresses, limiter: true, store },
  ];
};
const SCENARIOS: readonly Scenario[] = [
  ...SHAPES.flatMap(([name, addresses]) => withLimiter(name, addresses, 'memory')),
  ...withLimiter('50 IPv4 addresses', 'ipv4:50', 'sqlite'),
  ...withLimiter('50 IPv4 addresses', 'ipv4:50', 'postgres'),
];
/** Milliseconds from the flood's first request to the newcomers' first requests: the flood's first second. */
const FLOOD_LEAD_MS = 1000;
/** Seconds allowed for the flood process to start sending. */
const FLOOD_START_SECONDS = 30;
/** Milliseconds between the remembered client's requests. */
const REMEMBERED_GAP_MS = 250;
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

function startFlood(port: number, addresses: string, load: string | undefined): { sending: Promise<void>; running: Promise<void>; stop(): Promise<Record<string, number>> } {
  const script = resolve(__dirname, 'lib', 'flood-load.ts');
  const args = ['--import', 'tsx', script, String(port), String(FLOOD_CONNECTIONS), addresses];
  const child = load ? spawn('taskset', ['-c', load, process.execPath, ...args], { stdio: ['ignore', 'pipe', 'inherit'] }) : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  let notifyRunning: () => void = () => {};
  let notifySending: () => void = () => {};
  const running = new Promise<void>((done) => (notifyRunning = done));
  const sending = new Promise<void>((done) => (notifySending = done));
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes('FLOOD_SENDING\n')) notifySending();
    if (stdout.includes('FLOOD_RUNNING\n')) notifyRunning();
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  process.on('exit', () => child.kill('SIGKILL'));
  return {
    sending,
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
  readonly legit: {
    sent: number;
    served: number;
    busy: number;
    other: number[];
    /** The slowest of the newcomers' first requests, sent one second into the flood. */
    first: number;
    p50: number;
    p99: number;
    max: number;
    inOrder: number[][];
  };
  readonly remembered: { sent: number; served: number; p99: number; max: number };
  readonly flood: { statuses: Record<string, number>; seconds: number; comparesPerSecond: number; acceptedAllAfter: number | null };
}

/** Where a scenario's server keeps its accounts, and how to clean it up. */
async function storeFor(kind: StoreKind): Promise<{ url: string; cleanup(): Promise<void> }> {
  if (kind === 'memory') return { url: 'memory', cleanup: async () => {} };
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'bench-flood-'));
    return { url: `sqlite:${join(dir, 'accounts.db')}`, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  await dropSchema(POSTGRES_SCHEMA);
  return { url: schemaUrl(POSTGRES_SCHEMA), cleanup: () => dropSchema(POSTGRES_SCHEMA).catch(() => undefined) };
}

const sortedMs = (outcomes: readonly Outcome[]): Float64Array => Float64Array.from(outcomes.filter((o) => o.status === 200).map((o) => o.ms)).sort();

async function runScenario(scenario: Scenario, cpus: ReturnType<typeof pinCpus>): Promise<ScenarioResult> {
  log(`scenario: ${scenario.name} (load average ${(loadavg()[0] ?? 0).toFixed(2)})`);
  const store = await storeFor(scenario.store);
  try {
    return await runOn(scenario, store.url, cpus);
  } finally {
    await stopAll();
    await store.cleanup();
  }
}

async function runOn(scenario: Scenario, storeUrl: string, cpus: ReturnType<typeof pinCpus>): Promise<ScenarioResult> {
  const server = await startServer('library', { store: storeUrl, flood: { accounts: LEGIT_REQUESTS + 1, limiter: scenario.limiter } }, cpus);
  const fresh = server.ready.fresh ?? [];
  if (fresh.length <= LEGIT_REQUESTS) throw new Error(`the server reported ${fresh.length} fresh accounts, not ${LEGIT_REQUESTS + 1}`);
  const port = server.ready.port;

  // Warm-up, not measured: one first request before the flood (JIT of the success path, first signing).
  // Its account is the remembered client of the run: verified once, before the flood.
  // A new connection for every request, as a newcomer opens one.
  const agent = new http.Agent({ keepAlive: false });
  const rememberedClient = { ...fresh[LEGIT_REQUESTS]!, address: '198.51.100.250' };
  const warm = await postToken(agent, port, rememberedClient, LEGIT_TIMEOUT_MS);
  if (warm !== 200) throw new Error(`the warm-up token request got ${warm}`);
  const flood = startFlood(port, scenario.addresses, cpus?.load);
  const startTimer = new AbortController();
  const tooLate = sleep(FLOOD_START_SECONDS * 1000, undefined, { signal: startTimer.signal }).then(
    () => Promise.reject(new Error(`the flood did not start within ${FLOOD_START_SECONDS} s`)),
    () => {}, // cancelled: the flood started
  );
  await Promise.race([flood.sending, tooLate]).finally(() => startTimer.abort());
  const floodStart = performance.now();
  let acceptedAllAfter: number | null = null;
  void flood.running.then(() => (acceptedAllAfter = (performance.now() - floodStart) / 1000));
  await sleep(FLOOD_LEAD_MS);

  const outcomes: Outcome[] = [];
  const firsts: number[] = [];
  const accounts = fresh.slice(0, LEGIT_REQUESTS);
  const until = performance.now() + LEGIT_SECONDS * 1000;
  let addresses = 0;
  const worker = async (): Promise<void> => {
    for (let client = accounts.shift(); client && performance.now() < until; client = accounts.shift()) {
      const start = performance.now();
      // Its own address each: two requests from one address would share its turn in the gate.
      const status = await postToken(agent, port, { ...client, address: `198.51.100.${++addresses}` }, LEGIT_TIMEOUT_MS);
      const outcome = { status, ms: performance.now() - start };
      if (outcomes.length < LEGIT_WORKERS) firsts.push(status === 200 ? outcome.ms : Number.POSITIVE_INFINITY);
      outcomes.push(outcome);
    }
  };
  const remembered: Outcome[] = [];
  const rememberedWorker = async (): Promise<void> => {
    while (performance.now() < until) {
      const start = performance.now();
      const status = await postToken(agent, port, rememberedClient, LEGIT_TIMEOUT_MS);
      remembered.push({ status, ms: performance.now() - start });
      await sleep(REMEMBERED_GAP_MS);
    }
  };
  await Promise.all([...Array.from({ length: LEGIT_WORKERS }, worker), rememberedWorker()]);
  const floodStatuses = await flood.stop();
  const floodSeconds = (performance.now() - floodStart) / 1000;

  const served = sortedMs(outcomes);
  const busy = outcomes.filter((o) => o.status === 503).length;
  const other = outcomes.filter((o) => o.status !== 200 && o.status !== 503);
  const p50 = percentile(served, 50);
  const p99 = percentile(served, 99);
  const max = served.length > 0 ? (served[served.length - 1] as number) : Number.NaN;
  const first = firsts.length > 0 ? Math.max(...firsts) : Number.NaN;
  const rememberedServed = sortedMs(remembered);
  const rememberedP99 = percentile(rememberedServed, 99);
  const rememberedMax = rememberedServed.length > 0 ? (rememberedServed[rememberedServed.length - 1] as number) : Number.NaN;
  // Every 401 and every newcomer's 200 here cost one compare: how fast this machine compared during the flood.
  const comparesPerSecond = ((floodStatuses['401'] ?? 0) + served.length) / floodSeconds;
  const pass =
    outcomes.length > 0 &&
    served.length === outcomes.length &&
    first <= P99_BUDGET_MS &&
    p99 <= P99_BUDGET_MS &&
    rememberedServed.length === remembered.length &&
    rememberedP99 <= P99_BUDGET_MS;
  const budget: Budget = {
    name: `${scenario.name}: newcomers at second 1 answered ≤ ${P99_BUDGET_MS} ms, newcomers' and remembered client's p99 ≤ ${P99_BUDGET_MS} ms, every one served`,
    status: pass ? 'PASS' : 'FAIL',
    detail:
      `first ${first.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, ${busy} × 503, ${other.length} other (status 0 = timed out after ${LEGIT_TIMEOUT_MS / 1000} s); ` +
      `remembered p99 ${rememberedP99.toFixed(0)} ms, ${remembered.length - rememberedServed.length} not served`,
  };
  log(
    `  newcomers ${served.length}/${outcomes.length} served, first ${first.toFixed(0)} ms, p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${max.toFixed(0)} ms; ` +
      `remembered ${rememberedServed.length}/${remembered.length}, p99 ${rememberedP99.toFixed(0)} ms; flood ${JSON.stringify(floodStatuses)}; ` +
      `every flooding connection answered after ${acceptedAllAfter === null ? 'never' : `${(acceptedAllAfter as number).toFixed(1)} s`}`,
  );
  return {
    scenario,
    budget,
    legit: { sent: outcomes.length, served: served.length, busy, other: other.map((o) => o.status), first, p50, p99, max, inOrder: outcomes.map((o) => [o.status, Math.round(o.ms)]) },
    remembered: { sent: remembered.length, served: rememberedServed.length, p99: rememberedP99, max: rememberedMax },
    flood: { statuses: floodStatuses, seconds: floodSeconds, comparesPerSecond, acceptedAllAfter },
  };
}

export async function runFlood(settings: Settings): Promise<number> {
  const cpus = pinCpus();
  const machine = describeMachine();
  const only = process.env.FLOOD_SCENARIOS?.split(';').map((s) => s.trim());
  const stores = process.env.FLOOD_STORES?.split(',').map((s) => s.trim()) ?? STORES;
  const postgres = stores.includes('postgres') ? await postgresAvailable() : { ok: false as const, reason: 'not in FLOOD_STORES' };
  if (!postgres.ok && stores.includes('postgres')) log(`bench flood: PostgreSQL scenarios skipped: ${postgres.reason}`);
  const scenarios = SCENARIOS.filter(
    (s) => stores.includes(s.store) && (s.store !== 'postgres' || postgres.ok) && (!only || only.some((o) => s.name.includes(o))),
  );
  installCleanup(settings.timeLimitSeconds * 1000 * scenarios.length);
  log(
    `bench flood: ${scenarios.length} scenarios of ${FLOOD_CONNECTIONS} flooding connections; from ${FLOOD_LEAD_MS / 1000} s into the flood, ` +
      `${LEGIT_WORKERS} newcomers at a time and a remembered client for ${LEGIT_SECONDS} s; load average ${machine.loadAverageAtStart}`,
  );
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) results.push(await runScenario(scenario, cpus));

  console.log('\n| flood | newcomers served | first ms | p50 ms | p99 ms | max ms | remembered p99 ms | flood statuses | all flood connections accepted after | compares/s |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const { scenario, legit, remembered, flood } of results) {
    const statuses = Object.entries(flood.statuses).map(([status, n]) => `${status}: ${n}`).join(', ');
    const accepted = flood.acceptedAllAfter === null ? 'not within the run' : `${flood.acceptedAllAfter.toFixed(1)} s`;
    console.log(
      `| ${scenario.name} | ${legit.served}/${legit.sent} | ${legit.first.toFixed(0)} | ${legit.p50.toFixed(0)} | ${legit.p99.toFixed(0)} | ${legit.max.toFixed(0)} | ` +
        `${remembered.p99.toFixed(0)} | ${statuses} | ${accepted} | ${flood.comparesPerSecond.toFixed(1)} |`,
    );
  }
  console.log(`\nload average at the end: ${(loadavg()[0] ?? 0).toFixed(2)} (at the start ${machine.loadAverageAtStart})\n`);
  console.log(formatBudgets(results.map((r) => r.budget)));
  const path = writeResults('flood.json', {
    kind: 'flood',
    date: new Date().toISOString(),
    machine: { ...machine, loadAverageAtEnd: Number((loadavg()[0] ?? 0).toFixed(2)) },
    settings: { floodConnections: FLOOD_CONNECTIONS, floodLeadMs: FLOOD_LEAD_MS, legitWorkers: LEGIT_WORKERS, legitSeconds: LEGIT_SECONDS, pinned: cpus ?? false },
    scenarios: results,
  });
  console.log(`\nresults: ${path}`);
  return settings.strict && results.some((r) => r.budget.status === 'FAIL') ? 1 : 0;
}
