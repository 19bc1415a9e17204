/**
 * @module callgrind
 * Counting a server's instructions with valgrind's callgrind: the launch prefix, `callgrind_control`
 * (instrumentation on, zero, dump) addressed by pid, and the total read back from a dump file.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Launch } from './children.js';
import type { LoadRequest } from './load.js';

/** What the driver process (sequential-driver.ts) receives in `INSTR_DRIVER`. */
export interface DriverInput {
  readonly port: number;
  /** The server's pid (callgrind_control addresses it). */
  readonly pid: number;
  readonly request: LoadRequest;
  readonly warmup: number;
  readonly requests: number;
  /** File the server writes once it has collected garbage on {@link GC_SIGNAL} (see serve.ts). */
  readonly gcAck: string;
}

/**
 * Sent to the server after the warm-up: it runs a full garbage collection (`--expose-gc`) and writes
 * `gcAck`; only then are the counters zeroed. Every window thus starts with an empty young generation
 * and a fresh old-generation budget, so the collections inside it (each worth 1–4% of a case's count)
 * follow from what the N requests allocate, not from where the warm-up happened to leave the collector.
 */
export const GC_SIGNAL = 'SIGUSR2';

/** The driver's last stdout line, after the dump was written. */
export const DONE_PREFIX = 'INSTR_DRIVER_DONE ';

/** Why callgrind cannot run here (valgrind or callgrind_control missing), or undefined when it can. */
export function callgrindMissing(): string | undefined {
  for (const [tool, flag] of [['valgrind', '--version'], ['callgrind_control', '-h']] as const) {
    const probe = spawnSync(tool, [flag], { encoding: 'utf8' });
    if (probe.error || probe.status !== 0) return `${tool} not found: install valgrind (it ships callgrind_control)`;
  }
  return undefined;
}

/**
 * Node options of every server under callgrind, the same for every case. `--expose-gc` serves
 * {@link GC_SIGNAL}; each of the others removes a way in which
 * wall time, not the requests, decided what V8 did (under valgrind a second of wall time holds ~50×
 * fewer requests than natively, and a busy host stretches it further):
 * - `--single-threaded`: V8 compiles and collects garbage on the main thread, so no background thread's
 *   work lands in a random window.
 * - `--no-incremental-marking`: V8 otherwise marks the old generation in steps bounded by wall time
 *   (1 ms tasks between events) and pays a write barrier on every pointer store while marking is on;
 *   how long marking stayed on varied from run to run, and so did the counts (±5% on bare Express on a
 *   loaded machine). Without it, a full collection runs atomically when the allocation limit is reached.
 * - `--min-semi-space-size=16` (MB; 16 is V8's maximum on 64-bit, left as it is): the young generation
 *   starts at the size a busy server's grows to (measured natively: 16 MB semi-spaces after a few
 *   thousand requests of the bare server). V8 grows and shrinks it by allocation per millisecond of wall
 *   time, so under valgrind its size, and with it the number of scavenges in the window (9 in one run of
 *   bare Express, 31 in the next), depended on how busy the host was.
 * - `--heap-growing-percent=300`: after a full collection, the old generation may grow to 4× what
 *   survived before the next one, the factor V8 picks natively for these servers under load (its
 *   maximum; `--trace-gc-verbose`: "new limit: 61498 KB (4.0)"). V8 derives it from collection and
 *   allocation speeds in wall time, so under valgrind it varied, and with it whether a full collection
 *   (~43,000 instructions per request of the window) fell inside the counted requests or not.
 * - `--no-memory-reducer`: the memory reducer starts full collections when allocation per millisecond
 *   of wall time looks idle, which a busy server never does and every server under valgrind seems to.
 */
export const CALLGRIND_NODE_ARGS = [
  '--expose-gc',
  '--single-threaded',
  '--no-incremental-marking',
  '--min-semi-space-size=16',
  '--heap-growing-percent=300',
  '--no-memory-reducer',
] as const;

/**
 * A server under callgrind. Instrumentation starts off (`--instr-atstart=no`: start-up runs about twice
 * as fast) and is switched on before the warm-up, so the warm-up and the measured requests run
 * instrumented alike; counters are zeroed after the warm-up. Node runs with {@link CALLGRIND_NODE_ARGS}.
 * For attribution only: `INSTR_NODE_ARGS` adds Node options (`--perf-basic-prof` writes the map that
 * names JIT-compiled code, see bench/attribute.ts; `--trace-opt --trace-deopt` lists what V8 compiles,
 * with a `BENCH_GC` line where the counted requests begin) and `INSTR_VALGRIND_ARGS` valgrind options.
 * With `INSTR_NODE_ARGS`, the server's stdout is kept next to its dump (`<dump>.stdout`).
 */
export function callgrindLaunch(outFile: string, script: string): Launch {
  const extra = (name: string): string[] => (process.env[name] ?? '').split(' ').filter(Boolean);
  return {
    ...(process.env.INSTR_NODE_ARGS ? { stdoutFile: `${outFile}.stdout` } : {}),
    cwd: dirname(outFile), // where V8 writes its isolate log, with --perf-basic-prof say
    prefix: ['valgrind', '--tool=callgrind', `--callgrind-out-file=${outFile}`, '--dump-instr=no', '--instr-atstart=no', '--collect-atstart=yes', ...extra('INSTR_VALGRIND_ARGS')],
    nodeArgs: [...CALLGRIND_NODE_ARGS, ...extra('INSTR_NODE_ARGS')],
    script,
    startTimeoutMs: 180_000,
  };
}

/** Runs `callgrind_control <option> <pid>`; throws with its output when it fails. */
export function callgrindControl(pid: number, ...option: string[]): void {
  const out = spawnSync('callgrind_control', [...option, String(pid)], { encoding: 'utf8', timeout: 120_000 });
  if (out.status !== 0 || !/OK\./.test(out.stdout)) {
    throw new Error(`callgrind_control ${option.join(' ')} ${pid} failed: ${(out.stdout + out.stderr).trim() || out.error?.message}`);
  }
}

/** The instruction total of a dump file (its `totals:` line, else `summary:`). */
export function readDumpTotal(file: string): number {
  if (!existsSync(file)) throw new Error(`no callgrind dump at ${file}`);
  const text = readFileSync(file, 'utf8');
  const line = /^totals:\s*(\d+)/m.exec(text) ?? /^summary:\s*(\d+)/m.exec(text);
  if (!line) throw new Error(`${file} has no totals: or summary: line`);
  return Number(line[1]);
}
