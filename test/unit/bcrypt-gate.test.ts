/**
 * The bcrypt gate shares its queue fairly: a freed slot goes to the client address with the fewest
 * compares running, round-robin among equals; one address or one client ID may keep only `perKey` compares waiting, past which that key
 * alone is refused at once with 503 `temporarily_unavailable` + `Retry-After`; the global queue stays a
 * memory bound. Fake compares (no bcrypt, no sleeping), each finished by the test.
 */
import { describe, expect, it } from 'vitest';
import { BcryptGate, DEFAULT_BCRYPT_QUEUE_PER_KEY, type BcryptGateKeys } from '../../src/secrets/bcrypt-gate.js';
import { SecretChecksBusyError, toOAuthError } from '../../src/errors.js';

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Fake compares through one gate: each records its start and finishes only when the test says so. */
class FakeCompares {
  readonly started: string[] = [];
  readonly #finish = new Map<string, () => void>();
  constructor(readonly gate: BcryptGate) {}

  submit(label: string, keys: BcryptGateKeys): Promise<string> {
    return this.gate.run(
      () =>
        new Promise<string>((resolve) => {
          this.started.push(label);
          this.#finish.set(label, () => resolve(label));
        }),
      keys,
    );
  }

  async finish(label: string): Promise<void> {
    const finish = this.#finish.get(label);
    if (!finish) throw new Error(`${label} is not running`);
    this.#finish.delete(label);
    finish();
    await settle();
  }

  /** Finishes whatever runs, in start order, until nothing is left. */
  async drain(): Promise<void> {
    for (let i = 0; i < this.started.length; i++) if (this.#finish.has(this.started[i]!)) await this.finish(this.started[i]!);
  }
}

async function expectBusy(refused: Promise<unknown>): Promise<void> {
  const err = await refused.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SecretChecksBusyError);
  // As the token endpoint answers it.
  const answer = toOAuthError(err);
  expect(answer.status).toBe(503);
  expect(answer.code).toBe('temporarily_unavailable');
  expect(answer.headers['Retry-After']).toBe('1');
}

const from = (address: string, clientId?: string): BcryptGateKeys => ({ address, ...(clientId ? { clientId } : {}) });

describe('BcryptGate fairness', () => {
  it('serves waiting compares round-robin across addresses, in arrival order within one address', async () => {
    const fake = new FakeCompares(new BcryptGate({ concurrency: 1, queue: 100, perKey: 10 }));
    const all = [
      fake.submit('a0', from('203.0.113.1')),
      fake.submit('a1', from('203.0.113.1')),
      fake.submit('a2', from('203.0.113.1')),
      fake.submit('a3', from('203.0.113.1')),
      fake.submit('b1', from('198.51.100.2')),
      fake.submit('c1', from('198.51.100.3')),
      fake.submit('b2', from('198.51.100.2')),
    ];
    await settle();
    expect(fake.started).toEqual(['a0']);
    expect(fake.gate.queued).toBe(6);
    await fake.drain();
    // A flood's backlog (a1–a3) does not push b1 and c1 back: each address gets one turn in every round.
    expect(fake.started).toEqual(['a0', 'a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    expect(await Promise.all(all)).toEqual(['a0', 'a1', 'a2', 'a3', 'b1', 'c1', 'b2']);
    expect(fake.gate.running).toBe(0);
    expect(fake.gate.queued).toBe(0);
  });

  it("starts a newcomer's compare as soon as one slot frees, even while the flood holds every slot and a backlog", async () => {
    const fake = new FakeCompares(new BcryptGate({ concurrency: 2, queue: 100, perKey: 50 }));
    for (let i = 0; i < 40; i++) void fake.submit(`flood${i}`, from('203.0.113.1', `esa_flood${i}`));
    const first = fake.submit('legit', from('198.51.100.7', 'esa_legit'));
    await settle();
    expect(fake.started).toEqual(['flood0', 'flood1']);
    await fake.finish('flood0');
    // The flood still has a compare running, the newcomer none: the freed slot is the newcomer's.
    expect(fake.started).toEqual(['flood0', 'flood1', 'legit']);
    await fake.finish('flood1');
    expect(fake.started).toEqual(['flood0', 'flood1', 'legit', 'flood2']);
    await fake.finish('legit');
    expect(await first).toBe('legit');
    await fake.drain();
  });

  it('gives a freed slot to the address with the fewest compares running, round-robin among equals', async () => {
    const fake = new FakeCompares(new BcryptGate({ concurrency: 3, queue: 100, perKey: 50 }));
    const all = [
      fake.submit('a0', from('203.0.113.1')),
      fake.submit('a1', from('203.0.113.1')),
      fake.submit('b0', from('198.51.100.2')),
      fake.submit('a2', from('203.0.113.1')),
      fake.submit('b1', from('198.51.100.2')),
      fake.submit('c0', from('198.51.100.3')),
    ];
    await settle();
    expect(fake.started).toEqual(['a0', 'a1', 'b0']);
    // A runs two, B one, C none: C first, although A's turn comes before it.
    await fake.finish('a0');
    expect(fake.started.slice(3)).toEqual(['c0']);
    // A, B and C run one each; B's ends: B has none running, so B's next goes before A's.
    await fake.finish('b0');
    expect(fake.started.slice(4)).toEqual(['b1']);
    await fake.drain();
    expect(fake.started.slice(5)).toEqual(['a2']);
    await Promise.all(all);
  });

  it("refuses at once (503 + Retry-After) the compares past one address's share, while other addresses still queue", async () => {
    const fake = new FakeCompares(new BcryptGate({ concurrency: 1, queue: 100, perKey: 2 }));
    const admitted = [fake.submit('a0', from('203.0.113.1', 'esa_1')), fake.submit('a1', from('203.0.113.1', 'esa_2')), fake.submit('a2', from('203.0.113.1', 'esa_3'))];
    await settle();
    // a0 runs, a1 and a2 wait: the address's share is full, whatever client ID it presents.
    await expectBusy(fake.submit('a3', from('203.0.113.1', 'esa_4')));
    admitted.push(fake.submit('b1', from('198.51.100.2', 'esa_5')));
    await settle();
    expect(fake.gate.queued).toBe(3);
    // Once one of its compares has left the queue, the address may queue one again.
    await fake.finish('a0');
    admitted.push(fake.submit('a4', from('203.0.113.1', 'esa_6')));
    await fake.drain();
    expect(fake.started).toEqual(['a0', 'a1', 'b1', 'a2', 'a4']);
    expect(await Promise.all(admitted)).toEqual(['a0', 'a1', 'a2', 'b1', 'a4']);
  });

  it("refuses at once the compares past one client ID's share, from however many addresses", async () => {
    const fake = new FakeCompares(new BcryptGate({ concurrency: 1, queue: 100, perKey: 2 }));
    const admitted = [
      fake.submit('x0', from('203.0.113.1', 'esa_target')),
      fake.submit('x1', from('203.0.113.2', 'esa_target')),
      fake.submit('x2', from('203.0.113.3', 'esa_target')),
    ];
    await settle();
    await expectBusy(fake.submit('x3', from('203.0.113.4', 'esa_target')));
    // Another client ID from the same address is not affected.
    admitted.push(fake.submit('y1', from('203.0.113.4', 'esa_other')));
    await settle();
    expect(fake.gate.queued).toBe(3);
    // The client ID's share is freed as its compares start.
    await fake.finish('x0');
    admitted.push(fake.submit('x4', from('203.0.113.5', 'esa_target')));
    await fake.drain();
    expect(await Promise.all(admitted)).toEqual(['x0', 'x1', 'x2', 'y1', 'x4']);
  });

  it('keeps the global queue as a memory bound: past it, a key no heavier than the others is refused', async () => {
    const fake = new FakeCompares(new BcryptGate({ concurrency: 1, queue: 3, perKey: 10 }));
    const admitted = ['1', '2', '3', '4'].map((n) => fake.submit(`k${n}`, from(`198.51.100.${n}`, `esa_${n}`)));
    await settle();
    expect(fake.gate.running).toBe(1);
    expect(fake.gate.queued).toBe(3);
    await expectBusy(fake.submit('k5', from('198.51.100.5', 'esa_5')));
    await fake.drain();
    expect(await Promise.all(admitted)).toEqual(['k1', 'k2', 'k3', 'k4']);
  });

  it('without an address, takes turns by client ID', async () => {
    const fake = new FakeCompares(new BcryptGate({ concurrency: 1, queue: 100, perKey: 10 }));
    const all = [fake.submit('p0', { clientId: 'esa_p' }), fake.submit('p1', { clientId: 'esa_p' }), fake.submit('p2', { clientId: 'esa_p' }), fake.submit('q1', { clientId: 'esa_q' })];
    await fake.drain();
    expect(fake.started).toEqual(['p0', 'p1', 'q1', 'p2']);
    await Promise.all(all);
  });

  it('lets each key keep 16 compares waiting by default: above the failure limiter default of 10', () => {
    expect(DEFAULT_BCRYPT_QUEUE_PER_KEY).toBe(16);
  });
});

describe('BcryptGate under a flood that fills the queue (docs/security.md, "Fair shares under a flood")', () => {
  const known = (address: string, clientId: string): BcryptGateKeys => ({ address, clientId, known: true });

  it('starts compares for existing accounts before any compare for an unknown client ID', async () => {
    const fake = new FakeCompares(new BcryptGate({ concurrency: 1, queue: 100, perKey: 10 }));
    const all = [
      fake.submit('flood0', from('203.0.113.1', 'esa_f0')),
      fake.submit('flood1', from('203.0.113.2', 'esa_f1')),
      fake.submit('flood2', from('203.0.113.3', 'esa_f2')),
      fake.submit('legit', known('198.51.100.7', 'esa_legit')),
    ];
    await fake.drain();
    expect(fake.started).toEqual(['flood0', 'legit', 'flood1', 'flood2']);
    await Promise.all(all);
  });

  it('gives an existing account the place of the newest compare of the address holding most places, which gets 503', async () => {
    const fake = new FakeCompares(new BcryptGate({ concurrency: 1, queue: 3, perKey: 10 }));
    const a = [fake.submit('a0', from('203.0.113.1', 'esa_a0')), fake.submit('a1', from('203.0.113.1', 'esa_a1')), fake.submit('a2', from('203.0.113.1', 'esa_a2'))];
    const b = fake.submit('b1', from('203.0.113.2', 'esa_b1'));
    await settle();
    expect(fake.gate.queued).toBe(3);
    const legit = fake.submit('legit', known('198.51.100.7', 'esa_legit'));
    await expectBusy(a[2]!);
    expect(fake.gate.queued).toBe(3);
    await fake.drain();
    expect(fake.started).toEqual(['a0', 'legit', 'a1', 'b1']);
    expect(await Promise.all([a[0], a[1], b, legit])).toEqual(['a0', 'a1', 'b1', 'legit']);
  });

  it('gives a newcomer the place of an address holding at least two more places than it', async () => {
    const fake = new FakeCompares(new BcryptGate({ concurrency: 1, queue: 3, perKey: 10 }));
    const a = ['a0', 'a1', 'a2', 'a3'].map((label, i) => fake.submit(label, from('203.0.113.1', `esa_${i}`)));
    await settle();
    const newcomer = fake.submit('n1', from('198.51.100.9', 'esa_n1'));
    await expectBusy(a[3]!);
    await fake.drain();
    expect(fake.started).toEqual(['a0', 'a1', 'n1', 'a2']);
    expect(await newcomer).toBe('n1');
  });

  it('does not refuse early (before the store read) while a compare for an existing account could take a place', async () => {
    const gate = new BcryptGate({ concurrency: 1, queue: 2, perKey: 10 });
    const fake = new FakeCompares(gate);
    const flood = ['f0', 'f1', 'f2'].map((label, i) => fake.submit(label, from(`203.0.113.${i + 1}`, `esa_${label}`)));
    await settle();
    expect(gate.queued).toBe(2);
    expect(gate.refusal(from('198.51.100.7', 'esa_legit'))).toBeUndefined();
    // Once it is known not to exist, it has no place to take: the addresses hold one each.
    await expectBusy(fake.submit('unknown', from('198.51.100.8', 'esa_unknown')));
    await fake.drain();
    await Promise.all(flood);
  });

  it('refuses early when the queue is full of compares for existing accounts and no address holds two more places', async () => {
    const gate = new BcryptGate({ concurrency: 1, queue: 2, perKey: 10 });
    const fake = new FakeCompares(gate);
    const all = ['k0', 'k1', 'k2'].map((label, i) => fake.submit(label, known(`198.51.100.${i + 1}`, `esa_${label}`)));
    await settle();
    expect(gate.refusal(from('198.51.100.9', 'esa_other'))).toBeInstanceOf(SecretChecksBusyError);
    await fake.drain();
    await Promise.all(all);
  });
});
