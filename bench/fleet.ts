/**
 * @module fleet
 * `npm run bench -- --fleet` (or `npm run bench:fleet`): first requests that need a bcrypt check in
 * numbers, with no attacker: a fleet sharing one credential, and returning clients after a restart.
 * The accounts live in one store (SQLite by default, `FLEET_STORE=postgres` for PostgreSQL) that
 * outlives the library servers started on it, each pinned on its core with `trust proxy` (every client
 * has its own address, sent as `X-Forwarded-For`) and the failure limiter at its defaults
 * (`FLEET_LIMITER=off` turns it off). Every request goes over a new connection. In order:
 *
 * 1. **One check.** On a fresh server, one first request of an account never verified: the time of one
 *    bcrypt check here, the yardstick of the fleet's budget.
 * 2. **Fleet.** On that server, `FLEET_WORKERS` (50) workers that share one credential, which the
 *    server has never verified, each send their first request at the same moment.
 * 3. **Before the restart.** The same server serves every one of `FLEET_COLD` (1,000) accounts once,
 *    `FLEET_CONCURRENCY` (50) at a time: the clients are now "served before the restart".
 * 4. **Restart.** A new server on the same store (the first stopped); the first `FLEET_RETURNING` (300)
 *    of those clients come back, 50 at a time.
 * 5. **Cold start.** Another new server; all `FLEET_COLD` clients, which do not cache their tokens,
 *    send their first request at once.
 *
 * Reports, per step, the statuses (200, 503, 429, others; 0 = no answer within 60 s) and p50/p99/max
 * of the served requests; writes `bench/results/fleet.json`. Budgets: the fleet all served with p99
 * within 1.5 times one check; the returning clients all served with p99 under 1 s; no 503 at the cold
 * start to a client served before the restart.
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServiceAccounts } from '../src/index.js';
import { openAccountStore } from '../src/sql/index.js';
import { installCleanup, pinCpus, startServer, stopAll, type CpuPlan, type RunningServer } from './lib/children.js';
import { AUDIENCE, HS256_KEY, ISSUER, KID, SCOPE } from './lib/fixtures.js';
import { percentile } from './lib/load.js';
import { dropSchema, postgresAvailable, schemaUrl } from './lib/postgres.js';
import { describeMachine, formatBudgets, writeResults, type Budget } from './lib/report.js';
import type { Settings } from './lib/settings.js';
import { postToken, type TokenPost } from './lib/token-post.js';

const POSTGRES_SCHEMA = 'bench_fleet';
/** A request still unanswered after this counts as status 0. */
const REQUEST_TIMEOUT_MS = 60_000;
/** Accounts created at once while seeding (each costs one bcrypt hash on the thread pool). */
const SEED_CONCURRENCY = 4;

const log = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

function count(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new TypeError(`${name} must be a whole number ≥ 1, got ${raw}`);
  return value;
}

interface Client {
  readonly clientId: string;
  readonly secret: string;
}

/** What one step saw. */
interface StepResult {
  readonly name: string;
  readonly sent: number;
  readonly statuses: Record<string, number>;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly seconds: number;
}

/** The store the servers share, and how to remove it. */
async function openTarget(): Promise<{ url: string; label: string; cleanup(): Promise<void> }> {
  if (process.env.FLEET_STORE === 'postgres') {
    const postgres = await postgresAvailable();
    if (!postgres.ok) throw new Error(`FLEET_STORE=postgres but PostgreSQL is unavailable: ${postgres.reason}`);
    await dropSchema(POSTGRES_SCHEMA);
    return { url: schemaUrl(POSTGRES_SCHEMA), label: 'PostgreSQL', cleanup: () => dropSchema(POSTGRES_SCHEMA).catch(() => undefined) };
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-fleet-'));
  return { url: `sqlite:${join(dir, 'accounts.db')}`, label: 'SQLite', cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
}

/** The fleet's credential, the yardstick's account and `cold` client accounts, made through the admin API (one bcrypt hash each). */
async function seed(url: string, cold: number): Promise<{ fleet: Client; probe: Client; clients: Client[] }> {
  const store = openAccountStore(url);
  const sa = createServiceAccounts({ store, issuer: ISSUER, audience: AUDIENCE, signingKeys: [{ alg: 'HS256', key: HS256_KEY, kid: KID }] });
  await sa.ready();
  const make = async (name: string): Promise<Client> => {
    const created = await sa.admin.createAccount({ name, scopes: [SCOPE] });
    return { clientId: created.clientId, secret: created.secret.value };
  };
  try {
    const fleet = await make('bench-fleet');
    const probe = await make('bench-probe');
    const clients: Client[] = new Array(cold);
    let next = 0;
    await Promise.all(
      Array.from({ length: SEED_CONCURRENCY }, async () => {
        for (let i = next++; i < cold; i = next++) clients[i] = await make(`bench-returning-${i}`);
      }),
    );
    return { fleet, probe, clients };
  } finally {
    await sa.close();
  }
}

/** The `i`th client address: 10.x.y.z, one per client. */
const addressOf = (i: number): string => `10.${(i >> 16) & 0xff}.${(i >> 8) & 0xff}.${i & 0xff}`;

/** Sends `requests`, `concurrency` at a time (all at once when it is `Infinity`), each over a new connection. */
async function run(name: string, port: number, requests: readonly TokenPost[], concurrency: number): Promise<StepResult> {
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const outcomes: Array<{ status: number; ms: number }> = [];
  const started = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < requests.length; i = next++) {
      const start = performance.now();
      const status = await postToken(agent, port, requests[i]!, REQUEST_TIMEOUT_MS);
      outcomes.push({ status, ms: performance.now() - start });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, requests.length) }, worker));
  agent.destroy();
  const statuses: Record<string, number> = {};
  for (const { status } of outcomes) statuses[status] = (statuses[status] ?? 0) + 1;
  const served = Float64Array.from(outcomes.filter((o) => o.status === 200).map((o) => o.ms)).sort();
  const result: StepResult = {
    name,
    sent: outcomes.length,
    statuses,
    p50: percentile(served, 50),
    p99: percentile(served, 99),
    max: served.length > 0 ? (served[served.length - 1] as number) : Number.NaN,
    seconds: (performance.now() - started) / 1000,
  };
  log(`  ${name}: ${JSON.stringify(statuses)}, p50 ${result.p50.toFixed(0)} ms, p99 ${result.p99.toFixed(0)} ms, max ${result.max.toFixed(0)} ms, ${result.seconds.toFixed(1)} s (load average ${(loadavg()[0] ?? 0).toFixed(2)})`);
  return result;
}

const start = (url: string, cpus: CpuPlan | undefined, client: Client): Promise<RunningServer> =>
  startServer('library', { store: url, client, trustProxy: true, ...(process.env.FLEET_LIMITER === 'off' ? { limiterOff: true } : {}) }, cpus);

export async function runFleet(settings: Settings): Promise<number> {
  const workers = count('FLEET_WORKERS', 50);
  const cold = count('FLEET_COLD', 1000);
  const returning = Math.min(count('FLEET_RETURNING', 300), cold);
  const concurrency = count('FLEET_CONCURRENCY', 50);
  const machine = describeMachine();
  installCleanup(settings.timeLimitSeconds * 1000 * 4);
  const target = await openTarget();
  try {
    log(`bench fleet: ${target.label} store; seeding ${cold + 2} accounts (load average ${machine.loadAverageAtStart})`);
    // Seeded before pinning, so that the hashes use both cores.
    const { fleet, probe, clients } = await seed(target.url, cold);
    const cpus = pinCpus();
    const steps: StepResult[] = [];
    const posts = (list: readonly Client[], from = 0): TokenPost[] => list.map((c, i) => ({ ...c, address: addressOf(from + i) }));

    let server = await start(target.url, cpus, fleet);
    steps.push(await run('one check (a first request on an idle server)', server.ready.port, posts([probe], 1_000_000), 1));
    steps.push(await run(`fleet: ${workers} workers, one credential, at once`, server.ready.port, posts(Array(workers).fill(fleet), 2_000_000), Infinity));
    steps.push(await run(`before the restart: ${cold} clients, ${concurrency} at a time`, server.ready.port, posts(clients), concurrency));
    await server.stop();
    server = await start(target.url, cpus, fleet);
    steps.push(await run(`restart: ${returning} returning clients, ${concurrency} at a time`, server.ready.port, posts(clients.slice(0, returning)), concurrency));
    await server.stop();
    server = await start(target.url, cpus, fleet);
    steps.push(await run(`cold start: ${cold} clients served before, at once`, server.ready.port, posts(clients), Infinity));
    await stopAll();

    const [check, fleetStep, , restart, coldStep] = steps as [StepResult, StepResult, StepResult, StepResult, StepResult];
    const allServed = (s: StepResult): boolean => (s.statuses['200'] ?? 0) === s.sent;
    const others = (s: StepResult): string =>
      Object.entries(s.statuses)
        .filter(([status]) => status !== '200')
        .map(([status, n]) => `${n} × ${status}`)
        .join(', ') || 'none refused';
    const budgets: Budget[] = [
      {
        name: `fleet of ${workers} with one credential: all served, p99 ≤ 1.5 × one check`,
        status: allServed(fleetStep) && fleetStep.p99 <= 1.5 * check.p50 ? 'PASS' : 'FAIL',
        detail: `p99 ${fleetStep.p99.toFixed(0)} ms = ${(fleetStep.p99 / check.p50).toFixed(1)} × one check (${check.p50.toFixed(0)} ms); ${others(fleetStep)}`,
      },
      {
        name: `${returning} returning clients after a restart, ${concurrency} at a time: all served, p99 < 1 s`,
        status: allServed(restart) && restart.p99 < 1000 ? 'PASS' : 'FAIL',
        detail: `p99 ${restart.p99.toFixed(0)} ms; ${others(restart)}`,
      },
      {
        name: `${cold} clients served before, at once against a fresh instance: no 503`,
        status: (coldStep.statuses['503'] ?? 0) === 0 ? 'PASS' : 'FAIL',
        detail: others(coldStep),
      },
    ];

    console.log(`\n| step (${target.label}) | sent | 200 | 503 | 429 | other | p50 ms | p99 ms | max ms |`);
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const s of steps) {
      const other = s.sent - (s.statuses['200'] ?? 0) - (s.statuses['503'] ?? 0) - (s.statuses['429'] ?? 0);
      console.log(
        `| ${s.name} | ${s.sent} | ${s.statuses['200'] ?? 0} | ${s.statuses['503'] ?? 0} | ${s.statuses['429'] ?? 0} | ${other} | ` +
          `${s.p50.toFixed(0)} | ${s.p99.toFixed(0)} | ${s.max.toFixed(0)} |`,
      );
    }
    console.log(`\nload average at the end: ${(loadavg()[0] ?? 0).toFixed(2)} (at the start ${machine.loadAverageAtStart})\n`);
    console.log(formatBudgets(budgets));
    const path = writeResults('fleet.json', {
      kind: 'fleet',
      date: new Date().toISOString(),
      machine: { ...machine, loadAverageAtEnd: Number((loadavg()[0] ?? 0).toFixed(2)) },
      settings: { store: target.label, workers, cold, returning, concurrency, limiter: process.env.FLEET_LIMITER !== 'off', pinned: cpus ?? false },
      steps,
      budgets,
    });
    console.log(`\nresults: ${path}`);
    return settings.strict && budgets.some((b) => b.status === 'FAIL') ? 1 : 0;
  } finally {
    await stopAll();
    await target.cleanup();
  }
}
