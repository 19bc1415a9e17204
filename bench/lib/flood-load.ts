/**
 * @module flood-load
 * The flood of the flood case, run as its own process (`node --import tsx bench/lib/flood-load.ts
 * <port> <connections> <address>`): every connection sends token requests back to back, each with a
 * new unknown client ID and a well-formed wrong secret (so each costs the server one bcrypt compare and
 * no per-client key repeats), all from one address. Prints `FLOOD_RUNNING` once every connection has had
 * an answer; on SIGTERM prints `{ statuses }` as JSON and exits.
 */
import http from 'node:http';
import { generateSecret } from '../../src/secrets/generate-credentials.js';
import { postToken } from './token-post.js';

const [portArg, connectionsArg, address = '203.0.113.1'] = process.argv.slice(2);
const port = Number(portArg);
const connections = Number(connectionsArg);
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
const statuses: Record<string, number> = {};
const wrong = generateSecret().value;
let sent = 0;
let stopping = false;

let answered = 0;

async function loop(): Promise<void> {
  while (!stopping) {
    const clientId = `esa_flood${String(sent++).padStart(19, '0')}`;
    const status = await postToken(agent, port, { clientId, secret: wrong, address }, 120_000);
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (++answered === connections) process.stdout.write('FLOOD_RUNNING\n');
  }
}

process.once('SIGTERM', () => {
  stopping = true;
  process.stdout.write(`${JSON.stringify({ statuses })}\n`);
  process.exit(0);
});
for (let i = 0; i < connections; i++) void loop();
