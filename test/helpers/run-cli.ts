/**
 * Spawns the built `service-accounts` bin (`dist/cli/main.cjs`, the file package.json's `bin` names),
 * exactly as a user runs it. `npm test` builds first (`pretest`).
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { leakGuard } from './leak-guard.js';

export const ROOT = resolve(__dirname, '..', '..');
export const CLI_BIN = resolve(ROOT, 'dist', 'cli', 'main.cjs');

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliRunOptions {
  /** Extra environment; SERVICE_ACCOUNTS_STORE is removed from the inherited one unless given here. */
  readonly env?: Record<string, string | undefined>;
  readonly cwd?: string;
  /** Written to the command's standard input, which is then closed. */
  readonly input?: string;
}

/** Runs the CLI with `args` and resolves with its exit code and output (never rejects on a non-zero exit). */
export function runCli(args: readonly string[], options: CliRunOptions = {}): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, SERVICE_ACCOUNTS_STORE: undefined, ...options.env };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  return new Promise((done, fail) => {
    const child = execFile(process.execPath, [CLI_BIN, ...args], { env, cwd: options.cwd ?? ROOT, timeout: 30_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') {
        fail(error);
        return;
      }
      // The secret-leak guard: only `create` and `secret add` may print a secret (once); nothing prints a hash.
      const createsSecrets = args.includes('create') || (args.includes('secret') && args.includes('add'));
      leakGuard().checkChildOutput(`service-accounts ${args.filter((a) => !a.startsWith('esas_')).join(' ')}`.slice(0, 120), stdout, stderr, { createsSecrets });
      done({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** Runs the CLI with `--json` appended and parses its stdout as one JSON document; fails on a non-zero exit. */
export async function runCliJson<T = unknown>(args: readonly string[], options: CliRunOptions = {}): Promise<T> {
  const run = await runCli([...args, '--json'], options);
  if (run.code !== 0) throw new Error(`service-accounts ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}
