/**
 * @module budgets
 * The performance budgets of issue 4, judged on one run's rows (ratios to the bare row of the same run).
 */
import type { Budget, Row } from './report.js';

const verdict = (pass: boolean): Budget['status'] => (pass ? 'PASS' : 'FAIL');

/** A budget whose cases did not run: SKIP when they were left out on purpose, else FAIL. */
function missing(name: string, ids: readonly string[], skipped: ReadonlySet<string>): Budget {
  const left = ids.filter((id) => skipped.has(id));
  return left.length > 0
    ? { name, status: 'SKIP', detail: `${left.join(', ')} not run` }
    : { name, status: 'FAIL', detail: 'not measured' };
}

function ratioBudget(rows: ReadonlyMap<string, Row>, skipped: ReadonlySet<string>, id: string, min: number, name: string): Budget {
  const row = rows.get(id);
  if (!row) return missing(name, [id], skipped);
  const valid = row.failures === 0;
  return {
    name,
    status: verdict(valid && row.ratio >= min),
    detail: `${row.ratio.toFixed(2)}× bare, needs ≥ ${min.toFixed(2)}×; by server CPU per request ${row.cpuRatio.toFixed(2)}×${valid ? '' : `; ${row.failures} failed requests`}`,
  };
}

function aheadBudget(rows: ReadonlyMap<string, Row>, skipped: ReadonlySet<string>, id: string, peers: readonly string[], name: string): Budget {
  const row = rows.get(id);
  const measured = peers.map((p) => rows.get(p)).filter((r): r is Row => r !== undefined);
  if (!row || measured.length < peers.length) return missing(name, [id, ...peers], skipped);
  const parts = measured.map((p) => `${(row.rps / p.rps).toFixed(2)}× ${p.id} (CPU ${(p.cpuUsPerRequest / row.cpuUsPerRequest).toFixed(2)}×)`);
  return { name, status: verdict(row.failures === 0 && measured.every((p) => row.rps > p.rps)), detail: parts.join(', ') };
}

/** @param skipped ids of cases left out on purpose (not selected, or no PostgreSQL) */
export function judgeBudgets(list: readonly Row[], skipped: ReadonlySet<string>): Budget[] {
  const rows = new Map(list.map((r) => [r.id, r]));
  return [
    ratioBudget(rows, skipped, 'library-memory', 0.85, 'requireBearer, memory store ≥ 0.85× bare'),
    aheadBudget(rows, skipped, 'library-memory', ['auth0', 'node-oauth2'], 'requireBearer, memory store ahead of every peer'),
    ratioBudget(rows, skipped, 'library-postgres', 0.8, 'requireBearer, PostgreSQL store ≥ 0.80× bare'),
    ratioBudget(rows, skipped, 'library-token', 0.6, 'token endpoint, repeat client ≥ 0.60× bare'),
    aheadBudget(rows, skipped, 'library-token', ['node-oauth2-token'], 'token endpoint, repeat client ahead of node-oauth2-server'),
  ];
}
