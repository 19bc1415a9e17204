/**
 * @module report
 * The machine description, the results table, the budgets and `bench/results/latest.json`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { resolve } from 'node:path';
import type { LoadResult } from './load.js';

export interface Machine {
  readonly nproc: number;
  readonly cpu: string;
  readonly node: string;
  readonly platform: string;
  /** 1-minute load average when the run started: above ~0.5 on this machine, expect noisy numbers. */
  readonly loadAverageAtStart: number;
}

export function describeMachine(): Machine {
  let cpu = 'unknown';
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpu;
  } catch {
    // not Linux
  }
  return {
    nproc: availableParallelism(),
    cpu,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    loadAverageAtStart: Number((loadavg()[0] ?? 0).toFixed(2)),
  };
}

export interface Row extends LoadResult {
  readonly id: string;
  readonly label: string;
  readonly group: string;
  /** rps / rps of the group's bare row from the same run. */
  readonly ratio: number;
  /** Server CPU per request of the group's bare row / this row's: the same ratio, measured as CPU cost. */
  readonly cpuRatio: number;
}

export interface Budget {
  readonly name: string;
  /** SKIP: a case it needs was not selected (BENCH_ONLY) or could not run here (no PostgreSQL). */
  readonly status: 'PASS' | 'FAIL' | 'SKIP';
  readonly detail: string;
}

const pad = (text: string, width: number, right = false): string => (right ? text.padStart(width) : text.padEnd(width));
const ms = (value: number): string => (Number.isFinite(value) ? value.toFixed(2) : '-');
const fixed = (value: number): string => (Number.isFinite(value) ? value.toFixed(2) : '-');

export function formatTable(rows: readonly Row[], title = 'case'): string {
  const width = Math.max(title.length, ...rows.map((r) => r.label.length));
  const header = `${pad(title, width)}  ${pad('req/s', 9, true)}  ${pad('p50 ms', 8, true)}  ${pad('p99 ms', 8, true)}  ${pad('× bare', 7, true)}  ${pad('CPU µs/req', 10, true)}  ${pad('× bare (CPU)', 12, true)}`;
  const lines = [header, '-'.repeat(header.length)];
  let group = '';
  for (const row of rows) {
    if (group && row.group !== group) lines.push('');
    group = row.group;
    const flag = row.failures > 0 ? `  (${row.failures} non-2xx/errors!)` : '';
    lines.push(
      `${pad(row.label, width)}  ${pad(Math.round(row.rps).toString(), 9, true)}  ${pad(ms(row.p50), 8, true)}  ${pad(ms(row.p99), 8, true)}  ${pad(fixed(row.ratio), 7, true)}  ${pad(Number.isFinite(row.cpuUsPerRequest) ? Math.round(row.cpuUsPerRequest).toString() : '-', 10, true)}  ${pad(fixed(row.cpuRatio), 12, true)}${flag}`,
    );
  }
  return lines.join('\n');
}

export function formatBudgets(budgets: readonly Budget[]): string {
  return budgets.map((b) => `${b.status}  ${b.name}  (${b.detail})`).join('\n');
}

/** Writes the run as JSON under bench/results/ (git-ignored). Returns the path. */
export function writeResults(file: string, document: unknown): string {
  const dir = resolve(__dirname, '..', 'results');
  mkdirSync(dir, { recursive: true });
  const path = resolve(dir, file);
  writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`);
  return path;
}

/** One case of the instruction bench: instructions per request of each server process. */
export interface InstructionResult {
  readonly id: string;
  readonly label: string;
  readonly group: string;
  readonly perRequest: readonly number[];
  readonly mean: number;
  readonly min: number;
  readonly max: number;
  /** Half the min–max range over the mean: ±this fraction. */
  readonly spread: number;
  /** Bare's mean ÷ this case's mean (same group). */
  readonly ratio: number;
  readonly failed?: string;
}

const thousands = (value: number): string => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '-');

export function formatInstructionTable(rows: readonly InstructionResult[]): string {
  const width = Math.max(4, ...rows.map((r) => r.label.length));
  const header = `${pad('case', width)}  ${pad('instr/request', 13, true)}  ${pad('min–max', 21, true)}  ${pad('spread', 7, true)}  ${pad('× bare', 6, true)}`;
  const lines = [header, '-'.repeat(header.length)];
  let group = '';
  for (const row of rows) {
    if (group && row.group !== group) lines.push('');
    group = row.group;
    const range = `${thousands(row.min)}–${thousands(row.max)}`;
    const spread = Number.isFinite(row.spread) ? `±${(row.spread * 100).toFixed(2)}%` : '-';
    const ratio = Number.isFinite(row.ratio) ? row.ratio.toFixed(3) : '-';
    lines.push(`${pad(row.label, width)}  ${pad(thousands(row.mean), 13, true)}  ${pad(range, 21, true)}  ${pad(spread, 7, true)}  ${pad(ratio, 6, true)}${row.failed ? `  FAILED: ${row.failed}` : ''}`);
  }
  return lines.join('\n');
}
