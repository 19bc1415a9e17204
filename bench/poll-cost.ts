/**
 * @module poll-cost
 * `npx tsx bench/poll-cost.ts`: what one poll of the PostgreSQL store's change feed costs. The
 * instruction bench leaves the poll out of its counted requests (under valgrind a poll is ~50× slower
 * and would land in the window ~50× more often per request than natively; see bench/instructions.ts),
 * so its share per request is measured here, on its own, and added by arithmetic
 * (docs/performance.md, "The PostgreSQL change feed").
 *
 * A store that does nothing but watch its feed (bench/servers/feed-poller.ts, default 200 ms interval),
 * and a control that does not watch, each:
 * - under callgrind, with the instruction bench's Node options: `FEED_WARMUP` seconds (default 60)
 *   instrumented, a full garbage collection, counters zeroed, `FEED_SECONDS` seconds (default 60), dump;
 *   instructions ÷ polls in the window;
 * - natively (Node's default options): the same warm-up and window, CPU time (user + system,
 *   `process.cpuUsage()`) ÷ polls.
 * Polls are counted in the child (every query on the feed's table). It also prints the `watch()`
 * errors and the feed states reported: under valgrind a poll may take longer than the feed's grace,
 * which makes the feed report `failing` (and do that work too); the figures say so when it happens.
 * Needs valgrind and PostgreSQL (`BENCH_POSTGRES_URL` / `POSTGRES_URL`). `INSTR_KEEP=1` keeps the dumps;
 * `FEED_ONLY=callgrind` or `FEED_ONLY=native` runs one of the two.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { bundleServer } from './lib/bundle.js';
import { CALLGRIND_NODE_ARGS, callgrindControl, callgrindMissing, readDumpTotal } from './lib/callgrind.js';
import { dropSchema, postgresAvailable, schemaUrl } from './lib/postgres.js';

const WORK_DIR = resolve(__dirname, 'results', 'poll-cost', `run-${process.pid}`);
const SCHEMA = 'bench_poll';
const seconds = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const WARMUP_S = seconds('FEED_WARMUP', 60);
const WINDOW_S = seconds('FEED_SECONDS', 60);

interface Count {
  readonly polls: number;
  readonly errors: number;
  readonly states: readonly string[];
  readonly cpu: { readonly user: number; readonly system: number };
}

/** The child, its stdout lines and a way to send it a command and wait for the answer. */
function start(script: string, watch: boolean, callgrindOut: string | undefined): Promise<{ child: ChildProcess; ask(command: string, prefix: string): Promise<string> }> {
  // Natively Node's defaults, as a host runs it (with `--expose-gc` for the collection before the window).
  const node = [...(callgrindOut ? CALLGRIND_NODE_ARGS : ['--expose-gc']), script];
  const words = callgrindOut
    ? ['valgrind', '--tool=callgrind', `--callgrind-out-file=${callgrindOut}`, '--dump-instr=no', '--instr-atstart=no', '--collect-atstart=yes', process.execPath, ...node]
    : [process.execPath, ...node];
  const child = spawn(words[0]!, words.slice(1), {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, BENCH_SERVER_CONFIG: JSON.stringify({ store: schemaUrl(SCHEMA), watch }), NODE_ENV: 'production' },
  });
  let out = '';
  let err = '';
  const waiting: { prefix: string; done: (line: string) => void }[] = [];
  child.stderr!.on('data', (chunk: Buffer) => (err = (err + chunk.toString()).slice(-4000)));
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    let newline: number;
    while ((newline = out.indexOf('\n')) >= 0) {
      const line = out.slice(0, newline);
      out = out.slice(newline + 1);
      const at = waiting.findIndex((w) => line.startsWith(w.prefix));
      if (at >= 0) waiting.splice(at, 1)[0]!.done(line);
    }
  });
  const wait = (prefix: string): Promise<string> =>
    new Promise((done, fail) => {
      waiting.push({ prefix, done });
      child.once('exit', (code) => fail(new Error(`feed-poller exited (${code}): ${err.trim().split('\n').slice(-3).join(' ')}`)));
    });
  const ask = (command: string, prefix: string): Promise<string> => {
    const answer = wait(prefix);
    child.stdin!.write(`${command}\n`);
    return answer;
  };
  return wait('BENCH_READY').then(() => ({ child, ask }));
}

const countOf = (line: string): Count => JSON.parse(line.slice('FEED_COUNT '.length)) as Count;

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  const hard = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(hard);
}

/** One run: polls, errors and states in the window, and instructions (callgrind) or CPU µs (native). */
async function measure(
  script: string,
  watch: boolean,
  underCallgrind: boolean,
): Promise<{ polls: number; errors: number; states: readonly string[]; cost: number; system: number }> {
  const outFile = resolve(WORK_DIR, `callgrind.${watch ? 'watch' : 'idle'}.out`);
  const { child, ask } = await start(script, watch, underCallgrind ? outFile : undefined);
  try {
    if (underCallgrind) callgrindControl(child.pid!, '--instr=on');
    await sleep(WARMUP_S * 1000);
    await ask('gc', 'FEED_GC');
    if (underCallgrind) callgrindControl(child.pid!, '--zero');
    const before = countOf(await ask('count', 'FEED_COUNT'));
    await sleep(WINDOW_S * 1000);
    const after = countOf(await ask('count', 'FEED_COUNT'));
    if (underCallgrind) callgrindControl(child.pid!, '--dump');
    const cost = underCallgrind
      ? readDumpTotal(`${outFile}.1`)
      : after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system;
    const system = after.cpu.system - before.cpu.system;
    return { polls: after.polls - before.polls, errors: after.errors - before.errors, states: after.states.slice(before.states.length), cost, system };
  } finally {
    await stop(child);
  }
}

async function main(): Promise<number> {
  const missing = callgrindMissing();
  const postgres = await postgresAvailable();
  if (missing || !postgres.ok) {
    console.error(`poll-cost: ${missing ?? `PostgreSQL unavailable (set POSTGRES_URL): ${postgres.ok ? '' : postgres.reason}`}`);
    return 2;
  }
  mkdirSync(WORK_DIR, { recursive: true });
  const script = bundleServer('feed-poller', WORK_DIR);
  await dropSchema(SCHEMA);
  try {
    const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
    console.log(`poll-cost: ${WARMUP_S} s warm-up, ${WINDOW_S} s window per run`);
    const only = process.env.FEED_ONLY; // 'callgrind' or 'native'
    for (const underCallgrind of [true, false].filter((c) => !only || only === (c ? 'callgrind' : 'native'))) {
      const idle = await measure(script, false, underCallgrind);
      const watch = await measure(script, true, underCallgrind);
      const unit = underCallgrind ? 'instructions' : 'CPU µs';
      const perPoll = (watch.cost - idle.cost) / watch.polls;
      console.log(
        `${underCallgrind ? 'callgrind' : 'native   '}: watching ${fmt(watch.cost)} ${unit} for ${watch.polls} polls ` +
          `(${watch.errors} watch errors, states ${JSON.stringify(watch.states)}); not watching ${fmt(idle.cost)} ${unit}; ` +
          `${underCallgrind ? fmt(perPoll) : perPoll.toFixed(1)} ${unit} per poll` +
          (underCallgrind ? '' : ` (of which system ${((watch.system - idle.system) / watch.polls).toFixed(1)})`),
      );
    }
  } finally {
    await dropSchema(SCHEMA).catch(() => undefined);
    if (process.env.INSTR_KEEP !== '1') rmSync(WORK_DIR, { recursive: true, force: true });
    else console.log(`callgrind dumps: ${WORK_DIR}`);
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`poll-cost: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
