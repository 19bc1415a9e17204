/**
 * SecretVerifier: a failure or an unknown client costs exactly one bcrypt compare (docs/security.md,
 * "Timing equalisation"), through the bcrypt gate, which refuses with 503 when full ("Bounded bcrypt
 * work"). Remembered secrets are test/unit/remembered-secrets.test.ts. bcrypt runs at the lowest cost the options accept (4 rounds).
 * Where time matters, the `performance` clock is held still by a spy and moved by hand: no sleeping.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SecretChecksBusyError, toOAuthError } from '../../src/errors.js';
import type { Telemetry } from '../../src/observability/telemetry.js';
import { hashSecret, SecretVerifier, type SecretVerifierOptions } from '../../src/secrets/secret-verifier.js';

/** Lets a test decide what bcrypt's compare answers (`undefined`: the real compare). */
const bcrypt = vi.hoisted(() => ({ says: undefined as boolean | undefined }));
vi.mock('bcrypt', async (importOriginal) => {
  const real = await importOriginal<typeof import('bcrypt') & { default: typeof import('bcrypt') }>();
  const compare = async (data: string | Buffer, encrypted: string): Promise<boolean> => bcrypt.says ?? real.default.compare(data, encrypted);
  return { ...real, compare, default: { ...real.default, compare } };
});

const ROUNDS = 4; // the smallest secretHashRounds the options accept

/** Counts the compares bcrypt actually ran (each one records its duration). */
class CountingTelemetry implements Pick<Telemetry, 'secretVerified' | 'secretQueueWait'> {
  compares = 0;
  queueWaits = 0;
  secretVerified(): void {
    this.compares++;
  }
  secretQueueWait(): void {
    this.queueWaits++;
  }
}

function setUp(options: Partial<SecretVerifierOptions> = {}) {
  const telemetry = new CountingTelemetry();
  const verifier = new SecretVerifier({ rounds: ROUNDS, telemetry, ...options });
  return { verifier, telemetry };
}

const hashOf = (value: string): Promise<string> => hashSecret(value, ROUNDS);

afterEach(() => {
  vi.restoreAllMocks();
  bcrypt.says = undefined;
});

describe('SecretVerifier: verify', () => {
  it('accepts the secret behind a hash and refuses any other value', async () => {
    const { verifier } = setUp();
    const hash = await hashOf('right-secret');
    expect(await verifier.verify('right-secret', hash)).toBe(true);
    expect(await verifier.verify('wrong-secret', hash)).toBe(false);
    expect(await verifier.verify('right-secret', hash)).toBe(true);
  });

  // bcrypt reads only 72 bytes and stops at a NUL byte: the secret hash must see all of the secret.
  it('tells apart secrets that share their first 72 bytes, or differ only after a NUL byte', async () => {
    const { verifier } = setUp();
    const long = 'x'.repeat(72);
    const hash = await hashOf(`${long}-right`);
    expect(await verifier.verify(`${long}-right`, hash)).toBe(true);
    expect(await verifier.verify(`${long}-wrong`, hash)).toBe(false);
    const withNul = await hashOf('abc\u0000right');
    expect(await verifier.verify('abc\u0000right', withNul)).toBe(true);
    expect(await verifier.verify('abc\u0000wrong', withNul)).toBe(false);
    expect(await verifier.verify('abc', withNul)).toBe(false);
  });

  it('refuses against a malformed hash (a store error is not a match)', async () => {
    const { verifier } = setUp();
    expect(await verifier.verify('anything', 'not-a-bcrypt-hash')).toBe(false);
  });

  // Docs (security.md): an unknown client costs the same as a wrong secret: one compare against a
  // dummy hash made at the configured cost.
  it('without a hash (unknown client, no such secret), runs one compare against the dummy hash and refuses', async () => {
    const { verifier, telemetry } = setUp();
    expect(await verifier.verify('any-secret', undefined)).toBe(false);
    expect(telemetry.compares).toBe(1);
    expect(await verifier.verify('any-secret', undefined)).toBe(false);
    expect(telemetry.compares).toBe(2);
  });

  it('without a hash, refuses even if the compare against the dummy hash succeeded', async () => {
    const { verifier } = setUp();
    bcrypt.says = true; // as if the presented value were the dummy hash's random value
    expect(await verifier.verify('any-secret', undefined)).toBe(false);
    bcrypt.says = undefined;
    expect(await verifier.verify('any-secret', undefined)).toBe(false);
  });

  it('makes the dummy hash once, at the configured cost', async () => {
    const { verifier } = setUp();
    const first = await verifier.dummyHash();
    expect(first).toMatch(/^\$2[aby]\$04\$/);
    expect(await verifier.dummyHash()).toBe(first);
    await expect(setUp({ rounds: 5 }).verifier.dummyHash()).resolves.toMatch(/^\$2[aby]\$05\$/);
  });

  it('a wrong secret costs one compare, like a right one the first time', async () => {
    const { verifier, telemetry } = setUp();
    const hash = await hashOf('right-secret');
    await verifier.verify('wrong-secret', hash);
    expect(telemetry.compares).toBe(1);
    await verifier.verify('right-secret', hash);
    expect(telemetry.compares).toBe(2);
    expect(telemetry.queueWaits).toBe(2);
  });
});

describe('SecretVerifier: the bcrypt gate', () => {
  /** A verifier whose one bcrypt slot is taken and whose queue holds nothing: the gate is full. */
  async function full(options: Partial<SecretVerifierOptions> = {}) {
    const set = setUp({ gate: { concurrency: 1, queue: 0 }, ...options });
    const hash = await hashOf('right-secret');
    await set.verifier.dummyHash(); // made at start-up, as the library does
    const running = set.verifier.verify('right-secret', hash); // takes the slot at once
    return { ...set, hash, running };
  }

  it('reports its load: compares running and waiting, and the queue limit', async () => {
    const { verifier } = setUp({ gate: { concurrency: 1, queue: 7 } });
    const hash = await hashOf('right-secret');
    expect(verifier.load).toEqual({ running: 0, queued: 0, queueLimit: 7 });
    const first = verifier.verify('right-secret', hash);
    const second = verifier.verify('right-secret', hash);
    expect(verifier.load).toEqual({ running: 1, queued: 1, queueLimit: 7 });
    await Promise.all([first, second]);
    expect(verifier.load).toEqual({ running: 0, queued: 0, queueLimit: 7 });
  });

  it('when full, refuses a check with 503 temporarily_unavailable and Retry-After, when no place can be taken', async () => {
    const { verifier, hash, running } = await full();
    const refusal = verifier.refusal({ address: '203.0.113.7', clientId: 'esa_any' });
    expect(refusal).toBeInstanceOf(SecretChecksBusyError);
    expect(toOAuthError(refusal)).toMatchObject({ status: 503, code: 'temporarily_unavailable', headers: { 'Retry-After': '1' } });
    await expect(verifier.verify('wrong-secret', undefined)).rejects.toBeInstanceOf(SecretChecksBusyError);
    await expect(verifier.verify('wrong-secret', hash)).rejects.toBeInstanceOf(SecretChecksBusyError);
    expect(await running).toBe(true);
    expect(verifier.refusal({ address: '203.0.113.7', clientId: 'esa_any' })).toBeUndefined();
  });

  it('tells onSaturated of refusals at most once every 10 seconds', async () => {
    let now = 1_000_000; // whole milliseconds: with a fraction, (t + ms) - t need not be ms exactly
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const saturated: number[] = [];
    const { verifier, hash, running } = await full({ onSaturated: (queued) => saturated.push(queued) });
    await expect(verifier.verify('wrong-secret', hash)).rejects.toThrow(SecretChecksBusyError);
    expect(saturated).toEqual([0]); // queued: the queue holds 0
    expect(verifier.refusal({})).toBeDefined();
    expect(saturated).toHaveLength(1);
    now += 9_999;
    expect(verifier.refusal({})).toBeDefined();
    expect(saturated).toHaveLength(1);
    now += 1;
    expect(verifier.refusal({})).toBeDefined();
    expect(saturated).toHaveLength(2);
    await running;
  });
});
