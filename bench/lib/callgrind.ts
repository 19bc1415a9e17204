/**
 * @module callgrind
 * Counting a server's instructions with valgrind's callgrind: the launch prefix, `callgrind_control`
 * (instrumentation on, zero, dump) addressed by pid, and the total read back from a dump file.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
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
}

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
 * A server under callgrind. Instrumentation starts off (`--instr-atstart=no`: start-up runs about twice
 * as fast) and is switched on before the warm-up, so the warm-up and the measured requests run
 * instrumented alike; counters are zeroed after the warm-up. `--single-threaded`: V8 compiles and
 * collects garbage on the main thread, so no background thread's work lands in a random window.
 * `--no-incremental-marking`: V8 otherwise marks the old generation in steps bounded by wall time (1 ms
 * tasks between events) and pays a write barrier on every pointer store while marking is on; under
 * valgrind, and more so on a busy host, how long marking stays on varies from run to run, and so did
 * the counts (±5% on bare Express on a loaded machine). Without it, a full collection runs atomically
 * when the allocation limit is reached: the same marking work, paid at a point that depends only on
 * what the program did. Node's other options stay at their defaults (heap sizes included).
 */
export function callgrindLaunch(outFile: string, script: string): Launch {
  return {
    prefix: ['valgrind', '--tool=callgrind', `--callgrind-out-file=${outFile}`, '--dump-instr=no', '--instr-atstart=no', '--collect-atstart=yes'],
    nodeArgs: ['--single-threaded', '--no-incremental-marking'],
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
