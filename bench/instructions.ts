/**
 * @module instructions
 * `npm run bench:instructions`: instructions per request, counted by valgrind's callgrind, for every
 * case of `npm run bench`. Each case runs R times, each time in a fresh server process under
 * callgrind (Node `--single-threaded`): W warm-up requests, counters zeroed, exactly N sequential
 * keep-alive requests from a driver process (lib/sequential-driver.ts), counters dumped; the dump's
 * total ÷ N is the figure. The same W and N for every case. Budgets: lib/budgets.ts. Exit 2 without
 * valgrind, 1 when a case fails or a budget fails. Settings: lib/settings.ts.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { judgeInstructionBudgets } from './lib/budgets.js';
import { bundleServer } from './lib/bundle.js';
import { callgrindLaunch, callgrindMissing, DONE_PREFIX, readDumpTotal, type DriverInput } from './lib/callgrind.js';
import { buildCases, type Case } from './lib/cases.js';
import { installCleanup, startServer, stopAll } from './lib/children.js';
import { mintAccessToken } from './lib/fixtures.js';
import { dropSchema, postgresAvailable, schemaUrl } from './lib/postgres.js';
import { describeMachine, formatBudgets, formatInstructionTable, writeResults, type InstructionResult } from './lib/report.js';
import { readInstructionSettings, type InstructionSettings } from './lib/settings.js';

/** Bundles and dumps of this run (removed at the end unless `INSTR_KEEP=1`, for `callgrind_annotate`). */
const WORK_DIR = resolve(__dirname, 'results', 'instructions', `run-${process.pid}`);
const DRIVER = resolve(__dirname, 'lib', 'sequential-driver.ts');
/** Seconds one server run takes beyond its requests (valgrind start-up, checks), and per request (warm). */
const RUN_OVERHEAD_SECONDS = 25;
const SECONDS_PER_REQUEST = 0.012;
/**
 * Wall-clock settings of the library servers under callgrind. Valgrind runs a request ~50× slower, so
 * anything Node or the library does per second of wall time happens ~50× more often per request than
 * natively, and whether it falls inside the counted requests depends on how busy the host is. Two kinds
 * (docs/performance.md explains each):
 * - Deadlines change nothing unless they fire, and under valgrind they can fire where natively they never
 *   would: a cold PostgreSQL read took longer than the 2 s `storeTimeout` (a 503 in the warm-up), and
 *   the connection is idle for seconds while the server collects garbage before the window, longer
 *   than Node's 5 s keep-alive may allow. Stretched (`storeTimeout` to its maximum, keep-alive 10 min).
 * - Periodic work: an account's status is read again `statusCacheTtl` (30 s) after it was cached, and the
 *   PostgreSQL store polls its change feed every 200 ms. Natively that is one store read per account per
 *   ~240,000 requests and one poll per ~1,600 (at 8,000 req/s); under valgrind the 30 s fell inside some
 *   windows and not others, and on the token endpoint the first expiry also made V8 deoptimize the
 *   client-authentication middleware (+2% in those runs only). Both are moved beyond a server's
 *   lifetime: what a poll costs is measured on its own (bench/poll-cost.ts, docs/performance.md). A
 *   stretched poll interval alone would not do: the feed reports itself failing when no poll has
 *   succeeded for `pollIntervalMs + 200 ms`, and under valgrind a poll takes longer than 200 ms, so each
 *   poll cycle dropped every cached account and turned into store reads.
 */
const LIBRARY_WALL_CLOCK = { statusCacheTtl: 3_600_000, storeTimeout: 60_000 } as const;
const POSTGRES_WALL_CLOCK = { pollIntervalMs: 3_600_000 } as const;
const schemaOf = (repeat: number): string => `bench_instr_${repeat}`;
const log = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

/** Runs the driver process against a server under callgrind; resolves when its dump is written. */
function drive(input: DriverInput): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', DRIVER], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, INSTR_DRIVER: JSON.stringify(input) },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', fail);
    child.on('exit', (code) => {
      if (code === 0 && out.includes(DONE_PREFIX)) done();
      else fail(new Error(`driver failed (exit ${code}): ${err.trim().split('\n').pop() ?? ''}`));
    });
  });
}

/** One server process of one case: instructions per measured request. */
async function measureOnce(c: Case, repeat: number, script: string, settings: InstructionSettings): Promise<number> {
  const outFile = resolve(WORK_DIR, `callgrind.${c.id}.${repeat}.out`);
  for (const suffix of ['', '.1']) rmSync(outFile + suffix, { force: true });
  const gcAck = resolve(WORK_DIR, `gc.${c.id}.${repeat}`);
  const config = {
    ...c.config,
    ...(c.server === 'library' ? LIBRARY_WALL_CLOCK : {}),
    ...(c.postgres ? { store: schemaUrl(schemaOf(repeat)), ...POSTGRES_WALL_CLOCK } : {}),
    keepAliveTimeout: 600_000,
    gcAck,
  };
  const server = await startServer(c.server, config, undefined, callgrindLaunch(outFile, script));
  try {
    const request = await c.prepare(server.ready);
    await drive({ port: server.ready.port, pid: server.child.pid!, request, warmup: settings.warmup, requests: settings.requests, gcAck });
    return readDumpTotal(`${outFile}.1`) / settings.requests;
  } finally {
    await server.stop();
  }
}

/** Runs `tasks` with at most `jobs` at once. */
async function pool(tasks: readonly (() => Promise<void>)[], jobs: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) await tasks[next++]!();
  };
  await Promise.all(Array.from({ length: Math.min(jobs, tasks.length) }, worker));
}

function summarize(c: Case, values: readonly number[], failed: string | undefined): Omit<InstructionResult, 'ratio'> {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const min = Math.min(...values);
  const max = Math.max(...values);
  return { id: c.id, label: c.label, group: c.group, perRequest: values, mean, min, max, spread: (max - min) / 2 / mean, ...(failed ? { failed } : {}) };
}

async function main(): Promise<number> {
  const missing = callgrindMissing();
  if (missing) {
    console.error(`bench:instructions: ${missing}`);
    return 2;
  }
  const settings = readInstructionSettings();
  const postgres = await postgresAvailable();
  const skipped: Record<string, string> = {};
  const cases = buildCases(mintAccessToken(), schemaUrl(schemaOf(0))).filter((c) => {
    if (settings.only && !settings.only.includes(c.id) && !c.bare) skipped[c.id] = 'not in BENCH_ONLY';
    else if (c.postgres && !postgres.ok) skipped[c.id] = `PostgreSQL unavailable (set POSTGRES_URL): ${postgres.reason}`;
    else return true;
    return false;
  });
  const runs = cases.length * settings.repeats;
  const estimate = Math.ceil((runs * (RUN_OVERHEAD_SECONDS + (settings.warmup + settings.requests) * SECONDS_PER_REQUEST)) / settings.jobs);
  installCleanup(Math.max(3600, estimate * 3) * 1000);
  log(
    `bench:instructions: ${cases.length} cases × ${settings.repeats} server runs, W=${settings.warmup}, N=${settings.requests}, ` +
      `${settings.jobs} at once; ~${Math.ceil(estimate / 60)} min; load average ${describeMachine().loadAverageAtStart}`,
  );

  const scripts = new Map([...new Set(cases.map((c) => c.server))].map((name) => [name, bundleServer(name, WORK_DIR)]));
  const postgresRepeats = cases.some((c) => c.postgres) ? Array.from({ length: settings.repeats }, (_, r) => r + 1) : [];
  for (const r of postgresRepeats) await dropSchema(schemaOf(r));

  const values = new Map<string, number[]>(cases.map((c) => [c.id, []]));
  const errors = new Map<string, string>();
  const tasks = Array.from({ length: settings.repeats }, (_, r) =>
    cases.map((c) => async () => {
      if (errors.has(c.id)) return;
      try {
        const perRequest = await measureOnce(c, r + 1, scripts.get(c.server)!, settings);
        values.get(c.id)!.push(perRequest);
        log(`  ${c.id} #${r + 1}: ${Math.round(perRequest).toLocaleString('en-US')} instructions/request`);
      } catch (err) {
        errors.set(c.id, err instanceof Error ? err.message.split('\n')[0]! : String(err));
        log(`  ${c.id} #${r + 1}: FAILED: ${errors.get(c.id)}`);
      }
    }),
  ).flat();
  await pool(tasks, settings.jobs);
  for (const r of postgresRepeats) await dropSchema(schemaOf(r)).catch(() => undefined);

  const partial = cases.map((c) => summarize(c, values.get(c.id)!, errors.get(c.id)));
  const bare = new Map(partial.filter((row, i) => cases[i]!.bare && !row.failed).map((row) => [row.group, row.mean]));
  const rows: InstructionResult[] = partial.map((row) => ({ ...row, ratio: (bare.get(row.group) ?? Number.NaN) / row.mean }));
  const budgets = judgeInstructionBudgets(rows, new Set(Object.keys(skipped)));

  console.log(`\n${formatInstructionTable(rows)}\n`);
  console.log(formatBudgets(budgets));
  for (const [id, why] of Object.entries(skipped)) console.log(`SKIPPED ${id}: ${why}`);
  const path = writeResults('instructions-latest.json', { kind: 'instructions', date: new Date().toISOString(), machine: describeMachine(), settings, rows, budgets, skipped });
  console.log(`\nresults: ${path}`);
  if (process.env.INSTR_KEEP === '1') console.log(`callgrind dumps: ${WORK_DIR}`);
  else rmSync(WORK_DIR, { recursive: true, force: true });
  return errors.size > 0 || budgets.some((b) => b.status === 'FAIL') ? 1 : 0;
}

main()
  .catch((err: unknown) => {
    log(`bench:instructions: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  })
  .then(async (code) => {
    await stopAll();
    process.exit(code);
  });
