/**
 * @module feed-poller
 * The child of bench/poll-cost.ts: a PostgreSQL account store (`BENCH_SERVER_CONFIG.store`, a schema
 * URL) that does nothing but watch its change feed (`watch: true`) or nothing at all (`watch: false`,
 * the control), answering commands on stdin, one per line:
 * - `gc`: a full garbage collection (`--expose-gc`), then `FEED_GC`;
 * - `count`: `FEED_COUNT {json}`: the change-feed queries sent so far (`polls`, counted on pg's
 *   `Client.prototype.query`; `first` the one read at start), `watch()` errors, the states the feed
 *   reported, and `process.cpuUsage()`.
 * Prints `BENCH_READY {"port":0}` once watching.
 */
import { createInterface } from 'node:readline';
import pg from 'pg';
import { openAccountStore } from '../../src/sql/index.js';
import { readConfig } from './serve.js';

const config = readConfig() as ReturnType<typeof readConfig> & { watch?: boolean };
let polls = 0;
let errors = 0;
const states: string[] = [];

// Every read of the change feed (the start's `max(seq)` and each poll's `seq > $1`) names its table.
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
  if (text !== undefined && text.includes('account_changes')) polls++;
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;

async function main(): Promise<void> {
  const store = openAccountStore(config.store!, {
    ...(config.pollIntervalMs ? { pollIntervalMs: config.pollIntervalMs } : {}),
    onWatchError: () => {
      errors++;
    },
  });
  await store.init();
  const before = polls;
  if (config.watch) await store.watch!(() => undefined, { onStateChange: (state) => void states.push(state) });
  const gc = (globalThis as { gc?: () => void }).gc;
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line === 'gc') {
      gc?.();
      process.stdout.write('FEED_GC\n');
    } else if (line === 'count') {
      process.stdout.write(`FEED_COUNT ${JSON.stringify({ polls: polls - before, errors, states, cpu: process.cpuUsage() })}\n`);
    }
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      void store.close().finally(() => process.exit(0));
    });
  }
  process.stdout.write('BENCH_READY {"port":0}\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
