/**
 * @module load
 * Loads one server with autocannon from this process: a warm-up run whose numbers are dropped, then
 * the measured run. Latency percentiles are computed from every response time (sub-millisecond),
 * because autocannon's own histogram rounds to whole milliseconds.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type { DpopClient } from './dpop-proof.js';

/** One HTTP request, repeated by every connection. */
export interface LoadRequest {
  readonly path: string;
  readonly method?: 'GET' | 'POST';
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /**
   * Instruction bench only (lib/sequential-driver.ts): each request's body is a token request with a
   * new client assertion (a new `jti` each, the same size each) signed for this client, instead of
   * `body`. A client assertion is single-use, so no fixed body can repeat.
   */
  readonly assertion?: AssertionClient;
  /**
   * Instruction bench only: each request carries a fresh DPoP proof (RFC 9449) of this client in a
   * `DPoP` header. A proof is single-use, so no fixed header can repeat.
   */
  readonly dpop?: DpopClient;
}

/**
 * A client that authenticates with a signed JWT (RFC 7523 §2.2) and how its assertions look: a
 * key-pair client's own (`private_key_jwt`) or an outside issuer's token (a federated client). Each
 * assertion carries `claims` plus a new `iat`, `exp` (`iat + lifetime`), `jti` and, with
 * `notBefore`, `nbf`. Built by lib/assertion-body.ts.
 */
export interface AssertionClient {
  /** The protected header: the algorithm and, when the verifier picks keys by it, the `kid`. */
  readonly header: { readonly alg: 'ES256' | 'RS256'; readonly kid?: string; readonly typ?: string };
  /** The signing key, PKCS #8 PEM (EC P-256 for ES256, RSA for RS256). */
  readonly pkcs8: string;
  /** The claims every assertion carries (`iss`, `sub`, `aud`, ...). */
  readonly claims: Readonly<Record<string, unknown>>;
  /** Seconds from `iat` to `exp`. */
  readonly lifetime: number;
  readonly notBefore?: boolean;
}

export interface LoadSettings {
  readonly connections: number;
  readonly warmupSeconds: number;
  readonly durationSeconds: number;
}

export interface LoadResult {
  /** Mean 2xx responses per second over the measured run. */
  readonly rps: number;
  /** Milliseconds. */
  readonly p50: number;
  readonly p99: number;
  readonly requests: number;
  /** Responses that were not 2xx, plus socket errors and timeouts: must be 0 for a valid row. */
  readonly failures: number;
  readonly statusCodes: Record<string, number>;
  /**
   * Server CPU time (user + system, every thread) per 2xx response, in microseconds; NaN without
   * /proc. Far less sensitive than req/s to other load on the machine, so dev runs compare this too.
   */
  readonly cpuUsPerRequest: number;
}

const CLOCK_TICKS = (() => {
  const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const value = Number(out.stdout?.trim());
  return Number.isFinite(value) && value > 0 ? value : 100;
})();

/** CPU seconds a process has used so far (Linux /proc), or undefined. */
export function processCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces, so split after its closing paren).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS; // utime, stime (fields 14, 15)
  } catch {
    return undefined;
  }
}

/** The `p`th percentile (nearest rank) of ascending `sorted`; NaN when empty. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

let current: autocannon.Instance | undefined;

/** Stops the load in progress (used when the run is aborted). */
export function stopLoad(): void {
  current?.stop();
}

async function fire(port: number, request: LoadRequest, connections: number, seconds: number, onTime?: (ms: number, status: number) => void) {
  const instance = autocannon({
    url: `http://127.0.0.1:${port}${request.path}`,
    method: request.method ?? 'GET',
    connections,
    duration: seconds,
    timeout: 10,
    ...(request.headers ? { headers: request.headers } : {}),
    ...(request.body !== undefined ? { body: request.body } : {}),
  });
  current = instance;
  if (onTime) instance.on('response', (_client, status, _bytes, ms) => onTime(ms, status));
  try {
    return await instance;
  } finally {
    current = undefined;
  }
}

/** Unmeasured load: lets the JIT, caches and connection pools settle. */
export async function warmUp(port: number, request: LoadRequest, settings: LoadSettings): Promise<void> {
  if (settings.warmupSeconds > 0) await fire(port, request, settings.connections, settings.warmupSeconds);
}

/**
 * Accumulates measured slices of one case. Cases are measured in interleaved slices (round-robin over
 * every running server), so slow drifts in machine load hit every case alike and ratios stay fair.
 */
export class Measurement {
  #times = new Float64Array(1 << 16);
  #count = 0;
  #ok = 0;
  #seconds = 0;
  #failures = 0;
  #cpuSeconds = 0;
  #cpuKnown = true;
  readonly #statusCodes: Record<string, number> = {};

  /** Runs one measured slice of `seconds`; `pid` is the server's, for its CPU time. */
  async slice(port: number, request: LoadRequest, connections: number, seconds: number, pid?: number): Promise<void> {
    const cpuBefore = processCpuSeconds(pid);
    const result = await fire(port, request, connections, seconds, (ms, status) => {
      if (status < 200 || status >= 300) return;
      if (this.#count === this.#times.length) {
        const bigger = new Float64Array(this.#times.length * 2);
        bigger.set(this.#times);
        this.#times = bigger;
      }
      this.#times[this.#count++] = ms;
    });
    const cpuAfter = processCpuSeconds(pid);
    if (cpuBefore === undefined || cpuAfter === undefined) this.#cpuKnown = false;
    else this.#cpuSeconds += cpuAfter - cpuBefore;
    this.#ok += result['2xx'];
    this.#seconds += result.duration || seconds;
    this.#failures += result.non2xx + result.errors + result.timeouts;
    for (const [code, { count }] of Object.entries(result.statusCodeStats)) {
      this.#statusCodes[code] = (this.#statusCodes[code] ?? 0) + count;
    }
  }

  result(): LoadResult {
    const sorted = this.#times.subarray(0, this.#count).sort();
    return {
      rps: this.#seconds > 0 ? this.#ok / this.#seconds : 0,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      requests: this.#ok,
      failures: this.#failures,
      statusCodes: { ...this.#statusCodes },
      cpuUsPerRequest: this.#cpuKnown && this.#ok > 0 ? (this.#cpuSeconds * 1e6) / this.#ok : Number.NaN,
    };
  }
}
