/**
 * @module settings
 * Run settings from the environment:
 * - `BENCH_DURATION` measured seconds per case (default 10), `BENCH_WARMUP` warm-up seconds (default 5);
 * - `BENCH_ROUNDS` slices the measured duration is cut into, interleaved across cases (default: one
 *   slice per 2 s, at most 5);
 * - `BENCH_CONNECTIONS` (default 20); `BENCH_ONLY` comma-separated case ids;
 * - `BENCH_STRICT=1` exits 1 when a budget fails; `BENCH_TIME_LIMIT` seconds for the whole run (default 300).
 */
import type { LoadSettings } from './load.js';

function seconds(name: string, fallback: number, min: number): number {
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

export function readSettings(): Settings {
  const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim()).filter(Boolean);
  const durationSeconds = Math.round(seconds('BENCH_DURATION', 10, 1));
  return {
    durationSeconds,
    rounds: Math.round(seconds('BENCH_ROUNDS', Math.min(5, Math.max(1, Math.floor(durationSeconds / 2))), 1)),
    warmupSeconds: Math.round(seconds('BENCH_WARMUP', 5, 0)),
    connections: Math.round(seconds('BENCH_CONNECTIONS', 20, 1)),
    only: only && only.length > 0 ? only : undefined,
    strict: process.env.BENCH_STRICT === '1',
    timeLimitSeconds: seconds('BENCH_TIME_LIMIT', 300, 10),
  };
}

/** Seconds a case costs beyond its load: server start-up, checks, shutdown (measured ~2 s; kept generous). */
export const CASE_OVERHEAD_SECONDS = 4;
/** Seconds each measured slice costs beyond its duration (connecting, collecting). */
export const SLICE_OVERHEAD_SECONDS = 0.3;
