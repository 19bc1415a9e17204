/**
 * A flooding address whose share of the bcrypt queue is full is refused before any work for its
 * request: 503 `temporarily_unavailable` with `Retry-After`, without a store read (docs/security.md,
 * "Fair shares under a flood"). The store read used to come first, so every refused flood request still
 * cost a store query and an account cache entry for its made-up client ID, and kept the event loop
 * busier than a refusal needs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryAccountStore } from '../../src/index.js';
import { generateSecret } from '../../src/credentials/generate-credentials.js';
import { createTestApp } from '../helpers/create-app.js';
import { ForwardingStore } from '../helpers/forwarding-store.js';
import { json, listen, tokenRequest, type LiveServer, type RawResponse } from './helpers.js';

/** Real compares at cost 12: slow on a loaded machine, never wrong. */
const TEST_TIMEOUT_MS = 90_000;
const FLOOD_ADDRESS = '203.0.113.1';
/** Concurrent flooding requests: more than 2 running + 16 waiting, the default share of one address. */
const FLOOD_CONNECTIONS = 26;
const PROBES = 20;

/** Remembers every client ID the token endpoint looked up. */
class ReadRecordingStore extends ForwardingStore {
  readonly reads = new Set<string>();
  override findAccount(clientId: string): ReturnType<MemoryAccountStore['findAccount']> {
    this.reads.add(clientId);
    return super.findAccount(clientId);
  }
}

describe('a flooding address whose share of the bcrypt queue is full', () => {
  let server: LiveServer | undefined;
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await server?.close();
    await close?.();
  });

  it('is refused 503 with Retry-After before the store is read', async () => {
    const store = new ReadRecordingStore(new MemoryAccountStore());
    // Cost 12: each compare takes far longer than a request's way to the gate, so the flood keeps its share full.
    const { app, sa } = createTestApp({ store, secretHashRounds: 12, failureLimit: false });
    app.set('trust proxy', true);
    close = () => sa.close();
    server = await listen(app);
    const live = server;

    // Well-formed wrong secrets, a new client ID each, from one address: each admitted one costs a compare.
    const wrong = generateSecret().value;
    let sent = 0;
    let stopping = false;
    let notifyFull: () => void = () => {};
    const full = new Promise<void>((resolve) => (notifyFull = resolve));
    const send = (clientId: string): Promise<RawResponse> =>
      tokenRequest(live, { grant_type: 'client_credentials', client_id: clientId, client_secret: wrong }, { 'x-forwarded-for': FLOOD_ADDRESS });
    // Closed loop: each flooding connection sends its next request once answered, so the share stays full.
    const flood = Array.from({ length: FLOOD_CONNECTIONS }, async () => {
      while (!stopping) {
        const res = await send(`esa_flood${sent++}`);
        if (res.status === 503) notifyFull();
      }
    });
    await full;

    // Probes from the flooding address, one after another, each with a client ID never sent before.
    const probes: Array<{ clientId: string; res: RawResponse }> = [];
    for (let i = 0; i < PROBES; i++) {
      const clientId = `esa_probe${i}`;
      probes.push({ clientId, res: await send(clientId) });
    }
    stopping = true;
    await Promise.all(flood);

    const refused = probes.filter((p) => p.res.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    for (const { clientId, res } of refused) {
      expect(json(res)).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
      expect(res.headers['retry-after']).toBe('1');
      expect(store.reads.has(clientId), `${clientId} was refused after a store read`).toBe(false);
    }
    // The others waited their turn and were compared: 401, after a store read.
    for (const { clientId, res } of probes.filter((p) => p.res.status !== 503)) {
      expect(res.status).toBe(401);
      expect(store.reads.has(clientId)).toBe(true);
    }
  }, TEST_TIMEOUT_MS);
});
