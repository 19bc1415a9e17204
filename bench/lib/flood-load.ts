/**
 * @module flood-load
 * The flood of the flood case, run as its own process (`node --import tsx bench/lib/flood-load.ts
 * <port> <connections> <addresses>`): every connection sends token requests back to back, each with a
 * new unknown client ID and a well-formed wrong secret (so each costs the server one bcrypt compare and
 * no per-client key repeats), from the addresses in turn. `<addresses>` is one address, `ipv4:N` (N
 * addresses of 198.18.0.0/15, the range RFC 2544 sets aside for benchmarks) or `ipv6-48:N` (N /64s of
 * the one /48 2001:db8:1::/48). Prints `FLOOD_SENDING` as its first requests leave, `FLOOD_RUNNING` once
 * every connection has had an answer (so the server has accepted all of them); on SIGTERM prints
 * `{ statuses }` as JSON and exits.
 */
import http from 'node:http';
import { generateSecret } from '../../src/credentials/generate-credentials.js';
import { postToken } from './token-post.js';

const [portArg, connectionsArg, addressArg = '203.0.113.1'] = process.argv.slice(2);

/** The i-th flooding address (see the module description). */
function floodAddress(spec: string): (i: number) => string {
  const [kind, count] = spec.split(':') as [string, string | undefined];
  const n = Number(count);
  if (kind === 'ipv4') return (i) => `198.18.${(i % n) >> 8}.${(i % n) & 0xff}`;
  if (kind === 'ipv6-48') return (i) => `2001:db8:1:${(i % n).toString(16)}::1`;
  return () => spec;
}
const addressOf = floodAddress(addressArg);
const port = Number(portArg);
const connections = Number(connectionsArg);
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
const statuses: Record<string, number> = {};
const wrong = generateSecret().value;
let sent = 0;
let stopping = false;

/** Connections that have had their first answer, so the server has accepted them. */
let connected = 0;

/**
 * One connection's requests, back to back. Every loop starts at once, so the agent opens one socket per
 * loop and a loop's first answer means the server accepted that socket. Counting answers instead would
 * say "running" after the first few connections answered 300 times, with the rest still waiting in the
 * kernel's accept queue, which Node drains one connection per event-loop turn: a newcomer's connection
 * would then wait behind them, measuring the flood's connection set-up instead of its steady state.
 */
async function loop(): Promise<void> {
  let first = true;
  while (!stopping) {
    const n = sent++;
    const clientId = `esa_flood${String(n).padStart(19, '0')}`;
    const status = await postToken(agent, port, { clientId, secret: wrong, address: addressOf(n) }, 120_000);
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (first && status !== 0) {
      first = false;
      if (++connected === connections) process.stdout.write('FLOOD_RUNNING\n');
    }
  }
}

process.once('SIGTERM', () => {
  stopping = true;
  process.stdout.write(`${JSON.stringify({ statuses })}\n`);
  process.exit(0);
});
// Every connection starts now: the flood's first second begins here.
process.stdout.write('FLOOD_SENDING\n');
for (let i = 0; i < connections; i++) void loop();
