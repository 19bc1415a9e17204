/**
 * @module run
 * `npm run bench`: each server in its own process (pinned apart from the load generator), checked for
 * correct answers, warmed up, then loaded with autocannon in interleaved slices; one table with ratios
 * to bare Express from the same run, the issue-4 budgets, and `bench/results/latest.json`.
 * `npm run bench -- --scale` runs the 100,000-account case instead (bench/scale.ts); `npm run bench -- --flood`
 * (or `npm run bench:flood`) runs the flood case (bench/flood.ts); `npm run bench -- --fleet` (or
 * `npm run bench:fleet`) the fleet and restart case (bench/fleet.ts).
 * Settings: see lib/settings.ts.
 */
import { loadavg } from 'node:os';
import { installCleanup, pinCpus, startServer, stopAll, type RunningServer } from './lib/children.js';
import { buildCases, type Case } from './lib/cases.js';
import { mintAccessToken } from './lib/fixtures.js';
import { Measurement, stopLoad, warmUp, type LoadRequest } from './lib/load.js';
import { dropSchema, postgresAvailable, schemaUrl } from './lib/postgres.js';
import { describeMachine, formatBudgets, formatTable, writeResults, type Row } from './lib/report.js';
import { judgeBudgets } from './lib/budgets.js';
import { CASE_OVERHEAD_SECONDS, SLICE_OVERHEAD_SECONDS, readSettings } from './lib/settings.js';
import { runScale } from './scale.js';
import { runFlood } from './flood.js';
import { runFleet } from './fleet.js';

const POSTGRES_SCHEMA = 'bench_main';
const log = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

interface Loaded {
  readonly c: Case;
  readonly server: RunningServer;
  readonly request: LoadRequest;
  readonly measurement: Measurement;
}

async function main(): Promise<number> {
  const settings = readSettings();
  if (process.argv.includes('--scale')) return runScale(settings);
  if (process.argv.includes('--flood')) return runFlood(settings);
  if (process.argv.includes('--fleet')) return runFleet(settings);

  const cpus = pinCpus();
  const machine = describeMachine();
  const postgres = await postgresAvailable();
  const skipped: Record<string, string> = {};
  const cases = buildCases(mintAccessToken(), schemaUrl(POSTGRES_SCHEMA)).filter((c) => {
    if (settings.only && !settings.only.includes(c.id) && !c.bare) {
      skipped[c.id] = 'not in BENCH_ONLY';
      return false;
    }
    if (c.postgres && !postgres.ok) {
      skipped[c.id] = `PostgreSQL unavailable: ${postgres.reason}`;
      return false;
    }
    return true;
  });
  const estimate = Math.ceil(
    cases.length * (settings.warmupSeconds + settings.durationSeconds + CASE_OVERHEAD_SECONDS + settings.rounds * SLICE_OVERHEAD_SECONDS),
  );
  if (estimate > settings.timeLimitSeconds) {
    throw new Error(`${cases.length} cases would take ~${estimate} s, over the ${settings.timeLimitSeconds} s limit: lower BENCH_DURATION/BENCH_WARMUP`);
  }
  installCleanup(settings.timeLimitSeconds * 1000);
  log(
    `bench: ${cases.length} cases, ~${estimate} s; ${settings.connections} connections; ` +
      `${settings.rounds} interleaved slices of ${(settings.durationSeconds / settings.rounds).toFixed(1)} s per case; ` +
      `${cpus ? `load on CPU ${cpus.load}, servers on CPU ${cpus.server}` : 'not pinned (no taskset or one core)'}; load average ${machine.loadAverageAtStart}`,
  );

  // Start and check every server (an idle server costs nothing), then warm each up.
  if (cases.some((c) => c.postgres)) await dropSchema(POSTGRES_SCHEMA);
  const loaded: Loaded[] = [];
  const errors: Record<string, string> = {};
  for (const c of cases) {
    try {
      const server = await startServer(c.server, c.config, cpus);
      try {
        const request = await c.prepare(server.ready);
        loaded.push({ c, server, request, measurement: new Measurement() });
        log(`  ${c.id}: checked`);
      } catch (err) {
        await server.stop();
        throw err;
      }
    } catch (err) {
      errors[c.id] = err instanceof Error ? err.message : String(err);
      log(`  ${c.id}: FAILED: ${errors[c.id]}`);
    }
  }
  for (const { c, server, request } of loaded) {
    log(`  ${c.id}: warming up ${settings.warmupSeconds} s`);
    await warmUp(server.ready.port, request, settings);
  }
  const slice = settings.durationSeconds / settings.rounds;
  for (let round = 1; round <= settings.rounds; round++) {
    log(`  round ${round}/${settings.rounds}`);
    for (const { server, request, measurement } of loaded) {
      await measurement.slice(server.ready.port, request, settings.connections, slice, server.child.pid);
    }
  }
  await stopAll();
  if (cases.some((c) => c.postgres)) await dropSchema(POSTGRES_SCHEMA).catch(() => undefined);

  const results = loaded.map(({ c, measurement }) => ({ c, result: measurement.result() }));
  const bare = new Map(results.filter(({ c }) => c.bare).map(({ c, result }) => [c.group, result]));
  const rows: Row[] = results.map(({ c, result }) => ({
    id: c.id,
    label: c.label,
    group: c.group,
    ...result,
    ratio: result.rps / (bare.get(c.group)?.rps ?? Number.NaN),
    cpuRatio: (bare.get(c.group)?.cpuUsPerRequest ?? Number.NaN) / result.cpuUsPerRequest,
  }));
  const budgets = judgeBudgets(rows, new Set(Object.keys(skipped)));

  console.log(`\n${formatTable(rows)}\n`);
  console.log(formatBudgets(budgets));
  for (const [id, why] of Object.entries(skipped)) console.log(`SKIPPED ${id}: ${why}`);
  for (const [id, why] of Object.entries(errors)) console.log(`FAILED ${id}: ${why}`);
  const path = writeResults('latest.json', {
    kind: 'bench',
    date: new Date().toISOString(),
    machine: { ...machine, loadAverageAtEnd: Number((loadavg()[0] ?? 0).toFixed(2)) },
    settings: { ...settings, pinned: cpus ?? false },
    rows,
    budgets,
    skipped,
    errors,
  });
  console.log(`\nresults: ${path}`);
  if (Object.keys(errors).length > 0) return 1;
  return settings.strict && budgets.some((b) => b.status === 'FAIL') ? 1 : 0;
}

main()
  .catch((err: unknown) => {
    log(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  })
  .then(async (code) => {
    stopLoad();
    await stopAll();
    process.exit(code);
  });
