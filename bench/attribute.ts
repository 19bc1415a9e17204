/**
 * @module attribute
 * `npm run bench:attribute -- <case dump> <bare dump>`: where a case's instructions per request go,
 * against bare Express, from two callgrind dumps of `npm run bench:instructions` (kept with
 * `INSTR_KEEP=1`). For names of JIT-compiled JavaScript, run the bench with
 * `INSTR_NODE_ARGS=--perf-basic-prof` (Node then writes `/tmp/perf-<pid>.map`, read here; it adds
 * instructions of its own, so use such runs to attribute, not to judge budgets).
 *
 * Prints, per request: V8's and Node's work by kind (inclusive, so a collection started inside an IC
 * miss counts in both rows), the JavaScript functions of the library with what they call directly
 * (IC handlers, runtime, builtins; not other JavaScript), and the largest differences by function.
 * Options: `--requests N` (default 1200), `--js <regexp>` (default: the bundled servers and lru-cache).
 */
import { inclusiveOf, readProfile, type Profile } from './lib/callgrind-profile.js';

const KINDS: readonly (readonly [string, RegExp])[] = [
  ['TurboFan compilation', /^v8::internal::Compiler::CompileOptimized\(/],
  ['Sparkplug (baseline) compilation', /^v8::internal::(BaselineBatchCompiler::CompileBatch|Compiler::CompileSharedWithBaseline)\(/],
  ['garbage collection', /^v8::internal::Heap::CollectGarbage\(/],
  ['IC misses (runtime property lookups)', /^v8::internal::Runtime_(Keyed)?(Load|Store|DefineNamedOwn|DefineKeyedOwn|LoadGlobal)IC_Miss\(/],
  ['object literals with computed keys (runtime)', /^v8::internal::Runtime_DefineKeyedOwnPropertyInLiteral\(/],
  ['timers (libuv)', /^uv__run_timers$/],
];

/** Calls out of a JavaScript function that lead into other JavaScript. */
const INTO_JS = /^(JS |Builtins_(Call|Construct|BaselineOutOfLinePrologue|JSEntry|InterpreterEntryTrampoline|CompileLazy|ArrayForEach|ArrayMap|PromiseConstructor|AsyncFunction|RunMicrotasks))/;

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(name);
  return at > 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback;
}

/** A C++ name without its parameter list and return type, for a table. */
function shortName(name: string): string {
  let end = name.length;
  if (name.endsWith(')') || name.endsWith(') const')) {
    let depth = 0;
    for (let i = name.lastIndexOf(')'); i >= 0; i--) {
      if (name[i] === ')') depth++;
      else if (name[i] === '(' && --depth === 0) {
        end = i;
        break;
      }
    }
  }
  return name.slice(0, end).replace(/^(void|bool|int|unsigned \w+) /, '').replace(/v8::internal::/g, '');
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const pad = (s: string, n: number): string => (s.length >= n ? s.slice(0, n) : s + ' '.repeat(n - s.length));
const padLeft = (s: string, n: number): string => (s.length >= n ? s : ' '.repeat(n - s.length) + s);

/** A JavaScript function's own cost: its self cost plus its direct calls that do not lead into JavaScript. */
function ownCosts(profile: Profile, pattern: RegExp): Map<string, { self: number; calls: Map<string, number> }> {
  const out = new Map<string, { self: number; calls: Map<string, number> }>();
  const entry = (name: string) => {
    let e = out.get(name);
    if (!e) out.set(name, (e = { self: 0, calls: new Map() }));
    return e;
  };
  for (const [name, cost] of profile.self) if (name.startsWith('JS ') && pattern.test(name)) entry(name).self += cost;
  for (const [key, edge] of profile.edges) {
    const [caller, callee] = key.split('\u0000') as [string, string];
    if (!caller.startsWith('JS ') || !pattern.test(caller) || INTO_JS.test(callee)) continue;
    const calls = entry(caller).calls;
    calls.set(callee, (calls.get(callee) ?? 0) + edge.cost);
  }
  return out;
}

function main(): void {
  const [caseFile, bareFile] = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'));
  if (!caseFile || !bareFile) {
    console.error('usage: npm run bench:attribute -- <case dump> <bare dump> [--requests N] [--js <regexp>]');
    process.exit(2);
  }
  const requests = Number(option('--requests', '1200'));
  const js = new RegExp(option('--js', 'results/instructions/.*\\.cjs|lru-cache'));
  const subject = readProfile(caseFile);
  const bare = readProfile(bareFile);
  const per = (n: number): string => padLeft(fmt(n / requests), 11);

  console.log(`${pad('instructions per request', 48)}${padLeft('case', 11)}${padLeft('bare', 11)}${padLeft('difference', 11)}`);
  console.log(`${pad('total', 48)}${per(subject.total)}${per(bare.total)}${per(subject.total - bare.total)}`);
  let explained = 0;
  for (const [label, pattern] of KINDS) {
    const a = inclusiveOf(subject, pattern);
    const b = inclusiveOf(bare, pattern);
    explained += a - b;
    console.log(`${pad(`  ${label}`, 48)}${per(a)}${per(b)}${per(a - b)}`);
  }
  console.log(`${pad('  everything else (JavaScript, builtins, Node)', 48)}${padLeft('', 22)}${per(subject.total - bare.total - explained)}`);

  console.log(`\nJavaScript of the case (self + direct calls that do not lead into JavaScript), per request:`);
  const own = [...ownCosts(subject, js)].map(([name, e]) => ({ name, e, total: e.self + [...e.calls.values()].reduce((x, y) => x + y, 0) }));
  for (const { name, e, total } of own.sort((x, y) => y.total - x.total).slice(0, 25)) {
    if (total / requests < 20) break;
    const top = [...e.calls].sort((x, y) => y[1] - x[1]).slice(0, 3).filter(([, c]) => c / requests >= 20);
    console.log(`${per(total)}  ${name.replace(/^JS JS:/, '').replace(/ \/\S*\/(?=[^/\s]+$)/, ' ')}`);
    console.log(`${padLeft('', 13)}self ${fmt(e.self / requests)}${top.map(([c, v]) => `; ${shortName(c)} ${fmt(v / requests)}`).join('')}`);
  }

  console.log(`\nLargest differences by function (self cost), per request:`);
  const names = new Set([...subject.self.keys(), ...bare.self.keys()]);
  const diffs = [...names].map((n) => ({ n, d: (subject.self.get(n) ?? 0) - (bare.self.get(n) ?? 0) }));
  for (const { n, d } of diffs.sort((x, y) => Math.abs(y.d) - Math.abs(x.d)).slice(0, 25)) {
    console.log(`${per(d)}  ${shortName(n).slice(0, 110)}`);
  }
}

main();
