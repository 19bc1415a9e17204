/**
 * examples/README.md, `MAX_CREDENTIAL_LIFETIME`: "every new secret, key and federated credential must
 * expire within it". On an empty store the example still starts and provisions its demo account: the
 * demo secret expires at that limit, the start-up lines say when, and the secret gets a token.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { killAllServers, requestToken, startServer } from './example-server.js';

const NINETY_DAYS_MS = 90 * 86_400_000;

describe('the example server with MAX_CREDENTIAL_LIFETIME', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'sa-example-lifetime-'));
  afterAll(async () => {
    await killAllServers();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts on an empty store, and its demo secret expires at the limit and gets a token', async () => {
    const before = Date.now();
    const server = await startServer({
      PORT: String(await freePort()),
      SERVICE_ACCOUNTS_STORE: `sqlite:${join(dir, 'lifetime.db')}`,
      MAX_CREDENTIAL_LIFETIME: '90d',
    });
    const after = Date.now();
    const printed = /The demo secret expires at (\S+) \(MAX_CREDENTIAL_LIFETIME\)\./.exec(server.output)?.[1];
    expect(printed, server.output).toBeDefined();
    const expiresAt = Date.parse(printed!);
    expect(expiresAt).toBeGreaterThanOrEqual(before + NINETY_DAYS_MS - 1000);
    expect(expiresAt).toBeLessThanOrEqual(after + NINETY_DAYS_MS);
    const res = await requestToken(server.url, server.demo!, 'basic');
    expect(res.status, await res.clone().text()).toBe(200);
  });
});
