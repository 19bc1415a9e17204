/**
 * docs/security.md, "Paying bcrypt once per secret": "concurrent checks of the same client ID and the
 * byte-identical secret share one bcrypt compare". A fleet of workers sharing one credential, started
 * at once from many addresses, all get their first token, at the cost of one compare, with the failure
 * limiter (whose default allows 10 failures per client ID) on or off; a wrong value presented at the
 * same time is its own check and is refused, never carried by the right one's result.
 *
 * bcrypt compares are counted, and held (test/helpers/held-bcrypt.ts) until every request of the
 * fleet reached the server, so the requests do overlap, whatever the machine's speed.
 */
import express from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createServiceAccounts, MemoryAccountStore, type ServiceAccounts } from '../../src/index.js';
import { TEST_HS256_KEY, TEST_ISSUER } from '../helpers/create-app.js';
import { heldBcrypt } from '../helpers/held-bcrypt.js';
import { secretWithId } from '../helpers/secret-values.js';
import { listen, tokenRequest, type LiveServer, type RawResponse } from './helpers.js';

vi.mock('bcrypt', async (importOriginal) => (await import('../helpers/held-bcrypt.js')).withHeldCompares(await importOriginal()));

const FLEET = 50;
const grant = { grant_type: 'client_credentials' };

describe.each([
  ['with the default failure limiter', {}],
  ['without the failure limiter', { failureLimit: false as const }],
])('a fleet sharing one credential, %s', (_name, options) => {
  let sa: ServiceAccounts | undefined;
  let server: LiveServer | undefined;
  afterEach(async () => {
    heldBcrypt.release();
    await server?.close();
    await sa?.close();
  });

  /** An instance behind a proxy (`trust proxy`), counting the token requests that reached it. */
  async function setUp() {
    sa = createServiceAccounts({ store: new MemoryAccountStore(), issuer: TEST_ISSUER, signingKeys: [{ alg: 'HS256', key: TEST_HS256_KEY }], secretHashRounds: 4, ...options });
    const app = express();
    app.set('trust proxy', true);
    const arrived = { count: 0 };
    app.use((_req, _res, next) => {
      arrived.count++;
      next();
    });
    app.use('/oauth', sa.tokenRouter);
    server = await listen(app);
    await sa.ready();
    const account = await sa.admin.createAccount({ name: 'fleet' });
    heldBcrypt.compares = 0;
    const live = server;
    const ask = (secret: string, worker: number): Promise<RawResponse> =>
      tokenRequest(live, { ...grant, client_id: account.clientId, client_secret: secret }, { 'x-forwarded-for': `198.51.100.${worker + 1}` });
    return { account, arrived, ask };
  }

  /** Sends every request with bcrypt held, waits until all reached the server and one compare started, then lets bcrypt run. */
  async function together(arrived: { count: number }, requests: () => Array<Promise<RawResponse>>): Promise<RawResponse[]> {
    heldBcrypt.hold();
    const answers = requests();
    await vi.waitFor(() => expect(arrived.count).toBe(answers.length), { timeout: 10_000, interval: 5 });
    await vi.waitFor(() => expect(heldBcrypt.compares).toBeGreaterThan(0), { timeout: 10_000, interval: 5 });
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    heldBcrypt.release();
    return Promise.all(answers);
  }

  it(`all ${FLEET} first requests, from ${FLEET} addresses at once, get a token for one bcrypt compare`, async () => {
    const { account, arrived, ask } = await setUp();
    const answers = await together(arrived, () => Array.from({ length: FLEET }, (_, worker) => ask(account.secret.value, worker)));
    expect(answers.map((res) => res.status)).toEqual(Array.from({ length: FLEET }, () => 200));
    expect(heldBcrypt.compares).toBe(1);
  });

  it('a wrong value sent with the right one is checked on its own and refused', async () => {
    const { account, arrived, ask } = await setUp();
    const wrong = secretWithId(account.secret.id); // the same secret ID, another value
    const answers = await together(arrived, () =>
      Array.from({ length: 10 }, (_, worker) => ask(worker % 2 === 0 ? account.secret.value : wrong, worker)),
    );
    expect(answers.map((res) => res.status)).toEqual(Array.from({ length: 10 }, (_, worker) => (worker % 2 === 0 ? 200 : 401)));
    expect(heldBcrypt.compares).toBe(2); // one per distinct value
  });
});
