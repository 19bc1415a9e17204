/**
 * @module serve
 * Start-up shared by the benchmark server children: reads the config the parent passed, listens on an
 * ephemeral port of 127.0.0.1 only, and reports `BENCH_READY {json}` on stdout.
 */
import { writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { ServerConfig, ServerReady } from '../lib/fixtures.js';

export const READY_PREFIX = 'BENCH_READY ';

export function readConfig(): ServerConfig {
  return JSON.parse(process.env.BENCH_SERVER_CONFIG ?? '{}') as ServerConfig;
}

/** Listens on 127.0.0.1:0 and tells the parent which port, plus anything else it needs to load us. */
export function serve(app: Express, extra: Omit<ServerReady, 'port'> = {}): Promise<Server> {
  return new Promise((resolve, reject) => {
    const { keepAliveTimeout } = readConfig();
    const server = app.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      process.stdout.write(`${READY_PREFIX}${JSON.stringify({ port, ...extra } satisfies ServerReady)}\n`);
      resolve(server);
    });
    if (keepAliveTimeout) server.keepAliveTimeout = keepAliveTimeout;
    server.on('error', reject);
  });
}

/** Runs a child's main and exits non-zero with the error on stderr if start-up fails. */
export function run(main: () => Promise<unknown>): void {
  // Exit through process.exit so `node --cpu-prof` writes its profile when the parent stops us.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => process.exit(0));
  // The instruction bench (lib/callgrind.ts, GC_SIGNAL): a full collection before the counted requests.
  const { gcAck } = readConfig();
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gcAck && gc) {
    process.on('SIGUSR2', () => {
      gc();
      process.stdout.write('BENCH_GC\n'); // marks where the counted requests begin in --trace-* output
      writeFileSync(gcAck, 'collected\n');
    });
  }
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
