/**
 * @module scale
 * `npm run bench -- --scale`: the token endpoint for a repeat client with 10 and with 100,000 accounts,
 * on SQLite and on PostgreSQL. The store's own `init()` creates the schema; the benchmark client is
 * created through the admin API, and the other accounts are bulk-inserted with SQL reusing that
 * client's bcrypt hash (one bcrypt for the whole setup). Budget: p99 with 100,000 accounts within
 * 1.2× of p99 with 10. Also times `findAccount` directly (the lookup a cache miss pays), with its own
 * budget: p50 with 100,000 accounts within 1.5× of p50 with 10.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { createServiceAccounts } from '../src/index.js';
import { openAccountStore } from '../src/sql/index.js';
import { basicAuth, checkTokenEndpoint, FORM, TOKEN_BODY } from './lib/checks.js';
import { installCleanup, pinCpus, startServer, stopAll, type RunningServer } from './lib/children.js';
import { AUDIENCE, HS256_KEY, ISSUER, KID, SCOPE, TOKEN_PATH } from './lib/fixtures.js';
import { Measurement, warmUp, type LoadRequest, type LoadResult } from './lib/load.js';
import { dropSchema, postgresAvailable, schemaUrl, withPostgres } from './lib/postgres.js';
import { describeMachine, formatBudgets, writeResults, type Budget } from './lib/report.js';
import { CASE_OVERHEAD_SECONDS, type Settings } from './lib/settings.js';

const SIZES = [10, 100_000] as const;
const SQLITE_DIR = resolve(__dirname, '..', '.tmp', 'bench');
const LOOKUP_SAMPLES = 2000;
/** `findAccount` p50 with 100,000 accounts at most this many times its p50 with 10 (index lookups do not grow). */
const LOOKUP_RATIO_BUDGET = 1.5;
/** Seeding 100,000 accounts and timing lookups: ~1–3 s measured; kept generous. */
const SEED_SECONDS = 5;
const log = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

type Dialect = 'sqlite' | 'postgres';
interface Target {
  readonly dialect: Dialect;
  readonly size: number;
  readonly url: string;
  readonly schema: string;
  readonly file: string;
}

const tokenRequest = (client: { clientId: string; secret: string }): LoadRequest => ({
  path: TOKEN_PATH,
  method: 'POST',
  headers: { authorization: basicAuth(client.clientId, client.secret), 'content-type': FORM },
  body: TOKEN_BODY,
});

const fillerId = (i: number): string => `esa_bench${String(i).padStart(19, '0')}`;
const fillerSecretId = (i: number): string => `b${String(i).padStart(15, '0')}`;

function targetFor(dialect: Dialect, size: number): Target {
  const schema = `bench_scale_${size}`;
  const file = resolve(SQLITE_DIR, `scale-${size}.db`);
  return { dialect, size, schema, file, url: dialect === 'sqlite' ? `sqlite:${file}` : schemaUrl(schema) };
}

async function clear(target: Target): Promise<void> {
  if (target.dialect === 'postgres') await dropSchema(target.schema);
  else for (const suffix of ['', '-wal', '-shm']) rmSync(target.file + suffix, { force: true });
}

/** Creates the schema (store init), the benchmark client (admin API) and size-1 filler accounts (bulk SQL). */
async function seed(target: Target): Promise<{ clientId: string; secret: string }> {
  await clear(target);
  mkdirSync(SQLITE_DIR, { recursive: true });
  const store = openAccountStore(target.url);
  const sa = createServiceAccounts({ store, issuer: ISSUER, audience: AUDIENCE, signingKeys: [{ alg: 'HS256', key: HS256_KEY, kid: KID }] });
  await sa.ready();
  const created = await sa.admin.createAccount({ name: 'bench-client', scopes: [SCOPE] });
  const hash = (await store.findAccount(created.clientId))?.secrets[0]?.hash;
  await sa.close();
  if (!hash) throw new Error('the benchmark client has no secret hash');

  const fillers = target.size - 1;
  const now = Date.now();
  if (target.dialect === 'sqlite') {
    const db = new BetterSqlite3(target.file);
    try {
      const account = db.prepare('insert into accounts (client_id, name, client_account_id, scopes, enabled, created_at) values (?, ?, null, ?, 1, ?)');
      const secret = db.prepare('insert into secrets (id, client_id, hash, created_at, last_used_at, revoked_at) values (?, ?, ?, ?, null, null)');
      db.transaction(() => {
        for (let i = 1; i <= fillers; i++) {
          account.run(fillerId(i), `filler-${i}`, JSON.stringify([SCOPE]), now + i);
          secret.run(fillerSecretId(i), fillerId(i), hash, now + i);
        }
      })();
      db.exec('analyze');
    } finally {
      db.close();
    }
  } else {
    await withPostgres(async (c) => {
      const s = target.schema;
      await c.query(
        `insert into ${s}.accounts (client_id, name, client_account_id, scopes, enabled, created_at)
         select 'esa_bench' || lpad(i::text, 19, '0'), 'filler-' || i, null, $1, 1, $2::bigint + i from generate_series(1, $3::int) as i`,
        [JSON.stringify([SCOPE]), now, fillers],
      );
      await c.query(
        `insert into ${s}.secrets (id, client_id, hash, created_at, last_used_at, revoked_at)
         select 'b' || lpad(i::text, 15, '0'), 'esa_bench' || lpad(i::text, 19, '0'), $1, $2::bigint + i, null, null from generate_series(1, $3::int) as i`,
        [hash, now, fillers],
      );
      await c.query(`analyze ${s}.accounts`);
      await c.query(`analyze ${s}.secrets`);
    });
  }
  return { clientId: created.clientId, secret: created.secret.value };
}

/** `findAccount` latency in this process, sequential, random accounts (what a cache miss pays), in ms. */
async function timeLookups(target: Target, clientId: string): Promise<{ p50: number; p99: number }> {
  const store = openAccountStore(target.url);
  try {
    await store.init();
    const times: number[] = [];
    for (let n = 0; n < LOOKUP_SAMPLES; n++) {
      const id = n % 10 === 0 || target.size === 1 ? clientId : fillerId(1 + Math.floor(Math.random() * (target.size - 1)));
      const start = process.hrtime.bigint();
      const account = await store.findAccount(id);
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
      if (!account) throw new Error(`findAccount(${id}) found nothing`);
    }
    times.sort((a, b) => a - b);
    return { p50: times[Math.floor(times.length * 0.5)] ?? NaN, p99: times[Math.floor(times.length * 0.99)] ?? NaN };
  } finally {
    await store.close();
  }
}

interface ScaleRow extends LoadResult {
  readonly dialect: Dialect;
  readonly accounts: number;
  readonly lookup: { p50: number; p99: number };
  /** p99 / p99 of the 10-account case of the same dialect. */
  readonly p99Ratio: number;
}

function formatScaleTable(rows: readonly ScaleRow[]): string {
  const header = 'case                          req/s    p50 ms    p99 ms  p99 × 10-acct  CPU µs/req  findAccount p50/p99 ms';
  const lines = [header, '-'.repeat(header.length)];
  for (const r of rows) {
    const name = `${r.dialect}, ${r.accounts.toLocaleString('en-US')} accounts`;
    lines.push(
      `${name.padEnd(28)}${Math.round(r.rps).toString().padStart(7)}${r.p50.toFixed(2).padStart(10)}${r.p99.toFixed(2).padStart(10)}${r.p99Ratio.toFixed(2).padStart(15)}${(Number.isFinite(r.cpuUsPerRequest) ? Math.round(r.cpuUsPerRequest).toString() : '-').padStart(12)}  ${r.lookup.p50.toFixed(3)} / ${r.lookup.p99.toFixed(3)}${r.failures > 0 ? `  (${r.failures} failed!)` : ''}`,
    );
  }
  return lines.join('\n');
}

export async function runScale(settings: Settings): Promise<number> {
  const cpus = pinCpus();
  const machine = describeMachine();
  const postgres = await postgresAvailable();
  const dialects: Dialect[] = postgres.ok ? ['sqlite', 'postgres'] : ['sqlite'];
  if (!postgres.ok) log(`scale: PostgreSQL skipped: ${postgres.reason}`);
  const targets = dialects.flatMap((d) => SIZES.map((size) => targetFor(d, size)));
  const estimate = Math.ceil(targets.length * (settings.warmupSeconds + settings.durationSeconds + CASE_OVERHEAD_SECONDS + SEED_SECONDS));
  if (estimate > settings.timeLimitSeconds) {
    throw new Error(`the scale run would take ~${estimate} s, over the ${settings.timeLimitSeconds} s limit: lower BENCH_DURATION/BENCH_WARMUP`);
  }
  installCleanup(settings.timeLimitSeconds * 1000);
  log(
    `scale: ${targets.length} cases, ~${estimate} s; ` +
      `${settings.rounds} interleaved slices of ${(settings.durationSeconds / settings.rounds).toFixed(1)} s per case`,
  );

  interface Running {
    readonly target: Target;
    readonly server: RunningServer;
    readonly request: LoadRequest;
    readonly lookup: { p50: number; p99: number };
    readonly measurement: Measurement;
  }
  const running: Running[] = [];
  const errors: Record<string, string> = {};
  const idOf = (target: Target): string => `${target.dialect}-${target.size}`;
  try {
    // Seed every database and start its server, then warm each up and measure in interleaved slices,
    // so that drifts in machine load hit the 10- and the 100,000-account cases alike.
    for (const target of targets) {
      try {
        const started = Date.now();
        const client = await seed(target);
        const lookup = await timeLookups(target, client.clientId);
        log(`  ${idOf(target)}: seeded in ${((Date.now() - started) / 1000).toFixed(1)} s, findAccount p50 ${lookup.p50.toFixed(3)} ms`);
        const server = await startServer('library', { store: target.url, client }, cpus);
        running.push({ target, server, lookup, measurement: new Measurement(), request: tokenRequest(client) });
        await checkTokenEndpoint(server.ready.port, client);
      } catch (err) {
        errors[idOf(target)] = err instanceof Error ? err.message : String(err);
        log(`  ${idOf(target)}: FAILED: ${errors[idOf(target)]}`);
      }
    }
    const ok = running.filter((r) => errors[idOf(r.target)] === undefined);
    for (const r of ok) await warmUp(r.server.ready.port, r.request, settings);
    const slice = settings.durationSeconds / settings.rounds;
    for (let round = 1; round <= settings.rounds; round++) {
      log(`  round ${round}/${settings.rounds}`);
      for (const r of ok) await r.measurement.slice(r.server.ready.port, r.request, settings.connections, slice, r.server.child.pid);
    }
  } finally {
    await stopAll();
    for (const target of targets) await clear(target).catch(() => undefined);
  }

  const rows: ScaleRow[] = [];
  for (const r of running.filter((x) => errors[idOf(x.target)] === undefined)) {
    const result = r.measurement.result();
    const base = rows.find((x) => x.dialect === r.target.dialect && x.accounts === SIZES[0]);
    rows.push({ dialect: r.target.dialect, accounts: r.target.size, lookup: r.lookup, ...result, p99Ratio: base ? result.p99 / base.p99 : 1 });
  }
  const budgets: Budget[] = dialects.map((dialect) => {
    const big = rows.find((r) => r.dialect === dialect && r.accounts === SIZES[1]);
    const name = `${dialect}: token endpoint p99, 100,000 accounts ≤ 1.2× 10 accounts`;
    if (!big || !rows.some((r) => r.dialect === dialect && r.accounts === SIZES[0])) return { name, status: 'FAIL', detail: 'not measured' };
    return { name, status: big.failures === 0 && big.p99Ratio <= 1.2 ? 'PASS' : 'FAIL', detail: `${big.p99Ratio.toFixed(2)}×` };
  });
  // The token endpoint's repeat client is served from the account cache; what a cache miss pays is
  // held to its own budget, so a lookup that grows with the store cannot hide behind the cache.
  for (const dialect of dialects) {
    const [small, big] = SIZES.map((size) => rows.find((r) => r.dialect === dialect && r.accounts === size));
    const name = `${dialect}: findAccount p50, 100,000 accounts ≤ ${LOOKUP_RATIO_BUDGET}× 10 accounts`;
    if (!small || !big) budgets.push({ name, status: 'FAIL', detail: 'not measured' });
    else {
      const ratio = big.lookup.p50 / small.lookup.p50;
      budgets.push({ name, status: ratio <= LOOKUP_RATIO_BUDGET ? 'PASS' : 'FAIL', detail: `${ratio.toFixed(2)}×` });
    }
  }
  if (!postgres.ok) budgets.push({ name: 'postgres: token endpoint p99, 100,000 accounts ≤ 1.2× 10 accounts', status: 'SKIP', detail: 'no PostgreSQL' });
  console.log(`\n${formatScaleTable(rows)}\n`);
  console.log(formatBudgets(budgets));
  for (const [id, why] of Object.entries(errors)) console.log(`FAILED ${id}: ${why}`);
  const path = writeResults('scale-latest.json', {
    kind: 'scale',
    date: new Date().toISOString(),
    machine: { ...machine, loadAverageAtEnd: Number((loadavg()[0] ?? 0).toFixed(2)) },
    settings: { ...settings, pinned: cpus ?? false },
    rows,
    budgets,
    errors,
  });
  console.log(`\nresults: ${path}`);
  if (Object.keys(errors).length > 0) return 1;
  return settings.strict && budgets.some((b) => b.status === 'FAIL') ? 1 : 0;
}
