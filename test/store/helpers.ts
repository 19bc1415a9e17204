/**
 * @module helpers
 * Shared by the SQL store tests: spawning init workers, new accounts, and the `vi.waitFor` options for watch calls.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const TSX = join(__dirname, '../../node_modules/.bin/tsx');
const WORKER = join(__dirname, 'fixtures/init-store-worker.ts');

/**
 * Result of one worker process.
 *
 * @example
 * ```ts
 * for (const result of results) expect(result, result.stderr).toMatchObject({ code: 0 })
 * ```
 */
export interface WorkerResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs one init worker per client ID against `storeUrl`, all starting their first use of the store at
 * the same instant.
 *
 * @example
 * ```ts
 * const results = await runInitWorkers('sqlite:/tmp/x.db', ['svc_a', 'svc_b'])
 * ```
 */
export async function runInitWorkers(storeUrl: string, clientIds: readonly string[]): Promise<WorkerResult[]> {
  const startAt = Date.now() + 2500; // time for every tsx process to boot
  return Promise.all(clientIds.map((clientId) => runWorker([storeUrl, clientId, String(startAt)])));
}

function runWorker(args: string[]): Promise<WorkerResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(TSX, [WORKER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * `vi.waitFor` options for something a store must deliver within `timeoutMs`, checked every 10 ms.
 *
 * @example
 * ```ts
 * await vi.waitFor(() => expect(seen, 'change seen by store B').toContain(clientId), within(1000))
 * ```
 */
export function within(timeoutMs: number): { timeout: number; interval: number } {
  return { timeout: timeoutMs, interval: 10 };
}

/**
 * A realistic new account with a unique client ID.
 *
 * @example
 * ```ts
 * await store.createAccount(newAccount())
 * ```
 */
export function newAccount(createdAt = new Date()) {
  const suffix = Math.random().toString(36).slice(2, 12);
  return {
    clientId: `svc_${suffix}`,
    name: `Store test ${suffix}`,
    clientAccountId: null,
    scopes: ['jobs:write'],
    createdAt,
    secret: { id: `sec_${suffix}`, hash: `$2b$12$${'x'.repeat(53)}`, createdAt },
  };
}
