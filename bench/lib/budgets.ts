/**
 * @module budgets
 * Every performance budget, in one place, judged on one run's rows (ratios to the bare row of the same
 * run): by requests per second for `npm run bench` (coarse: the machine's noise is ±20%), and by
 * instructions per request for `npm run bench:instructions` (the budgets that decide).
 */
import type { Budget, Row } from './report.js';

/** Minimum ratio to bare Express of the same group, per case id and measure. */
export const BUDGETS = {
  throughput: { 'library-memory': 0.85, 'library-postgres': 0.8, 'library-token': 0.6 },
  // private_key_jwt: every request verifies a new ES256 signature (no shortcut can remember a
  // single-use assertion) and records its jti; measured 0.45× bare POST (docs/performance.md).
  // Federated (an outside issuer's Kubernetes token): an RS256 verify with the issuer's cached keys,
  // the subject's account from memory, the jti recorded; measured 0.52× bare POST.
  // extraTokenClaims: the hook, one check of its keys and one JSON.stringify of its result (sync: no promise per token);
  // measured 0.824× bare POST (+7,600 instructions over library-token's 0.828×, one run).
  // DPoP: every request verifies a new ES256 proof (~880,000 instructions, cannot be cached) on top of
  // the Bearer check; at most DPOP_EXTRA_INSTRUCTIONS above the Bearer case.
  instructions: {
    'library-memory': 0.9,
    'library-memory-dpop': 0.5,
    'library-postgres': 0.85,
    'library-token': 0.75,
    'library-token-claims': 0.72,
    'library-token-pkjwt': 0.4,
    'library-token-federated': 0.45,
  },
} as const;

/** Instructions per request a DPoP request may cost above a Bearer request (the ES256 verify and the rest). */
export const DPOP_EXTRA_INSTRUCTIONS = 1_000_000;

const CASE_NAMES: Record<keyof typeof BUDGETS.instructions, string> = {
  'library-memory': 'requireBearer, memory store',
  'library-memory-dpop': 'requireBearer, DPoP (ES256), memory store',
  'library-postgres': 'requireBearer, PostgreSQL store',
  'library-token': 'token endpoint, repeat client',
  'library-token-claims': 'token endpoint, repeat client with extra claims',
  'library-token-pkjwt': 'token endpoint, private_key_jwt repeat client',
  'library-token-federated': 'token endpoint, federated repeat client',
};

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
    throughputBudget(rows, skipped, 'library-memory'),
    aheadBudget(rows, skipped, 'library-memory', ['auth0', 'node-oauth2'], 'requireBearer, memory store ahead of every peer'),
    throughputBudget(rows, skipped, 'library-postgres'),
    throughputBudget(rows, skipped, 'library-token'),
    aheadBudget(rows, skipped, 'library-token', ['node-oauth2-token'], 'token endpoint, repeat client ahead of node-oauth2-server'),
  ];
}

function throughputBudget(rows: ReadonlyMap<string, Row>, skipped: ReadonlySet<string>, id: keyof typeof BUDGETS.throughput): Budget {
  const min = BUDGETS.throughput[id];
  return ratioBudget(rows, skipped, id, min, `${CASE_NAMES[id]} ≥ ${min.toFixed(2)}× bare`);
}

/** A case's instruction figures: `ratio` is bare's instructions per request ÷ the case's. */
export interface InstructionRow {
  readonly id: string;
  readonly ratio: number;
  /** Instructions per request (mean over the repeats). */
  readonly mean?: number;
  readonly failed?: string;
}

/** The instruction budgets (bare ÷ case, instructions per request, means over the repeats). */
export function judgeInstructionBudgets(list: readonly InstructionRow[], skipped: ReadonlySet<string>): Budget[] {
  const rows = new Map(list.map((r) => [r.id, r]));
  const ratios = (Object.entries(BUDGETS.instructions) as [keyof typeof BUDGETS.instructions, number][]).map(([id, min]): Budget => {
    const name = `${CASE_NAMES[id]} ≥ ${min.toFixed(2)}× bare (instructions)`;
    const row = rows.get(id);
    if (!row) return missing(name, [id], skipped);
    if (row.failed) return { name, status: 'FAIL', detail: row.failed };
    return { name, status: verdict(row.ratio >= min), detail: `${row.ratio.toFixed(3)}× bare, needs ≥ ${min.toFixed(2)}×` };
  });
  return [...ratios, dpopExtraBudget(rows, skipped)];
}

/** DPoP costs at most DPOP_EXTRA_INSTRUCTIONS per request above the Bearer case. */
function dpopExtraBudget(rows: ReadonlyMap<string, InstructionRow>, skipped: ReadonlySet<string>): Budget {
  const name = `requireBearer, DPoP ≤ ${DPOP_EXTRA_INSTRUCTIONS.toLocaleString('en-US')} instructions above Bearer`;
  const dpop = rows.get('library-memory-dpop');
  const bearer = rows.get('library-memory');
  if (!dpop || !bearer || dpop.mean === undefined || bearer.mean === undefined) return missing(name, ['library-memory-dpop', 'library-memory'], skipped);
  if (dpop.failed || bearer.failed) return { name, status: 'FAIL', detail: dpop.failed ?? bearer.failed ?? '' };
  const extra = dpop.mean - bearer.mean;
  return { name, status: verdict(extra <= DPOP_EXTRA_INSTRUCTIONS), detail: `${Math.round(extra).toLocaleString('en-US')} above Bearer` };
}
