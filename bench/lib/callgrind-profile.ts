/**
 * @module callgrind-profile
 * Reads a callgrind dump (`--dump-instr=no`) into self costs and call edges per function, and names
 * JIT-compiled code, which callgrind only knows by address, from the map Node writes with
 * `--perf-basic-prof` (`/tmp/perf-<pid>.map`: start, size and name of every code object).
 */
import { existsSync, readFileSync } from 'node:fs';

export interface Profile {
  /** Instructions in the dump (its `totals:` line, else the sum of self costs). */
  readonly total: number;
  /** Self cost per function name. */
  readonly self: ReadonlyMap<string, number>;
  /** Inclusive cost of calls, per `caller\u0000callee`. */
  readonly edges: ReadonlyMap<string, { cost: number; calls: number }>;
  /** The server's pid (names its perf map). */
  readonly pid: number | undefined;
}

interface CodeRange {
  readonly start: number;
  readonly end: number;
  readonly name: string;
}

/** The perf map's code objects, sorted by start address. */
function readPerfMap(file: string): CodeRange[] {
  const ranges: CodeRange[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [start, size, ...name] = line.split(' ');
    if (!start || !size || name.length === 0) continue;
    const from = Number.parseInt(start, 16);
    ranges.push({ start: from, end: from + Number.parseInt(size, 16), name: name.join(' ') });
  }
  return ranges.sort((a, b) => a.start - b.start);
}

/** Names an address by the last code object that covers it (V8 reuses code space). */
function namer(ranges: readonly CodeRange[]): (address: number) => string | undefined {
  return (address) => {
    let lo = 0;
    let hi = ranges.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (ranges[mid]!.start <= address) lo = mid + 1;
      else hi = mid - 1;
    }
    for (let i = hi; i >= 0 && i > hi - 64; i--) if (address < ranges[i]!.end) return ranges[i]!.name;
    return undefined;
  };
}

/**
 * Parses a dump. Function names that are bare addresses (JIT code) become `JS <name from the perf map>`
 * when `perfMap` (default `/tmp/perf-<pid>.map`) exists, else stay as they are.
 */
export function readProfile(file: string, perfMap?: string): Profile {
  const text = readFileSync(file, 'utf8');
  const pid = /^pid:\s*(\d+)/m.exec(text)?.[1];
  const mapFile = perfMap ?? (pid ? `/tmp/perf-${pid}.map` : undefined);
  const nameOf = mapFile && existsSync(mapFile) ? namer(readPerfMap(mapFile)) : undefined;
  const names = new Map<string, string>();
  const resolve = (id: string, given: string | undefined): string => {
    if (given !== undefined) {
      const address = /^0x([0-9a-f]+)$/.exec(given);
      const js = address && nameOf ? nameOf(Number.parseInt(address[1]!, 16)) : undefined;
      names.set(id, js ? `JS ${js}` : given);
    }
    return names.get(id) ?? id;
  };
  const self = new Map<string, number>();
  const edges = new Map<string, { cost: number; calls: number }>();
  let current = '';
  let callee = '';
  let pendingCalls = 0;
  for (const line of text.split('\n')) {
    const fn = /^(c?fn)=\((\d+)\)(?: (.*))?$/.exec(line);
    if (fn) {
      const name = resolve(fn[2]!, fn[3]);
      if (fn[1] === 'fn') current = name;
      else callee = name;
      continue;
    }
    if (line.startsWith('calls=')) {
      pendingCalls = Number(line.slice(6).split(' ')[0]);
      continue;
    }
    const cost = /^[+\-*\d]\S*\s+(\d+)/.exec(line);
    if (!cost) continue;
    const value = Number(cost[1]);
    if (pendingCalls > 0) {
      const key = `${current}\u0000${callee}`;
      const edge = edges.get(key) ?? { cost: 0, calls: 0 };
      edge.cost += value;
      edge.calls += pendingCalls;
      edges.set(key, edge);
      pendingCalls = 0;
    } else {
      self.set(current, (self.get(current) ?? 0) + value);
    }
  }
  const totals = /^totals:\s*(\d+)/m.exec(text);
  const total = totals ? Number(totals[1]) : [...self.values()].reduce((a, b) => a + b, 0);
  return { total, self, edges, pid: pid ? Number(pid) : undefined };
}

/**
 * Inclusive cost of the functions whose name matches `pattern`: the largest such figure among them
 * (callers of a matching function are not counted twice), counting only call edges into a match from
 * a function that does not match. Recursion (`'2` names) is left out, as callgrind_annotate does.
 */
export function inclusiveOf(profile: Profile, pattern: RegExp): number {
  let cost = 0;
  for (const [key, edge] of profile.edges) {
    const [caller, callee] = key.split('\u0000') as [string, string];
    if (pattern.test(callee) && !pattern.test(caller) && !callee.includes("'")) cost += edge.cost;
  }
  return cost;
}
