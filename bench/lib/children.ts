/**
 * @module children
 * Server processes: spawned (pinned to their own core with `taskset` when it exists), awaited until
 * they report `BENCH_READY`, and always killed, by pid, when the run ends, normally or not.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { resolve } from 'node:path';
import { availableParallelism } from 'node:os';
import type { ServerConfig, ServerReady } from './fixtures.js';

const READY_PREFIX = 'BENCH_READY ';
const START_TIMEOUT_MS = 30_000;
const children = new Set<ChildProcess>();

/** Core plan: load generator (this process) on core 0, servers on core 1; `undefined` when not pinning. */
export interface CpuPlan {
  readonly load: string;
  readonly server: string;
}

/** Pins this process (every thread) to the load core; returns the plan, or undefined without taskset or a second core. */
export function pinCpus(): CpuPlan | undefined {
  if (availableParallelism() < 2 || spawnSync('which', ['taskset']).status !== 0) return undefined;
  const plan = { load: '0', server: '1' };
  const pinned = spawnSync('taskset', ['-a', '-cp', plan.load, String(process.pid)]);
  return pinned.status === 0 ? plan : undefined;
}

/** How to start a server other than `node --import tsx <script>` (the instruction bench: under valgrind). */
export interface Launch {
  /** Command words before `node` (e.g. `valgrind --tool=callgrind ...`). */
  readonly prefix?: readonly string[];
  /** Node options before the script. */
  readonly nodeArgs?: readonly string[];
  /** A ready-to-run JavaScript file instead of the TypeScript source. */
  readonly script?: string;
  /** A file that receives everything the server writes to stdout (V8's `--trace-*` output, say). */
  readonly stdoutFile?: string;
  /** The server's working directory (default: ours). */
  readonly cwd?: string;
  readonly startTimeoutMs?: number;
}

export interface RunningServer {
  readonly ready: ServerReady;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `bench/servers/<name>.ts` in its own Node process and waits for its ready line. */
export function startServer(name: string, config: ServerConfig, cpus: CpuPlan | undefined, launch: Launch = {}): Promise<RunningServer> {
  const script = launch.script ?? resolve(__dirname, '..', 'servers', `${name}.ts`);
  const nodeArgs = [...(launch.nodeArgs ?? []), ...(launch.script ? [] : ['--import', 'tsx']), script];
  const words = [...(cpus ? ['taskset', '-c', cpus.server] : []), ...(launch.prefix ?? []), process.execPath, ...nodeArgs];
  const startTimeoutMs = launch.startTimeoutMs ?? START_TIMEOUT_MS;
  const child = spawn(words[0]!, words.slice(1), {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(launch.cwd ? { cwd: launch.cwd } : {}),
    env: { ...process.env, BENCH_SERVER_CONFIG: JSON.stringify(config), NODE_ENV: 'production' },
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  if (launch.stdoutFile) child.stdout!.pipe(createWriteStream(launch.stdoutFile));

  return new Promise((resolvePromise, reject) => {
    let stdout = '';
    let stderr = '';
    let settled = false;
    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      kill(child);
      reject(new Error(`server ${name} ${why}${stderr ? `:\n${stderr.slice(-2000)}` : ''}`));
    };
    const timer = setTimeout(() => fail(`did not start within ${startTimeoutMs / 1000} s`), startTimeoutMs);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-8000);
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      if (settled) return;
      stdout += chunk.toString();
      const line = stdout.split('\n').find((l) => l.startsWith(READY_PREFIX));
      if (!line) return;
      settled = true;
      clearTimeout(timer);
      const ready = JSON.parse(line.slice(READY_PREFIX.length)) as ServerReady;
      resolvePromise({ ready, child, stop: () => stopChild(child) });
    });
    child.on('error', (err) => fail(`failed to spawn (${err.message})`));
    child.on('exit', (code, signal) => fail(`exited before it was ready (code ${code}, signal ${signal})`));
  });
}

function kill(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (child.exitCode === null && child.signalCode === null) {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** SIGTERM, then SIGKILL after 2 s. */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const hard = setTimeout(() => kill(child, 'SIGKILL'), 2000);
    child.once('exit', () => {
      clearTimeout(hard);
      done();
    });
    kill(child, 'SIGTERM');
  });
}

/** Stops every server still running. */
export async function stopAll(): Promise<void> {
  await Promise.all([...children].map(stopChild));
}

/** Makes sure no server outlives this process: on exit, on Ctrl-C/SIGTERM, and after `limitMs`. */
export function installCleanup(limitMs: number): void {
  process.on('exit', () => {
    for (const child of children) kill(child);
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping servers\n`);
      process.exit(130);
    });
  }
  const watchdog = setTimeout(() => {
    process.stderr.write(`\nbench: time limit of ${Math.round(limitMs / 1000)} s reached, stopping\n`);
    process.exit(3);
  }, limitMs);
  watchdog.unref();
}
