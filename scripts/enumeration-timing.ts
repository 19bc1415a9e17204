/**
 * Enumeration timing (CONTRACT §2: unknown client ID, wrong secret, revoked secret and disabled
 * account are "indistinguishable in body, status and timing"). Measures the median response time of
 * each cause at the default bcrypt cost (10) against a real listening server, prints the medians and
 * the max/min ratio, and exits 1 when the ratio exceeds 1.5.
 *
 *   npx tsx scripts/enumeration-timing.ts [--samples 30] [--rounds 10] [--max-ratio 1.5]
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import express from 'express';
import { createServiceAccounts, MemoryAccountStore } from '../src/index.js';
import { generateSecret } from '../src/credentials/generate-credentials.js';

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at >= 0 ? Number(process.argv[at + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

const SAMPLES = Math.max(20, Math.floor(option('samples', 30)));
const ROUNDS = Math.floor(option('rounds', 10));
const MAX_RATIO = option('max-ratio', 1.5);

/** A well-formed secret carrying a given secret ID (same checksum rule as generate-credentials.ts). */
function secretWithId(secretId: string): string {
  const other = generateSecret().value; // esas_<16>_<44><6>
  const body = `esas_${secretId}_${other.slice(22, 66)}`;
  return body + checksum(body);
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
function checksum(text: string): string {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) {
    crc ^= text.charCodeAt(i);
    for (let k = 0; k < 8; k++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  }
  let value = (crc ^ 0xffffffff) >>> 0;
  let out = '';
  for (let i = 0; i < 6; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  const sa = createServiceAccounts({
    store: new MemoryAccountStore(),
    issuer: 'https://timing.test',
    signingKeys: { alg: 'HS256', key: 'timing-signing-key-0123456789abcdef-0123' },
    secretHashRounds: ROUNDS,
    failureLimit: false,
    debug: false, // thousands of failures on purpose: no line for each
  });
  const app = express();
  app.use('/oauth', sa.tokenRouter);
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  const live = await sa.admin.createAccount({ name: 'live' });
  const revoked = await sa.admin.createAccount({ name: 'revoked' });
  await sa.admin.addSecret(revoked.clientId);
  await sa.admin.revokeSecret(revoked.clientId, revoked.secret.id);
  const disabled = await sa.admin.createAccount({ name: 'disabled' });
  await sa.admin.disableAccount(disabled.clientId);
  await sa.ready();

  const cases: Record<string, { clientId: string; secret: string }> = {
    'unknown client': { clientId: 'esa_' + 'Z'.repeat(24), secret: generateSecret().value },
    'wrong secret (right secret ID)': { clientId: live.clientId, secret: secretWithId(live.secret.id) },
    'wrong secret (unknown secret ID)': { clientId: live.clientId, secret: generateSecret().value },
    'wrong secret (not shaped like one)': { clientId: live.clientId, secret: 'not-the-secret' },
    'revoked secret': { clientId: revoked.clientId, secret: revoked.secret.value },
    'disabled account': { clientId: disabled.clientId, secret: disabled.secret.value },
  };

  const post = (fields: { clientId: string; secret: string }): Promise<{ ms: number; status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: fields.clientId, client_secret: fields.secret }).toString();
      const started = performance.now();
      const req = http.request(
        { host: '127.0.0.1', port, method: 'POST', path: '/oauth/token', agent, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ ms: performance.now() - started, status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  const names = Object.keys(cases);
  const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const answers = new Set<string>();
  // Warm up, then interleave the causes so drift and noise fall on all of them alike.
  for (let i = 0; i < 3; i++) for (const name of names) await post(cases[name]!);
  for (let i = 0; i < SAMPLES; i++) {
    for (const name of names) {
      const { ms, status, body } = await post(cases[name]!);
      times[name]!.push(ms);
      answers.add(`${status} ${body}`);
    }
  }
  agent.destroy();
  server.close();
  await sa.close();

  const medians = names.map((name) => [name, median(times[name]!)] as const);
  const values = medians.map(([, m]) => m);
  const ratio = Math.max(...values) / Math.min(...values);
  console.log(`enumeration timing: bcrypt cost ${ROUNDS}, ${SAMPLES} requests per cause (interleaved)`);
  for (const [name, m] of medians) console.log(`  ${name.padEnd(34)} median ${m.toFixed(2)} ms`);
  console.log(`  max/min ratio ${ratio.toFixed(3)} (limit ${MAX_RATIO})`);
  if (answers.size !== 1) {
    console.error(`FAIL: the causes gave ${answers.size} different answers: ${[...answers].join(' | ')}`);
    process.exit(1);
  }
  console.log(`  every cause answered: ${[...answers][0]}`);
  if (ratio > MAX_RATIO) {
    console.error(`FAIL: ratio ${ratio.toFixed(3)} > ${MAX_RATIO}`);
    process.exit(1);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
