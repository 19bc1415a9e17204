/**
 * @module settings
 * Run settings from the environment:
 * - `BENCH_DURATION` measured seconds per case (default 10), `BENCH_WARMUP` warm-up seconds (default 5);
 * - `BENCH_ROUNDS` slices the measured duration is cut into, interleaved across cases (default: one
 *   slice per 2 s, at most 5);
 * - `BENCH_CONNECTIONS` (default 20); `BENCH_ONLY` comma-separated case ids;
 * - `BENCH_STRICT=1` exits 1 when a budget fails; `BENCH_TIME_LIMIT` seconds for the whole run (default 300).
 * `npm run bench:instructions` (see {@link readInstructionSettings}):
 * - `INSTR_WARMUP` warm-up requests (default 300), `INSTR_REQUESTS` measured requests (default 1200),
 *   the same for every case; `INSTR_REPEATS` server processes per case (default 3);
 * - `INSTR_JOBS` servers under valgrind at once (default 2; counts do not depend on it);
 * - `BENCH_ONLY` as above; `INSTR_KEEP=1` keeps the callgrind dumps (for `callgrind_annotate`).
 */
import type { LoadSettings } from './load.js';

function numberFrom(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new TypeError(`${name} must be a number ≥ ${min}, got ${raw}`);
  return value;
}

export interface Settings extends LoadSettings {
  readonly rounds: number;
  readonly only: readonly string[] | undefined;
  readonly strict: boolean;
  readonly timeLimitSeconds: number;
}

function readOnly(): readonly string[] | undefined {
  const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim()).filter(Boolean);
  return only && only.length > 0 ? only : undefined;
}

export function readSettings(): Settings {
  const durationSeconds = Math.round(numberFrom('BENCH_DURATION', 10, 1));
  return {
    durationSeconds,
    rounds: Math.round(numberFrom('BENCH_ROUNDS', Math.min(5, Math.max(1, Math.floor(durationSeconds / 2))), 1)),
    warmupSeconds: Math.round(numberFrom('BENCH_WARMUP', 5, 0)),
    connections: Math.round(numberFrom('BENCH_CONNECTIONS', 20, 1)),
    only: readOnly(),
    strict: process.env.BENCH_STRICT === '1',
    timeLimitSeconds: numberFrom('BENCH_TIME_LIMIT', 300, 10),
  };
}

/** Seconds a case costs beyond its load: server start-up, checks, shutdown (measured ~2 s; kept generous). */
export const CASE_OVERHEAD_SECONDS = 4;
/** Seconds each measured slice costs beyond its duration (connecting, collecting). */
export const SLICE_OVERHEAD_SECONDS = 0.3;

export interface InstructionSettings {
  readonly warmup: number;
  readonly requests: number;
  readonly repeats: number;
  readonly jobs: number;
  readonly only: readonly string[] | undefined;
}

export function readInstructionSettings(): InstructionSettings {
  return {
    warmup: Math.round(numberFrom('INSTR_WARMUP', 300, 0)),
    requests: Math.round(numberFrom('INSTR_REQUESTS', 1200, 1)),
    repeats: Math.round(numberFrom('INSTR_REPEATS', 3, 1)),
    jobs: Math.round(numberFrom('INSTR_JOBS', 2, 1)),
    only: readOnly(),
  };
}
