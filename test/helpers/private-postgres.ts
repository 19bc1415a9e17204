/**
 * A private PostgreSQL cluster for fault-injection tests: initdb into a temporary directory (as the
 * `postgres` OS user when running as root), trust auth, a random free port, its unix socket in the
 * same directory. Tests stop, restart, terminate and freeze it for real; `destroy()` removes it all.
 *
 * `withPrivatePostgres(what, body)` follows the suite's convention for missing services: without the
 * PostgreSQL binaries the tests are skipped with a visible note, except under CI=true (a failure).
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import { freePort } from './free-port.js';
import { withPrerequisite } from './with-postgres.js';

const run = promisify(execFile);

/** The directory holding initdb and pg_ctl: $POSTGRES_BIN, else the newest /usr/lib/postgresql/<n>/bin. */
export function postgresBinDir(): string | undefined {
  const given = process.env.POSTGRES_BIN;
  if (given) return existsSync(join(given, 'initdb')) ? given : undefined;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  return versions.map((v) => join(root, v, 'bin')).find((dir) => existsSync(join(dir, 'initdb')));
}

const asRoot = userInfo().uid === 0;

export class PrivatePostgres {
  private constructor(
    private readonly bin: string,
    readonly dir: string,
    readonly port: number,
  ) {}

  get dataDir(): string {
    return join(this.dir, 'data');
  }

  /** A connection URL over TCP (database `postgres`, user `postgres`, trust auth). */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** Creates and starts a cluster. */
  static async create(bin: string): Promise<PrivatePostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'esa-private-pg-'));
    if (asRoot) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
    }
    const cluster = new PrivatePostgres(bin, dir, await freePort());
    try {
      await cluster.#tool('initdb', ['-D', cluster.dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
      const settings = [
        `port = ${cluster.port}`,
        `listen_addresses = '127.0.0.1'`,
        `unix_socket_directories = '${dir}'`,
        // fsync off: only an OS crash loses data then. Commits stay synchronous: an immediate stop (a
        // server crash) must not lose committed transactions, or tests would see accounts vanish.
        'fsync = off',
        'full_page_writes = off',
        'shared_buffers = 16MB',
        'max_connections = 40',
      ];
      writeFileSync(join(cluster.dataDir, 'postgresql.auto.conf'), `${settings.join('\n')}\n`);
      await cluster.start();
      return cluster;
    } catch (error) {
      await cluster.destroy();
      throw error;
    }
  }

  async #tool(name: string, args: string[]): Promise<string> {
    const command = join(this.bin, name);
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
    const { stdout } = await run(file, argv, { cwd: this.dir, timeout: 60_000 });
    return stdout;
  }

  /** Starts the server and waits until it accepts connections. */
  async start(): Promise<void> {
    await this.#tool('pg_ctl', ['start', '-D', this.dataDir, '-w', '-t', '60', '-l', join(this.dir, 'server.log')]);
  }

  /** Starts the server unless it runs (for afterEach: a failed test may leave it stopped). */
  async ensureStarted(): Promise<void> {
    const running = await this.#tool('pg_ctl', ['status', '-D', this.dataDir]).then(() => true, () => false);
    if (!running) await this.start();
  }

  /** Stops the server: `immediate` kills every backend at once (a crash), `fast` shuts down cleanly. */
  async stop(mode: 'immediate' | 'fast' = 'fast'): Promise<void> {
    await this.#tool('pg_ctl', ['stop', '-D', this.dataDir, '-m', mode, '-w', '-t', '60']);
  }

  async restart(mode: 'immediate' | 'fast' = 'fast'): Promise<void> {
    await this.stop(mode);
    await this.start();
  }

  /** Runs one statement on a connection of its own. */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    const client = await this.session();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  /** A connected client of its own (the caller ends it); its connection errors are ignored. */
  async session(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  /** Process ids of the client backends other than the caller's; `listeningOn`: only those LISTENing there. */
  async backendPids(filter: { listeningOn?: string } = {}): Promise<number[]> {
    const rows = await this.query<{ pid: number }>(
      `select pid from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()
       and ($1::text is null or query ilike 'listen %' and strpos(query, $1) > 0)`,
      [filter.listeningOn ?? null],
    );
    return rows.map((row) => row.pid);
  }

  /** `pg_terminate_backend` of every client backend but the caller's and `except`; resolves with how many. */
  async terminateBackends(except: readonly number[] = []): Promise<number> {
    const rows = await this.query<{ pid: number }>(
      `select pid from pg_stat_activity, pg_terminate_backend(pid)
       where backend_type = 'client backend' and pid <> pg_backend_pid() and pid <> all($1::int[])`,
      [except],
    );
    return rows.length;
  }

  /** Waits until at least `count` backends wait for a lock (queries provably in flight). */
  async waitForLockWaiters(count: number, timeoutMs = 10_000): Promise<void> {
    await vi.waitFor(
      async () => {
        const [row] = await this.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock'`);
        expect(row!.n, 'backends waiting for a lock').toBeGreaterThanOrEqual(count);
      },
      { timeout: timeoutMs, interval: 20 },
    );
  }

  /** The postmaster's process id (freezing it stalls new connections). */
  serverPid(): number {
    return Number(readFileSync(join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  }

  /** Freezes a backend process (SIGSTOP) until `resume(pid)`: a stalled connection, socket still open. */
  pause(pid: number): void {
    process.kill(pid, 'SIGSTOP');
  }

  resume(pid: number): void {
    process.kill(pid, 'SIGCONT');
  }

  /** Stops the server (if running) and removes the directory. Never throws. */
  async destroy(): Promise<void> {
    if (existsSync(join(this.dataDir, 'postmaster.pid'))) await this.stop('immediate').catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Declares tests that need a private cluster: `body(cluster)` runs at collection time; `cluster()` is
 * the started cluster inside tests (created in beforeAll, destroyed in afterAll even after failures).
 */
export function withPrivatePostgres(what: string, body: (cluster: () => PrivatePostgres) => void): void {
  const bin = postgresBinDir();
  withPrerequisite(what, bin !== undefined, 'the PostgreSQL server binaries (initdb, pg_ctl; set POSTGRES_BIN)', () => {
    let cluster: PrivatePostgres | undefined;
    beforeAll(async () => {
      cluster = await PrivatePostgres.create(bin!);
    });
    afterAll(async () => {
      await cluster?.destroy();
    });
    body(() => {
      if (!cluster) throw new Error('the private PostgreSQL cluster did not start');
      return cluster;
    });
  });
}

