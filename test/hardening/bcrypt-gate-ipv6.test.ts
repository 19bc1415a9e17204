/**
 * docs/security.md, "Fair shares under a flood": the bcrypt gate keys an IPv6 client by its /48, the
 * block one site is given (RFC 6177): the addresses of one /48 are one client, with one turn and one
 * share of 16 waiting compares, so a flood cannot multiply its share by spreading over the addresses of
 * its prefix, nor over the 65,536 /64s of its /48.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { generateSecret } from '../../src/credentials/generate-credentials.js';
import { createTestApp } from '../helpers/create-app.js';
import { listen, tokenRequest, type LiveServer } from './helpers.js';

/** More than 2 running + 16 waiting, the share of one address. */
const BURST = 30;

describe('the bcrypt gate and IPv6 prefixes', () => {
  let server: LiveServer | undefined;
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await server?.close();
    await close?.();
  });

  /** Sends the burst at once, request i from `address(i)`; resolves with the statuses. */
  async function burst(address: (i: number) => string): Promise<number[]> {
    // Cost 12: a compare takes far longer than the burst takes to arrive, so the whole burst meets the gate at once.
    const { app, sa } = createTestApp({ secretHashRounds: 12, failureLimit: false });
    app.set('trust proxy', true);
    close = () => sa.close();
    server = await listen(app);
    const live = server;
    const wrong = generateSecret().value;
    const answers = await Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        tokenRequest(live, { grant_type: 'client_credentials', client_id: `esa_burst${i}`, client_secret: wrong }, { 'x-forwarded-for': address(i) }),
      ),
    );
    return answers.map((res) => res.status);
  }

  it('gives the addresses of one /64 one share: past it, 503', { timeout: 120_000 }, async () => {
    const statuses = await burst((i) => `2001:db8:1:2::${(i + 1).toString(16)}`);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(BURST - 18);
    expect(statuses.every((s) => s === 401 || s === 503)).toBe(true);
  });

  it('gives the /64s of one /48 one share: past it, 503', { timeout: 120_000 }, async () => {
    const statuses = await burst((i) => `2001:db8:1:${(i + 1).toString(16)}::1`);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(BURST - 18);
    expect(statuses.every((s) => s === 401 || s === 503)).toBe(true);
  });

  it('gives addresses of different /48s a share each: no 503', { timeout: 120_000 }, async () => {
    const statuses = await burst((i) => `2001:db8:${(i + 1).toString(16)}::1`);
    expect(statuses.filter((s) => s === 503)).toEqual([]);
  });
});
